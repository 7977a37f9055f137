/* eslint-disable */
import * as types from './graphql.js';
import type { TypedDocumentNode as DocumentNode } from '@graphql-typed-document-node/core';

/**
 * Map of all GraphQL operations in the project.
 *
 * This map has several performance disadvantages:
 * 1. It is not tree-shakeable, so it will include all operations in the project.
 * 2. It is not minifiable, so the string of a GraphQL query will be multiple times inside the bundle.
 * 3. It does not support dead code elimination, so it will add unused operations.
 *
 * Therefore it is highly recommended to use the babel or swc plugin for production.
 * Learn more about it here: https://the-guild.dev/graphql/codegen/plugins/presets/preset-client#reducing-bundle-size
 */
type Documents = {
    "fragment UserFields on User {\n  login\n  firstname\n  lastname\n  displayName\n  email\n  bio\n  createdAt\n}\n\nmutation Register($input: RegisterInput!) {\n  register(input: $input) {\n    token\n    user {\n      ...UserFields\n    }\n  }\n}\n\nmutation Login($login: String!, $password: String!) {\n  login(login: $login, password: $password) {\n    token\n    user {\n      ...UserFields\n    }\n  }\n}\n\nmutation Logout {\n  logout\n}\n\nquery Me {\n  me {\n    ...UserFields\n  }\n}\n\nquery UserByLogin($login: String!) {\n  user(login: $login) {\n    ...UserFields\n  }\n}\n\nmutation UpdateProfile($input: UpdateProfileInput!) {\n  updateProfile(input: $input) {\n    ...UserFields\n  }\n}\n\nsubscription ProfileUpdated($login: String!) {\n  profileUpdated(login: $login) {\n    login\n    firstname\n    lastname\n  }\n}": typeof types.UserFieldsFragmentDoc,
};
const documents: Documents = {
    "fragment UserFields on User {\n  login\n  firstname\n  lastname\n  displayName\n  email\n  bio\n  createdAt\n}\n\nmutation Register($input: RegisterInput!) {\n  register(input: $input) {\n    token\n    user {\n      ...UserFields\n    }\n  }\n}\n\nmutation Login($login: String!, $password: String!) {\n  login(login: $login, password: $password) {\n    token\n    user {\n      ...UserFields\n    }\n  }\n}\n\nmutation Logout {\n  logout\n}\n\nquery Me {\n  me {\n    ...UserFields\n  }\n}\n\nquery UserByLogin($login: String!) {\n  user(login: $login) {\n    ...UserFields\n  }\n}\n\nmutation UpdateProfile($input: UpdateProfileInput!) {\n  updateProfile(input: $input) {\n    ...UserFields\n  }\n}\n\nsubscription ProfileUpdated($login: String!) {\n  profileUpdated(login: $login) {\n    login\n    firstname\n    lastname\n  }\n}": types.UserFieldsFragmentDoc,
};

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 *
 *
 * @example
 * ```ts
 * const query = graphql(`query GetUser($id: ID!) { user(id: $id) { name } }`);
 * ```
 *
 * The query argument is unknown!
 * Please regenerate the types.
 */
export function graphql(source: string): unknown;

/**
 * The graphql function is used to parse GraphQL queries into a document that can be used by GraphQL clients.
 */
export function graphql(source: "fragment UserFields on User {\n  login\n  firstname\n  lastname\n  displayName\n  email\n  bio\n  createdAt\n}\n\nmutation Register($input: RegisterInput!) {\n  register(input: $input) {\n    token\n    user {\n      ...UserFields\n    }\n  }\n}\n\nmutation Login($login: String!, $password: String!) {\n  login(login: $login, password: $password) {\n    token\n    user {\n      ...UserFields\n    }\n  }\n}\n\nmutation Logout {\n  logout\n}\n\nquery Me {\n  me {\n    ...UserFields\n  }\n}\n\nquery UserByLogin($login: String!) {\n  user(login: $login) {\n    ...UserFields\n  }\n}\n\nmutation UpdateProfile($input: UpdateProfileInput!) {\n  updateProfile(input: $input) {\n    ...UserFields\n  }\n}\n\nsubscription ProfileUpdated($login: String!) {\n  profileUpdated(login: $login) {\n    login\n    firstname\n    lastname\n  }\n}"): (typeof documents)["fragment UserFields on User {\n  login\n  firstname\n  lastname\n  displayName\n  email\n  bio\n  createdAt\n}\n\nmutation Register($input: RegisterInput!) {\n  register(input: $input) {\n    token\n    user {\n      ...UserFields\n    }\n  }\n}\n\nmutation Login($login: String!, $password: String!) {\n  login(login: $login, password: $password) {\n    token\n    user {\n      ...UserFields\n    }\n  }\n}\n\nmutation Logout {\n  logout\n}\n\nquery Me {\n  me {\n    ...UserFields\n  }\n}\n\nquery UserByLogin($login: String!) {\n  user(login: $login) {\n    ...UserFields\n  }\n}\n\nmutation UpdateProfile($input: UpdateProfileInput!) {\n  updateProfile(input: $input) {\n    ...UserFields\n  }\n}\n\nsubscription ProfileUpdated($login: String!) {\n  profileUpdated(login: $login) {\n    login\n    firstname\n    lastname\n  }\n}"];

export function graphql(source: string) {
  return (documents as any)[source] ?? {};
}

export type DocumentType<TDocumentNode extends DocumentNode<any, any>> = TDocumentNode extends DocumentNode<  infer TType,  any>  ? TType  : never;