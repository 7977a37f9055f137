/** The messenger: conversations with exact unread counts, kept current by the inbox feed, and one conversation open. */
import { useEffect, useState, type FormEvent } from 'react';
import { useMutation, useQuery } from 'urql';
import type { Api } from './api.js';
import { ConversationMessages, Conversations, InboxEvents, MarkConversationRead, SendDirectMessage } from './operations.js';

/** Fired when a conversation changed here (a message sent, a conversation read): lists are read again. */
const INBOX_CHANGED = 'parley:inbox';

export function Inbox({ api, onOpen }: { api: Api; onOpen: (login: string) => void }) {
  const [result, reexecute] = useQuery({ query: Conversations, requestPolicy: 'network-only' });
  const [to, setTo] = useState('');
  useEffect(() => {
    const refresh = () => reexecute({ requestPolicy: 'network-only' });
    window.addEventListener(INBOX_CHANGED, refresh);
    const stop = api.follow(InboxEvents, () => ({}), () => {
      refresh();
      window.dispatchEvent(new Event(INBOX_CHANGED));
    });
    return () => {
      stop();
      window.removeEventListener(INBOX_CHANGED, refresh);
    };
  }, [api, reexecute]);

  function start(e: FormEvent) {
    e.preventDefault();
    if (to.trim()) onOpen(to.trim().toLowerCase());
    setTo('');
  }

  return (
    <nav className="inbox">
      <h2>Messages</h2>
      {result.data?.conversations.edges.map(({ node }) => (
        <button key={node.id} className="room" onClick={() => onOpen(node.partner.login)} data-testid={`conversation-${node.partner.login}`}>
          <span className="name">{node.partner.displayName}</span>
          {node.unreadCount > 0 && <span className="badge">{node.unreadCount}</span>}
        </button>
      ))}
      <form onSubmit={start}>
        <input value={to} onChange={(e) => setTo(e.target.value)} placeholder="Write to (login)" aria-label="Write to" />
      </form>
    </nav>
  );
}

export function ConversationView({ partner }: { partner: string }) {
  const [result, reexecute] = useQuery({ query: ConversationMessages, variables: { with: partner }, requestPolicy: 'network-only' });
  const [, send] = useMutation(SendDirectMessage);
  const [, markRead] = useMutation(MarkConversationRead);
  const [draft, setDraft] = useState('');
  const [error, setError] = useState<string | null>(null);
  const conversation = result.data?.conversation;
  const messages = [...(conversation?.messages.edges ?? [])].map((e) => e.node).reverse();

  useEffect(() => {
    const refresh = () => reexecute({ requestPolicy: 'network-only' });
    window.addEventListener(INBOX_CHANGED, refresh);
    return () => window.removeEventListener(INBOX_CHANGED, refresh);
  }, [reexecute]);

  const newest = messages.at(-1)?.id;
  useEffect(() => {
    if (newest) void markRead({ with: partner });
  }, [newest, partner, markRead]);

  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!draft.trim()) return;
    const sent = await send({ to: partner, content: draft });
    if (sent.error) return setError(sent.error.graphQLErrors[0]?.message ?? sent.error.message);
    setDraft('');
    window.dispatchEvent(new Event(INBOX_CHANGED));
  }

  return (
    <section className="room-view">
      <header>
        <h2>{partner}</h2>
        {(error ?? result.error) && <span className="error">{error ?? result.error?.graphQLErrors[0]?.message}</span>}
      </header>
      <div className="messages">
        {messages.map((m) => (
          <article key={m.id} className={m.from.login === partner ? 'message' : 'message mine'}>
            <p className="content">{m.content}</p>
            {/* The read receipt: the partner's read point is a message id of this conversation. */}
            {m.id === conversation?.partnerReadUpTo && <span className="receipt">✓ read</span>}
          </article>
        ))}
      </div>
      <form className="composer" onSubmit={submit}>
        <input value={draft} onChange={(e) => setDraft(e.target.value)} placeholder={`Message ${partner}`} aria-label="Direct message" />
        <button type="submit">Send</button>
      </form>
    </section>
  );
}
