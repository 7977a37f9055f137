/**
 * One room: its history, paged back as the viewer scrolls up, and its live
 * feed from the newest message held, resumed from the last event's cursor
 * after any drop. Messages are kept by id, so a message that arrives twice
 * (a replay after a resume may repeat some) shows once. Replies, edits,
 * reactions and typing indicators act through the API and come back as events.
 */
import { useCallback, useEffect, useLayoutEffect, useReducer, useRef, useState, type FormEvent } from 'react';
import { useMutation } from 'urql';
import type { Api } from './api.js';
import type { MessageFieldsFragment } from './gql/graphql.js';
import { AddReaction, EditMessage, MarkRoomRead, PostMessage, RemoveReaction, RoomEvents, RoomHistory, SendTyping } from './operations.js';
import { READ_STATE_CHANGED } from './RoomList.js';

type Message = MessageFieldsFragment;

/** Messages by id, with the order they are shown in: by time, then by first arrival. */
interface Held {
  byId: Map<string, Message & { seq: number }>;
  next: number;
}

function hold(state: Held, messages: Message[]): Held {
  const byId = new Map(state.byId);
  let next = state.next;
  for (const m of messages) {
    const had = byId.get(m.id);
    // An older version (an event delivered late) never replaces a newer one.
    if (had && had.version > m.version && !m.deleted) continue;
    byId.set(m.id, { ...m, seq: had?.seq ?? next++ });
  }
  return { byId, next };
}

const inOrder = (held: Held) =>
  [...held.byId.values()].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.seq - b.seq);

const TYPING_SHOWN_MS = 3_000;
const THUMBS_UP = '👍';

export function RoomView({ api, roomName, me }: { api: Api; roomName: string; me: string }) {
  const [held, add] = useReducer(hold, { byId: new Map(), next: 0 });
  const [older, setOlder] = useState<{ cursor: string | null; more: boolean; loading: boolean }>({ cursor: null, more: true, loading: false });
  const [typing, setTyping] = useState<Record<string, number>>({});
  const [replyTo, setReplyTo] = useState<Message | null>(null);
  const [editing, setEditing] = useState<{ id: string; text: string } | null>(null);
  const [draft, setDraft] = useState('');
  const [files, setFiles] = useState<Array<{ id: string; filename: string }>>([]);
  const [error, setError] = useState<string | null>(null);
  const cursor = useRef<string | null>(null);
  const scroller = useRef<HTMLDivElement>(null);
  const top = useRef<HTMLDivElement>(null);
  const lastTyping = useRef(0);
  const [, post] = useMutation(PostMessage);
  const [, edit] = useMutation(EditMessage);
  const [, react] = useMutation(AddReaction);
  const [, unreact] = useMutation(RemoveReaction);
  const [, typingNow] = useMutation(SendTyping);
  const [, markRead] = useMutation(MarkRoomRead);

  const loadOlder = useCallback(async () => {
    if (older.loading || !older.more) return;
    setOlder((o) => ({ ...o, loading: true }));
    const result = await api.urql.query(RoomHistory, { roomName, after: older.cursor }, { requestPolicy: 'network-only' }).toPromise();
    const page = result.data?.room?.messages;
    if (!page) {
      setError(result.error?.message ?? 'Room not found');
      return setOlder((o) => ({ ...o, loading: false }));
    }
    add(page.edges.map((e) => e.node));
    // The newest message's cursor is where the live feed starts: nothing after it is missed.
    if (older.cursor === null) cursor.current = page.edges[0]?.cursor ?? null;
    setOlder({ cursor: page.pageInfo.endCursor ?? null, more: page.pageInfo.hasNextPage, loading: false });
  }, [api, roomName, older]);

  // The first page, then the live feed from its newest message.
  const [started, setStarted] = useState(false);
  useEffect(() => {
    void loadOlder().then(() => setStarted(true));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  useEffect(() => {
    if (!started) return;
    let stop = () => {};
    const follow = () => {
      stop = api.follow(RoomEvents, () => ({ roomName, after: cursor.current }), ({ roomEvents: event }) => {
        if ('cursor' in event && event.cursor) cursor.current = event.cursor;
        switch (event.__typename) {
          case 'MessagePosted':
          case 'MessageEdited':
          case 'MessageDeleted':
          case 'MessageHidden':
          case 'ReactionChanged':
            add([event.message]);
            break;
          case 'TypingStarted':
            if (event.user.login !== me) setTyping((t) => ({ ...t, [event.user.displayName]: Date.now() + TYPING_SHOWN_MS }));
            break;
          case 'FeedInterrupted':
            // Events may have been lost: resubscribe from the cursor it gives, which replays what was stored.
            cursor.current = event.resumeCursor;
            stop();
            follow();
            break;
        }
      });
    };
    follow();
    return () => stop();
  }, [api, roomName, me, started]);

  // Scrolling up to the oldest message held loads the page before it.
  useEffect(() => {
    const target = top.current;
    if (!target) return;
    const seen = new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && void loadOlder(), { root: scroller.current });
    seen.observe(target);
    return () => seen.disconnect();
  }, [loadOlder]);

  const messages = inOrder(held);
  const newest = messages.at(-1);

  // New messages keep the view at the bottom when it was there; older pages keep it where it was.
  const lastId = useRef<string | undefined>(undefined);
  useLayoutEffect(() => {
    const el = scroller.current;
    if (el && newest?.id !== lastId.current) el.scrollTop = el.scrollHeight;
    lastId.current = newest?.id;
  }, [newest?.id]);

  // What is shown is read: a burst is marked once, and leaving the room marks what it showed at once.
  useEffect(() => {
    if (!newest) return;
    let marked = false;
    const mark = async () => {
      if (marked) return;
      marked = true;
      await markRead({ roomName, upTo: newest.id });
      window.dispatchEvent(new Event(READ_STATE_CHANGED));
    };
    const timer = setTimeout(() => void mark(), 200);
    return () => {
      clearTimeout(timer);
      void mark();
    };
  }, [newest?.id, roomName, markRead]);

  // Typing indicators fade on their own.
  useEffect(() => {
    const timer = setInterval(() => setTyping((t) => Object.fromEntries(Object.entries(t).filter(([, until]) => until > Date.now()))), 500);
    return () => clearInterval(timer);
  }, []);

  async function send(e: FormEvent) {
    e.preventDefault();
    const content = draft.trim() || files.map((f) => f.filename).join(', ');
    if (!content) return;
    const attachments = files.map((f) => f.id);
    const result = await post({ roomName, content, clientMessageId: crypto.randomUUID(), replyTo: replyTo?.id ?? null, attachments });
    if (result.error) return setError(result.error.graphQLErrors[0]?.message ?? result.error.message);
    setDraft('');
    setFiles([]);
    setReplyTo(null);
    add([result.data!.postMessage]);
  }

  function changed(text: string) {
    setDraft(text);
    // The server sends at most one a room per 2 s anyway: asking more often is wasted.
    if (text && Date.now() - lastTyping.current > 2_000) {
      lastTyping.current = Date.now();
      void typingNow({ roomName });
    }
  }

  async function saveEdit(e: FormEvent) {
    e.preventDefault();
    if (!editing) return;
    const result = await edit({ messageId: editing.id, content: editing.text });
    if (result.error) return setError(result.error.graphQLErrors[0]?.message ?? result.error.message);
    add([result.data!.editMessage]);
    setEditing(null);
  }

  async function toggleReaction(m: Message, emoji: string) {
    const mine = m.reactions.find((r) => r.emoji === emoji)?.reactedByViewer;
    const result = mine ? await unreact({ messageId: m.id, emoji }) : await react({ messageId: m.id, emoji });
    const updated = result.data && ('addReaction' in result.data ? result.data.addReaction : result.data.removeReaction);
    if (updated) add([updated]);
  }

  const typers = Object.keys(typing);
  return (
    <section className="room-view" data-testid="room-view">
      <header>
        <h2>#{roomName}</h2>
        {error && <span className="error">{error}</span>}
      </header>
      <div className="messages" ref={scroller} data-testid="messages">
        <div ref={top} className="older">{older.more ? (older.loading ? 'Loading…' : ' ') : 'The beginning of the room'}</div>
        {messages.map((m) => (
          <article key={m.id} className={m.systemMessage ? 'message system' : m.author.login === me ? 'message mine' : 'message'} data-testid="message" data-id={m.id}>
            <div className="meta">
              <strong>{m.author.displayName}</strong> <time>{new Date(m.createdAt).toLocaleTimeString()}</time>
              {m.editedAt && <span className="edited"> (edited)</span>}
            </div>
            {m.replyTo && <div className="reply-to">↪ {m.replyTo.author.login}: {m.replyTo.content ?? 'deleted'}</div>}
            {editing?.id === m.id ? (
              <form onSubmit={saveEdit}>
                <input value={editing.text} onChange={(e) => setEditing({ id: m.id, text: e.target.value })} autoFocus aria-label="Edit message" />
              </form>
            ) : (
              <p className="content" data-testid="content">{m.deleted ? <em>deleted</em> : m.content}</p>
            )}
            {m.attachments.map((a) =>
              a.contentType.startsWith('image/') ? (
                <img key={a.id} className="attachment" src={api.origin + a.url} alt={a.filename} width={a.width ?? undefined} height={a.height ?? undefined} data-testid="attachment-image" />
              ) : (
                <a key={a.id} className="attachment" href={api.origin + a.url}>
                  {a.filename}
                </a>
              ),
            )}
            {!m.systemMessage && (
            <div className="actions">
              {m.reactions.map((r) => (
                <button key={r.emoji} className={r.reactedByViewer ? 'reaction mine' : 'reaction'} onClick={() => void toggleReaction(m, r.emoji)} data-testid="reaction">
                  {r.emoji} {r.count}
                </button>
              ))}
              {!m.reactions.some((r) => r.emoji === THUMBS_UP) && !m.deleted && (
                <button className="reaction add" onClick={() => void toggleReaction(m, THUMBS_UP)} aria-label="React with thumbs up">
                  +{THUMBS_UP}
                </button>
              )}
              {!m.deleted && <button onClick={() => setReplyTo(m)}>Reply{m.replyCount ? ` (${m.replyCount})` : ''}</button>}
              {m.author.login === me && !m.deleted && <button onClick={() => setEditing({ id: m.id, text: m.content ?? '' })}>Edit</button>}
            </div>
            )}
          </article>
        ))}
      </div>
      <div className="typing" data-testid="typing">{typers.length ? `${typers.join(', ')} ${typers.length > 1 ? 'are' : 'is'} typing…` : ' '}</div>
      {replyTo && (
        <div className="replying">
          Replying to {replyTo.author.login}: {replyTo.content} <button onClick={() => setReplyTo(null)}>✕</button>
        </div>
      )}
      {files.length > 0 && <div className="replying" data-testid="pending-files">Attaching {files.map((f) => f.filename).join(', ')}</div>}
      <form className="composer" onSubmit={send}>
        <input
          type="file"
          aria-label="Attach a file"
          onChange={async (e) => {
            const file = e.target.files?.[0];
            e.target.value = '';
            if (!file) return;
            try {
              const uploaded = await api.upload(file);
              setFiles((f) => [...f, uploaded]);
            } catch (err) {
              setError((err as Error).message);
            }
          }}
        />
        <input value={draft} onChange={(e) => changed(e.target.value)} placeholder={`Message #${roomName}`} aria-label="Message" />
        <button type="submit">Send</button>
      </form>
    </section>
  );
}
