/**
 * Polls in rooms, over HTTP and graphql-ws against the real node: posting,
 * voting and changing votes (exact under 200 concurrent voters), closing at
 * the closing time, and PollUpdated across two instances.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import type { App } from '../../../src/app.js';
import { DeleteMessageDocument, HideMessageDocument, JoinRoomDocument, PollEventsDocument, PollOfDocument, PostPollDocument, RetractVoteDocument, VotePollDocument } from '../../generated/graphql.js';
import { ManualClock, startApp, stopApp } from '../../testkit/app.js';
import { codes, gql, gqlOk } from '../../testkit/http.js';
import { roomFeed } from '../../testkit/feeds.js';
import { messageKey, roomWith } from '../../testkit/data/rooms.js';
import { cqlRows } from '../../testkit/cql.js';
import { signUp, signUpMany, type TestUser } from '../../testkit/data/users.js';

let a: App;
let b: App;
let owner: TestUser;

beforeAll(async () => {
  [a, b] = await Promise.all([startApp({ redis: true }), startApp({ redis: true })]);
  owner = await signUp(a);
});

const poll = (app: App, user: TestUser, roomName: string, answers = ['Tea', 'Coffee', 'Water'], extra: { multipleChoice?: boolean; closesAt?: string } = {}) =>
  gql(app, PostPollDocument, { input: { roomName, question: 'What to drink?', answers, ...extra } }, user.token);
const vote = (app: App, user: TestUser, messageId: string, answers: number[]) => gql(app, VotePollDocument, { messageId, answers }, user.token);
const fieldOf = (r: { errors?: ReadonlyArray<{ extensions?: Record<string, unknown> }> }) => r.errors?.[0]?.extensions?.field;

describe('polls', () => {
  it('posts a poll as a message, counts votes and changes of vote exactly, and shows each voter their own', async () => {
    const [x, y] = await signUpMany(a, 2, 'poll');
    const room = await roomWith(a, owner, [x!, y!]);
    const posted = (await poll(a, owner, room)).data!.postPoll;
    expect(posted).toMatchObject({ content: 'What to drink?', poll: { question: 'What to drink?', multipleChoice: false, closed: false, voterCount: 0, myAnswers: [] } });
    expect(posted.poll!.answers).toEqual([
      { index: 0, text: 'Tea', votes: 0 },
      { index: 1, text: 'Coffee', votes: 0 },
      { index: 2, text: 'Water', votes: 0 },
    ]);
    expect((await vote(a, x!, posted.id, [1])).data!.votePoll).toMatchObject({ voterCount: 1, myAnswers: [1] });
    await vote(b, y!, posted.id, [1]);
    // x changes their mind: still one vote each.
    const changed = (await vote(b, x!, posted.id, [2])).data!.votePoll;
    expect(changed.answers.map((ans) => ans.votes)).toEqual([0, 1, 1]);
    expect(changed.voterCount).toBe(2);
    const retracted = (await gqlOk(a, RetractVoteDocument, { messageId: posted.id }, y!.token)).retractVote;
    expect(retracted).toMatchObject({ voterCount: 1, myAnswers: [] });
    expect((await gqlOk(a, PollOfDocument, { messageId: posted.id }, owner.token)).message!.poll!.answers.map((ans) => ans.votes)).toEqual([0, 0, 1]);
  });

  it('refuses bad polls and bad votes with a stable code and the field', async () => {
    const [x, outsider] = await signUpMany(a, 2, 'pollbad');
    const room = await roomWith(a, owner, [x!]);
    expect(fieldOf(await poll(a, owner, room, ['Only one']))).toBe('answers');
    expect(fieldOf(await poll(a, owner, room, Array.from({ length: 11 }, (_, i) => `a${i}`)))).toBe('answers');
    expect(fieldOf(await poll(a, owner, room, ['Same', 'same']))).toBe('answers');
    expect(fieldOf(await poll(a, owner, room, ['Yes', '']))).toBe('answers.1');
    expect(fieldOf(await poll(a, owner, room, ['Yes', 'No'], { closesAt: new Date(Date.now() - 1000).toISOString() }))).toBe('closesAt');
    expect(fieldOf(await poll(a, owner, room, ['Yes', 'No'], { closesAt: new Date(Date.now() + 40 * 86_400_000).toISOString() }))).toBe('closesAt');
    expect(codes(await poll(a, outsider!, room))).toEqual(['FORBIDDEN']);

    const single = (await poll(a, owner, room)).data!.postPoll;
    expect(fieldOf(await vote(a, x!, single.id, [0, 1]))).toBe('answers');
    expect(fieldOf(await vote(a, x!, single.id, [3]))).toBe('answers');
    expect(fieldOf(await vote(a, x!, single.id, []))).toBe('answers');
    expect(codes(await vote(a, outsider!, single.id, [0]))).toEqual(['FORBIDDEN']);
    const multi = (await poll(a, owner, room, ['A', 'B', 'C'], { multipleChoice: true })).data!.postPoll;
    expect((await vote(a, x!, multi.id, [2, 0, 2])).data!.votePoll).toMatchObject({ myAnswers: [0, 2], voterCount: 1 });
  });

  it('ends with exact counts when 200 voters vote at once and 50 of them change their vote at once', async () => {
    const voters = await signUpMany(a, 200, 'voter');
    const room = await roomWith(a, owner);
    for (let i = 0; i < voters.length; i += 10) {
      await Promise.all(voters.slice(i, i + 10).map((v) => gqlOk(a, JoinRoomDocument, { roomName: room }, v.token)));
    }
    const posted = (await poll(a, owner, room, ['A', 'B', 'C', 'D'])).data!.postPoll;
    const first = voters.map((_, i) => i % 4);
    const results = await Promise.all(voters.map((v, i) => vote(i % 2 ? a : b, v, posted.id, [first[i]!])));
    expect(results.flatMap(codes)).toEqual([]);
    // 50 change to answer D (3), from both instances at once.
    const changers = voters.slice(0, 50);
    const changes = await Promise.all(changers.map((v, i) => vote(i % 2 ? b : a, v, posted.id, [3])));
    expect(changes.flatMap(codes)).toEqual([]);
    const finalAnswer = voters.map((_, i) => (i < 50 ? 3 : first[i]!));
    const expected = [0, 1, 2, 3].map((ans) => finalAnswer.filter((f) => f === ans).length);
    const read = (await gqlOk(b, PollOfDocument, { messageId: posted.id }, owner.token)).message!.poll!;
    expect(read.answers.map((ans) => ans.votes)).toEqual(expected);
    expect(read.voterCount).toBe(200);
  });

  it('closes at its closing time while nobody votes: reads show it closed, votes are POLL_CLOSED', async () => {
    const clock = new ManualClock();
    const clocked = await startApp({ clock });
    try {
      const [creator, x] = await Promise.all([signUp(clocked), signUp(clocked)]);
      const room = await roomWith(clocked, creator, [x]);
      const closesAt = new Date(clock.now().getTime() + 60_000).toISOString();
      const posted = (await poll(clocked, creator, room, ['Yes', 'No'], { closesAt })).data!.postPoll;
      await vote(clocked, x, posted.id, [0]);
      clock.advance(60_000);
      const read = (await gqlOk(clocked, PollOfDocument, { messageId: posted.id }, creator.token)).message!.poll!;
      expect(read).toMatchObject({ closed: true, closesAt, voterCount: 1 });
      const late = await vote(clocked, x, posted.id, [1]);
      expect(late.errors?.[0]?.extensions).toMatchObject({ code: 'POLL_CLOSED', field: 'messageId', closedAt: closesAt });
      expect(codes(await gql(clocked, RetractVoteDocument, { messageId: posted.id }, x.token))).toEqual(['POLL_CLOSED']);
      expect((await gqlOk(clocked, PollOfDocument, { messageId: posted.id }, creator.token)).message!.poll!.answers.map((ans) => ans.votes)).toEqual([1, 0]);
    } finally {
      await stopApp(clocked);
    }
  });

  it('publishes the poll, then PollUpdated with the counts, to subscribers on another instance, in order', async () => {
    const [x, y] = await signUpMany(a, 2, 'pollfeed');
    const room = await roomWith(a, owner, [x!, y!]);
    const feed = await roomFeed(b, owner.token, PollEventsDocument, { roomName: room });
    const posted = (await poll(a, owner, room)).data!.postPoll;
    const next = async (kind: string) => {
      for (;;) {
        const { roomEvents: event } = await feed.data(10_000);
        if (event.__typename === kind) return event;
      }
    };
    expect(await next('MessagePosted')).toMatchObject({ message: { id: posted.id, poll: { question: 'What to drink?', voterCount: 0 } } });
    await vote(a, x!, posted.id, [0]);
    const first = await next('PollUpdated');
    // Coalesced: the event shows the counts when it was sent, at least this vote.
    expect(first).toMatchObject({ message: { id: posted.id, poll: { voterCount: 1, answers: [{ votes: 1 }, { votes: 0 }, { votes: 0 }] } } });
    await vote(a, y!, posted.id, [2]);
    expect(await next('PollUpdated')).toMatchObject({ message: { poll: { voterCount: 2, answers: [{ votes: 1 }, { votes: 0 }, { votes: 1 }] } } });
  });
});

/** The vote rows stored for a poll. */
const voteRows = async (app: App, room: string, pollId: string) =>
  (await cqlRows(app, 'SELECT voter FROM poll_votes WHERE room_name = ? AND message_id = ?', [room, messageKey(pollId).messageId])).length;

describe('a deleted poll', () => {
  it('shows no poll, takes no vote, and drops its votes', async () => {
    const [x, y] = await signUpMany(a, 2, 'polldel');
    const room = await roomWith(a, owner, [x!, y!]);
    const posted = (await poll(a, owner, room)).data!.postPoll;
    await vote(a, x!, posted.id, [0]);
    await vote(b, y!, posted.id, [2]);
    expect(await voteRows(a, room, posted.id)).toBe(2);
    await gqlOk(a, DeleteMessageDocument, { messageId: posted.id }, owner.token);
    expect((await gqlOk(a, PollOfDocument, { messageId: posted.id }, owner.token)).message!.poll).toBeNull();
    expect(codes(await vote(a, x!, posted.id, [1]))).toEqual(['NOT_FOUND']);
    expect(await voteRows(a, room, posted.id)).toBe(0);
  });
});

describe('a hidden poll', () => {
  it('shows no poll, publishes no update and takes no vote', async () => {
    // A window long enough that the hide lands inside it: the vote's PollUpdated is due after the poll is hidden.
    const slow = await startApp({ env: { REACTION_EVENT_WINDOW_MS: '1500' } });
    try {
      const x = await signUp(slow);
      const room = await roomWith(slow, owner, [x]);
      const hiddenPoll = (await poll(slow, owner, room)).data!.postPoll;
      const laterPoll = (await poll(slow, owner, room, ['Now', 'Later'])).data!.postPoll;
      const feed = await roomFeed(slow, owner.token, PollEventsDocument, { roomName: room });
      await vote(slow, x, hiddenPoll.id, [0]);
      await gqlOk(slow, HideMessageDocument, { messageId: hiddenPoll.id }, owner.token);
      // A vote on another poll after the hide: its PollUpdated is due after the hidden poll's would have been, so the
      // feed shows whatever the hidden poll published before it.
      await vote(slow, x, laterPoll.id, [1]);
      const updated: string[] = [];
      for (;;) {
        const { roomEvents: event } = await feed.data(10_000);
        if (event.__typename !== 'PollUpdated') continue;
        updated.push(event.message.id);
        if (event.message.id === laterPoll.id) break;
      }
      expect(updated).toEqual([laterPoll.id]);

      const read = (await gqlOk(slow, PollOfDocument, { messageId: hiddenPoll.id }, x.token)).message!;
      expect(read.poll).toBeNull();
      expect((await vote(slow, x, hiddenPoll.id, [0])).errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'messageId' });
    } finally {
      await stopApp(slow);
    }
  });
});
