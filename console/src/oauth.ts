/**
 * Sign-in through the OAuth issuer: authorization code with PKCE (RFC 7636, S256), the
 * console as a public client. The verifier and state wait in session storage while the
 * browser is at the issuer; the access token then takes the place of an API key.
 */

export interface OAuthSettings {
  issuer: string;
  client_id: string;
  scope: string;
  resource: string;
  authorization_endpoint: string;
  token_endpoint: string;
}

const PENDING = 'agent-data.console.oauth';

/** Where the issuer sends the browser back: this page, without query or fragment. */
export function redirectUri(): string {
  return `${location.origin}${location.pathname}`;
}

export async function startSignIn(settings: OAuthSettings): Promise<void> {
  const verifier = randomText(48);
  const state = randomText(24);
  sessionStorage.setItem(PENDING, JSON.stringify({ verifier, state, settings }));
  const challenge = base64url(
    new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))),
  );
  const url = new URL(settings.authorization_endpoint);
  url.search = new URLSearchParams({
    response_type: 'code',
    client_id: settings.client_id,
    redirect_uri: redirectUri(),
    scope: settings.scope,
    resource: settings.resource,
    state,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  }).toString();
  location.assign(url.toString());
}

/**
 * When the issuer has just sent the browser back (`?code=…&state=…` or `?error=…`): the
 * access token, or an error to show. `undefined` when this is not such a return.
 */
export async function finishSignIn(): Promise<{ token: string } | { error: string } | undefined> {
  const query = new URLSearchParams(location.search);
  if (!query.has('code') && !query.has('error')) return undefined;
  // The code is single-use: take it out of the address at once.
  history.replaceState(null, '', `${redirectUri()}${location.hash}`);
  const pending = sessionStorage.getItem(PENDING);
  sessionStorage.removeItem(PENDING);
  if (query.has('error')) {
    return {
      error: `the sign-in service refused: ${query.get('error_description') ?? query.get('error')}`,
    };
  }
  if (pending === null) return { error: 'this sign-in was not started here; start again' };
  const { verifier, state, settings } = JSON.parse(pending) as {
    verifier: string;
    state: string;
    settings: OAuthSettings;
  };
  if (query.get('state') !== state)
    return { error: 'the sign-in answer does not match its request; start again' };
  try {
    const response = await fetch(settings.token_endpoint, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: query.get('code')!,
        redirect_uri: redirectUri(),
        client_id: settings.client_id,
        code_verifier: verifier,
        resource: settings.resource,
      }),
    });
    const body = (await response.json()) as {
      access_token?: string;
      error_description?: string;
      error?: string;
    };
    if (!response.ok || !body.access_token) {
      return {
        error: `no token: ${body.error_description ?? body.error ?? `HTTP ${response.status}`}`,
      };
    }
    return { token: body.access_token };
  } catch {
    return { error: 'the sign-in service does not answer' };
  }
}

function randomText(bytes: number): string {
  return base64url(crypto.getRandomValues(new Uint8Array(bytes)));
}

function base64url(bytes: Uint8Array): string {
  let text = '';
  for (const byte of bytes) text += String.fromCharCode(byte);
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}
