/**
 * Votes racing the deletion of their poll, or of its room, on two instances
 * against the real node: a vote that read the poll before the deletion may
 * write after the deletion dropped the votes; whichever of the two comes
 * second must drop that row. Many voters vote again and again while the
 * deletion runs, and one vote's write is held from before the deletion until
 * it is done, so at least one always lands after it. At the end, no vote row
 * of the deleted poll is left.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import { DeleteMessageDocument, DeleteRoomDocument, JoinRoomDocument, PostPollDocument, VotePollDocument } from '../../generated/graphql.js';
import { startApp } from '../../testkit/app.js';
import { codes, gql, gqlOk } from '../../testkit/http.js';
import { cqlRows } from '../../testkit/cql.js';
import { messageKey, roomWith } from '../../testkit/data/rooms.js';
import { signUp, signUpMany, type TestUser } from '../../testkit/data/users.js';
import { onNextStatement } from '../../testkit/faults/statement-faults.js';

let a: App;
let b: App;
let owner: TestUser;
let voters: TestUser[];

beforeAll(async () => {
  [a, b] = await Promise.all([startApp({ redis: true }), startApp({ redis: true })]);
  owner = await signUp(a);
  voters = await signUpMany(a, 30, 'racer');
});

/** A room of the owner and every voter, with a poll of four answers in it. */
async function pollInRoom(): Promise<{ room: string; pollId: string }> {
  const room = await roomWith(a, owner);
  for (let i = 0; i < voters.length; i += 10) {
    await Promise.all(voters.slice(i, i + 10).map((v) => gqlOk(a, JoinRoomDocument, { roomName: room }, v.token)));
  }
  const pollId = (await gqlOk(a, PostPollDocument, { input: { roomName: room, question: 'Which?', answers: ['A', 'B', 'C', 'D'] } }, owner.token)).postPoll.id;
  return { room, pollId };
}

const voteRows = async (room: string, pollId: string) =>
  (await cqlRows(a, 'SELECT voter FROM poll_votes WHERE room_name = ? AND message_id = ?', [room, messageKey(pollId).messageId])).length;

/**
 * Every voter votes, on both instances, again and again until told NOT_FOUND (at most 40 times each); the first
 * vote written on `a` is held until `deletion` (started then, once that vote has read the poll) is done. Returns
 * the codes the votes got.
 */
async function voteThrough(pollId: string, deletion: () => Promise<unknown>): Promise<string[]> {
  const held = onNextStatement(a, /INSERT INTO poll_votes/, async () => {
    await deletion();
  });
  const got: string[] = [];
  await Promise.all(
    voters.map(async (voter, i) => {
      for (let round = 0; round < 40; round++) {
        const result = await gql(i % 2 ? b : a, VotePollDocument, { messageId: pollId, answers: [(i + round) % 4] }, voter.token);
        const refused = codes(result).map(String);
        got.push(...refused);
        if (refused.includes('NOT_FOUND')) return;
      }
    }),
  );
  expect(held.fired()).toBe(true);
  return got;
}

describe('votes racing a deletion', () => {
  it("leave no vote row of a poll deleted while 30 people vote on two instances", async () => {
    const { room, pollId } = await pollInRoom();
    const got = await voteThrough(pollId, () => gqlOk(a, DeleteMessageDocument, { messageId: pollId }, owner.token));
    // Every voter was told, in the end, that the poll is gone; nothing else went wrong.
    expect(got.filter((code) => code !== 'NOT_FOUND')).toEqual([]);
    expect(got).toHaveLength(voters.length);
    expect(await voteRows(room, pollId)).toBe(0);
  });

  it("leave no vote row of a poll whose room is deleted while 30 people vote on two instances", async () => {
    const { room, pollId } = await pollInRoom();
    const got = await voteThrough(pollId, () => gqlOk(a, DeleteRoomDocument, { roomName: room }, owner.token));
    expect(got.filter((code) => code !== 'NOT_FOUND')).toEqual([]);
    expect(got).toHaveLength(voters.length);
    expect(await voteRows(room, pollId)).toBe(0);
  });
});
