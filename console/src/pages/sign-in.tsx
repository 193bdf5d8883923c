import { useEffect, useState } from 'preact/hooks';
import { ApiError, request, session, Unreachable } from '../api';
import { finishSignIn, type OAuthSettings, startSignIn } from '../oauth';

/** The API key form: the key is checked against the server before it is kept. */
export function SignIn({ reason, onSignedIn }: { reason: string; onSignedIn: () => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState('');
  const [busy, setBusy] = useState(false);

  const [oauth, setOauth] = useState<OAuthSettings | null>(null);

  useEffect(() => {
    // Back from the issuer: exchange the code for a token, and check it like a key.
    finishSignIn().then(async (finished) => {
      if (finished === undefined) return;
      if ('error' in finished) return setError(`Sign-in failed: ${finished.error}.`);
      await check(finished.token);
    });
    request<{ oauth: OAuthSettings | null; problem?: string }>('/console/config.json', {
      key: '',
    }).then(
      (config) => {
        setOauth(config.oauth);
        if (config.problem) setError(`Sign-in with the issuer is unavailable: ${config.problem}.`);
      },
      () => undefined,
    );
    // A server without API keys (loopback only) needs none: the console opens at once.
    if (reason || new URLSearchParams(location.search).has('code')) return;
    request('/documents?limit=1', { key: '' }).then(
      () => {
        session.signIn('');
        onSignedIn();
      },
      () => undefined,
    );
  }, []);

  /** Tries a key or token against the API; keeps it when it works. */
  async function check(credential: string) {
    setBusy(true);
    setError('');
    try {
      await request('/documents?limit=1', { key: credential });
      session.signIn(credential);
      onSignedIn();
    } catch (failure) {
      setError(
        failure instanceof ApiError && failure.status === 401
          ? 'This key is not valid.'
          : failure instanceof ApiError && failure.status === 403
            ? `${failure.message} The console needs the admin profile.`
            : failure instanceof Unreachable
              ? 'The server does not answer. Try again in a moment.'
              : String((failure as Error).message),
      );
    } finally {
      setBusy(false);
    }
  }

  async function submit(event: Event) {
    event.preventDefault();
    await check(key.trim());
  }

  return (
    <main id="main" class="sign-in" tabIndex={-1}>
      <h1>Agent Data console</h1>
      {reason && (
        <p class="notice" role="status">
          You were signed out: {reason}
        </p>
      )}
      <form onSubmit={submit}>
        <label for="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autoComplete="off"
          autoFocus
          required
          value={key}
          onInput={(event) => setKey((event.target as HTMLInputElement).value)}
        />
        <button type="submit" disabled={busy || key.trim() === ''}>
          {busy ? 'Checking…' : 'Sign in'}
        </button>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
      </form>
      {oauth && (
        <p>
          <button type="button" onClick={() => startSignIn(oauth)}>
            Sign in with {new URL(oauth.issuer).host}
          </button>
        </p>
      )}
      <p class="hint">
        The key stays in this tab only (session storage): it is never put in a cookie or an address.
      </p>
    </main>
  );
}
