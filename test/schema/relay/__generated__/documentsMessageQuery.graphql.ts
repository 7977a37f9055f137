/**
 * @generated SignedSource<<1387cfd4c455c5b8d6a878da8cb0b54b>>
 * @lightSyntaxTransform
 */

/* tslint:disable */
/* eslint-disable */
// @ts-nocheck

import { ConcreteRequest } from 'relay-runtime';
import { FragmentRefs } from "relay-runtime";
export type documentsMessageQuery$variables = {
  messageId: string;
};
export type documentsMessageQuery$data = {
  readonly message: {
    readonly " $fragmentSpreads": FragmentRefs<"documentsMessage">;
  } | null | undefined;
};
export type documentsMessageQuery = {
  response: documentsMessageQuery$data;
  variables: documentsMessageQuery$variables;
};

const node: ConcreteRequest = (function(){
var v0 = [
  {
    "defaultValue": null,
    "kind": "LocalArgument",
    "name": "messageId"
  }
],
v1 = [
  {
    "kind": "Variable",
    "name": "messageId",
    "variableName": "messageId"
  }
],
v2 = {
  "alias": null,
  "args": null,
  "kind": "ScalarField",
  "name": "id",
  "storageKey": null
};
return {
  "fragment": {
    "argumentDefinitions": (v0/*:: as any*/),
    "kind": "Fragment",
    "metadata": null,
    "name": "documentsMessageQuery",
    "selections": [
      {
        "alias": null,
        "args": (v1/*:: as any*/),
        "concreteType": "Message",
        "kind": "LinkedField",
        "name": "message",
        "plural": false,
        "selections": [
          {
            "args": null,
            "kind": "FragmentSpread",
            "name": "documentsMessage"
          }
        ],
        "storageKey": null
      }
    ],
    "type": "Query",
    "abstractKey": null
  },
  "kind": "Request",
  "operation": {
    "argumentDefinitions": (v0/*:: as any*/),
    "kind": "Operation",
    "name": "documentsMessageQuery",
    "selections": [
      {
        "alias": null,
        "args": (v1/*:: as any*/),
        "concreteType": "Message",
        "kind": "LinkedField",
        "name": "message",
        "plural": false,
        "selections": [
          (v2/*:: as any*/),
          {
            "alias": null,
            "args": null,
            "kind": "ScalarField",
            "name": "content",
            "storageKey": null
          },
          {
            "alias": null,
            "args": null,
            "kind": "ScalarField",
            "name": "version",
            "storageKey": null
          },
          {
            "alias": null,
            "args": null,
            "concreteType": "User",
            "kind": "LinkedField",
            "name": "author",
            "plural": false,
            "selections": [
              {
                "alias": null,
                "args": null,
                "kind": "ScalarField",
                "name": "login",
                "storageKey": null
              },
              (v2/*:: as any*/)
            ],
            "storageKey": null
          }
        ],
        "storageKey": null
      }
    ]
  },
  "params": {
    "cacheID": "47f728c9e47a694098ccdd4124fa2b04",
    "id": null,
    "metadata": {},
    "name": "documentsMessageQuery",
    "operationKind": "query",
    "text": "query documentsMessageQuery(\n  $messageId: ID!\n) {\n  message(messageId: $messageId) {\n    ...documentsMessage\n    id\n  }\n}\n\nfragment documentsMessage on Message {\n  id\n  content\n  version\n  author {\n    login\n    id\n  }\n}\n"
  }
};
})();

(node as any).hash = "f48657cee0ff885488b20f0d6b7dadfb";

export default node;
