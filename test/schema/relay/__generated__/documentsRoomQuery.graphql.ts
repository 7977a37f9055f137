/**
 * @generated SignedSource<<eecb37578212747208d96789d5537518>>
 * @lightSyntaxTransform
 */

/* tslint:disable */
/* eslint-disable */
// @ts-nocheck

import { ConcreteRequest } from 'relay-runtime';
import { FragmentRefs } from "relay-runtime";
export type documentsRoomQuery$variables = {
  roomName: string;
};
export type documentsRoomQuery$data = {
  readonly room: {
    readonly " $fragmentSpreads": FragmentRefs<"documentsRoom">;
  } | null | undefined;
};
export type documentsRoomQuery = {
  response: documentsRoomQuery$data;
  variables: documentsRoomQuery$variables;
};

const node: ConcreteRequest = (function(){
var v0 = [
  {
    "defaultValue": null,
    "kind": "LocalArgument",
    "name": "roomName"
  }
],
v1 = [
  {
    "kind": "Variable",
    "name": "roomName",
    "variableName": "roomName"
  }
];
return {
  "fragment": {
    "argumentDefinitions": (v0/*:: as any*/),
    "kind": "Fragment",
    "metadata": null,
    "name": "documentsRoomQuery",
    "selections": [
      {
        "alias": null,
        "args": (v1/*:: as any*/),
        "concreteType": "Room",
        "kind": "LinkedField",
        "name": "room",
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
    "name": "documentsRoomQuery",
    "selections": [
      {
        "alias": null,
        "args": (v1/*:: as any*/),
        "concreteType": "Room",
        "kind": "LinkedField",
        "name": "room",
        "plural": false,
        "selections": [
          {
            "alias": null,
            "args": null,
            "kind": "ScalarField",
            "name": "id",
            "storageKey": null
          },
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
        "storageKey": null
      }
    ]
  },
  "params": {
    "cacheID": "e4ce970600b413d362849d7c45dd2ef7",
    "id": null,
    "metadata": {},
    "name": "documentsRoomQuery",
    "operationKind": "query",
    "text": "query documentsRoomQuery(\n  $roomName: String!\n) {\n  room(roomName: $roomName) {\n    ...documentsRoom\n    id\n  }\n}\n\nfragment documentsRoom on Room {\n  id\n  name\n  participantCount\n}\n"
  }
};
})();

(node as any).hash = "974f236361583f7baa7327cd5b25a063";

export default node;
