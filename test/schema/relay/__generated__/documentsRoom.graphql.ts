/**
 * @generated SignedSource<<4e7e633f1e03a3fb89501890f2b9ce0b>>
 * @lightSyntaxTransform
 */

/* tslint:disable */
/* eslint-disable */
// @ts-nocheck

import { ReaderFragment } from 'relay-runtime';
import { FragmentRefs } from "relay-runtime";
export type documentsRoom$data = {
  readonly id: string;
  readonly name: string;
  readonly participantCount: number;
  readonly " $fragmentType": "documentsRoom";
};
export type documentsRoom$key = {
  readonly " $data"?: documentsRoom$data;
  readonly " $fragmentSpreads": FragmentRefs<"documentsRoom">;
};

import documentsRoomRefetchQuery_graphql from './documentsRoomRefetchQuery.graphql';

const node: ReaderFragment = {
  "argumentDefinitions": [],
  "kind": "Fragment",
  "metadata": {
    "refetch": {
      "connection": null,
      "fragmentPathInResult": [
        "node"
      ],
      "operation": documentsRoomRefetchQuery_graphql,
      "identifierInfo": {
        "identifierField": "id",
        "identifierQueryVariableName": "id"
      }
    }
  },
  "name": "documentsRoom",
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
  "type": "Room",
  "abstractKey": null
};

(node as any).hash = "5aef623a7d800b73ff92dc977ee24bba";

export default node;
