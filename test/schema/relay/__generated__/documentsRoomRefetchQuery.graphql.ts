/**
 * @generated SignedSource<<bd1e77a5a0b89b5bc649af7508b594bd>>
 * @lightSyntaxTransform
 */

/* tslint:disable */
/* eslint-disable */
// @ts-nocheck

import { ConcreteRequest } from 'relay-runtime';
import { FragmentRefs } from "relay-runtime";
export type documentsRoomRefetchQuery$variables = {
  id: string;
};
export type documentsRoomRefetchQuery$data = {
  readonly node: {
    readonly " $fragmentSpreads": FragmentRefs<"documentsRoom">;
  } | null | undefined;
};
export type documentsRoomRefetchQuery = {
  response: documentsRoomRefetchQuery$data;
  variables: documentsRoomRefetchQuery$variables;
};

const node: ConcreteRequest = (function(){
var v0 = [
  {
    "defaultValue": null,
    "kind": "LocalArgument",
    "name": "id"
  }
],
v1 = [
  {
    "kind": "Variable",
    "name": "id",
    "variableName": "id"
  }
];
return {
  "fragment": {
    "argumentDefinitions": (v0/*:: as any*/),
    "kind": "Fragment",
    "metadata": null,
    "name": "documentsRoomRefetchQuery",
    "selections": [
      {
        "alias": null,
        "args": (v1/*:: as any*/),
        "concreteType": null,
        "kind": "LinkedField",
        "name": "node",
        "plural": false,
        "selections": [
          {
            "args": null,
            "kind": "FragmentSpread",
            "name": "documentsRoom"
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
    "name": "documentsRoomRefetchQuery",
    "selections": [
      {
        "alias": null,
        "args": (v1/*:: as any*/),
        "concreteType": null,
        "kind": "LinkedField",
        "name": "node",
        "plural": false,
        "selections": [
          {
            "alias": null,
            "args": null,
            "kind": "ScalarField",
            "name": "__typename",
            "storageKey": null
          },
          {
            "alias": null,
            "args": null,
            "kind": "ScalarField",
            "name": "id",
            "storageKey": null
          },
          {
            "kind": "InlineFragment",
            "selections": [
              {
                "alias": null,
                "args": null,
                "kind": "ScalarField",
                "name": "name",
                "storageKey": null
              },
              {
                "alias": null,
                "args": null,
                "kind": "ScalarField",
                "name": "participantCount",
                "storageKey": null
              }
            ],
            "type": "Room",
            "abstractKey": null
          }
        ],
        "storageKey": null
      }
    ]
  },
  "params": {
    "cacheID": "9565a913d167fc4c2e62d59f8352c2c5",
    "id": null,
    "metadata": {},
    "name": "documentsRoomRefetchQuery",
    "operationKind": "query",
    "text": "query documentsRoomRefetchQuery(\n  $id: ID!\n) {\n  node(id: $id) {\n    __typename\n    ...documentsRoom\n    id\n  }\n}\n\nfragment documentsRoom on Room {\n  id\n  name\n  participantCount\n}\n"
  }
};
})();

(node as any).hash = "5aef623a7d800b73ff92dc977ee24bba";

export default node;
