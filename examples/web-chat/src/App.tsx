/** The page: sign-in until there is a session, then rooms and the inbox beside the room or conversation open. */
import { useEffect, useMemo, useState } from 'react';
import { Provider } from 'urql';
import { createApi } from './api.js';
import { Login, type Session } from './Login.js';
import { RoomList } from './RoomList.js';
import { RoomView } from './RoomView.js';
import { Inbox, ConversationView } from './Inbox.js';

type Open = { room: string } | { conversation: string } | null;

const saved = (): Session | null => JSON.parse(sessionStorage.getItem('parley.session') ?? 'null') as Session | null;

export function App({ apiUrl }: { apiUrl: string }) {
  const [session, setSession] = useState<Session | null>(saved);
  const [live, setLive] = useState(false);
  const [open, setOpen] = useState<Open>(null);
  const api = useMemo(() => createApi(apiUrl, session?.token ?? null, setLive), [apiUrl, session?.token]);
  useEffect(() => () => api.close(), [api]);

  if (!session) {
    return (
      <Provider value={api.urql}>
        <Login
          onSession={(s) => {
            sessionStorage.setItem('parley.session', JSON.stringify(s));
            setSession(s);
          }}
        />
      </Provider>
    );
  }
  return (
    <Provider value={api.urql}>
      <div className="layout">
        <aside>
          <header>
            <strong data-testid="me">{session.login}</strong>
            <span className={live ? 'status live' : 'status'} data-testid="connection">
              {live ? 'live' : 'offline'}
            </span>
          </header>
          <RoomList api={api} openRoom={open && 'room' in open ? open.room : null} onOpen={(room) => setOpen({ room })} />
          <Inbox api={api} onOpen={(login) => setOpen({ conversation: login })} />
        </aside>
        <main>
          {open && 'room' in open && <RoomView key={open.room} api={api} roomName={open.room} me={session.login} />}
          {open && 'conversation' in open && <ConversationView key={open.conversation} partner={open.conversation} />}
          {!open && <p className="hint">Pick a room or a conversation.</p>}
        </main>
      </div>
    </Provider>
  );
}
