/** Sign in, or sign up: both answer with a token, which the app keeps for this tab. */
import { useState, type FormEvent } from 'react';
import { useMutation } from 'urql';
import { Login as LoginDocument, Register } from './operations.js';

export interface Session {
  token: string;
  login: string;
}

export function Login({ onSession }: { onSession: (s: Session) => void }) {
  const [mode, setMode] = useState<'login' | 'register'>('login');
  const [form, setForm] = useState({ login: '', password: '', firstname: '', lastname: '', email: '' });
  const [error, setError] = useState<string | null>(null);
  const [, login] = useMutation(LoginDocument);
  const [, register] = useMutation(Register);
  const set = (field: keyof typeof form) => (e: { target: { value: string } }) => setForm({ ...form, [field]: e.target.value });

  async function submit(e: FormEvent) {
    e.preventDefault();
    setError(null);
    const result =
      mode === 'login'
        ? await login({ login: form.login, password: form.password })
        : await register({ input: { login: form.login, password: form.password, firstname: form.firstname, lastname: form.lastname, email: form.email } });
    const payload = result.data && ('login' in result.data ? result.data.login : result.data.register);
    if (!payload) {
      // Errors carry a stable code and, for bad input, the field at fault (docs/api.md).
      const first = result.error?.graphQLErrors[0];
      setError(first ? `${first.message}${first.extensions?.field ? ` (${String(first.extensions.field)})` : ''}` : 'The server did not answer');
      return;
    }
    onSession({ token: payload.token, login: payload.user.login });
  }

  return (
    <form className="login" onSubmit={submit}>
      <h1>Parley</h1>
      <input placeholder="login" value={form.login} onChange={set('login')} name="login" autoComplete="username" />
      <input placeholder="password" type="password" value={form.password} onChange={set('password')} name="password" autoComplete={mode === 'login' ? 'current-password' : 'new-password'} />
      {mode === 'register' && (
        <>
          <input placeholder="first name" value={form.firstname} onChange={set('firstname')} name="firstname" />
          <input placeholder="last name" value={form.lastname} onChange={set('lastname')} name="lastname" />
          <input placeholder="email" value={form.email} onChange={set('email')} name="email" />
        </>
      )}
      {error && <p className="error" role="alert">{error}</p>}
      <button type="submit">{mode === 'login' ? 'Sign in' : 'Sign up'}</button>
      <button type="button" className="link" onClick={() => setMode(mode === 'login' ? 'register' : 'login')}>
        {mode === 'login' ? 'New here? Sign up' : 'Have an account? Sign in'}
      </button>
    </form>
  );
}
