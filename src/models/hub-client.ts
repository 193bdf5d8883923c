import { request as httpRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { HubError, type HubFailure } from './hub-failure';

/** How `agent-data models pull` talks to the hub (the configuration's MODELS_* variables). */
export interface HubSettings {
  /** MODELS_BASE_URL, without a trailing slash. */
  readonly baseUrl: string;
  /** MODELS_TOKEN: sent to the base URL's origin only, never to a host it redirects to. */
  readonly token?: string;
  /** MODELS_TIMEOUT_MS: a connection silent this long is given up. */
  readonly timeoutMs: number;
  /** Aborts whatever is under way (Ctrl-C). */
  readonly signal?: AbortSignal;
}

/** Redirects followed for one request: the hub sends one (to its CDN), a mirror one or two. */
export const MAX_REDIRECTS = 10;
const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/** The answer at the end of a request's redirects. */
export interface HubAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** The headers of every answer, first to last, redirects included. */
  readonly chain: readonly IncomingHttpHeaders[];
  /** The body, to read or to drop (`resume()`). */
  readonly body: IncomingMessage;
  /** Why the body stopped, if the request did: silence, or the user's interruption. */
  readonly stopped: () => 'silent' | 'interrupted' | undefined;
  /** The host that answered last. */
  readonly host: string;
}

/**
 * `method` on `url`, following redirects (at most {@link MAX_REDIRECTS}, to http or https
 * only), without compression so that sizes and ranges are those of the file. Rejects with
 * a HubError when no answer comes; any answer that is not a redirect is the caller's.
 */
export async function hubRequest(
  url: URL,
  method: 'HEAD' | 'GET',
  headers: Readonly<Record<string, string>>,
  settings: HubSettings,
): Promise<HubAnswer> {
  const origin = new URL(settings.baseUrl).origin;
  const chain: IncomingHttpHeaders[] = [];
  let current = url;
  for (let redirects = 0; ; redirects++) {
    const auth: Record<string, string> =
      settings.token !== undefined && current.origin === origin
        ? { authorization: `Bearer ${settings.token}` }
        : {};
    const answer = await send(current, method, { ...headers, ...auth }, settings);
    chain.push(answer.headers);
    const location = answer.headers.location;
    if (!REDIRECTS.has(answer.status) || location === undefined) return { ...answer, chain };
    drop(answer.body);
    if (redirects === MAX_REDIRECTS) throw new HubError({ kind: 'redirects', max: MAX_REDIRECTS });
    let next: URL;
    try {
      next = new URL(location, current);
    } catch {
      throw new HubError({ kind: 'status', status: answer.status });
    }
    if (next.protocol !== 'http:' && next.protocol !== 'https:') {
      throw new HubError({ kind: 'status', status: answer.status });
    }
    current = next;
  }
}

/** One request, one answer (or the HubError of its failure). */
function send(
  url: URL,
  method: 'HEAD' | 'GET',
  headers: Readonly<Record<string, string>>,
  settings: HubSettings,
): Promise<Omit<HubAnswer, 'chain'>> {
  return new Promise((resolve, reject) => {
    let stopped: 'silent' | 'interrupted' | undefined;
    const request = (url.protocol === 'https:' ? httpsRequest : httpRequest)(url, {
      method,
      headers: { 'user-agent': 'agent-data', 'accept-encoding': 'identity', ...headers },
    });
    // Idle time on the socket: waiting for the answer, then between two chunks of its body.
    request.setTimeout(settings.timeoutMs, () => {
      stopped = 'silent';
      request.destroy(new HubError({ kind: 'silent', host: url.host }));
    });
    const abort = () => {
      stopped = 'interrupted';
      request.destroy(new HubError({ kind: 'interrupted' }));
    };
    if (settings.signal?.aborted) abort();
    settings.signal?.addEventListener('abort', abort, { once: true });
    request.on('close', () => settings.signal?.removeEventListener('abort', abort));
    request.on('response', (response) =>
      resolve({
        status: response.statusCode ?? 0,
        headers: response.headers,
        body: response,
        stopped: () => stopped,
        host: url.host,
      }),
    );
    // Before the answer this rejects; after it, the body's own error tells the reader.
    request.on('error', (error: NodeJS.ErrnoException) => reject(failureOf(error, url)));
    request.end();
  });
}

function failureOf(error: NodeJS.ErrnoException, url: URL): HubError {
  if (error instanceof HubError) return error;
  const code = error.code ?? 'error';
  const failure: HubFailure = /CERT|SSL|TLS|SELF_SIGNED|UNABLE_TO_VERIFY|HOSTNAME/.test(code)
    ? { kind: 'untrusted', host: url.host, code }
    : { kind: 'unreachable', host: url.host, code };
  return new HubError(failure);
}

/** Reads a body to its end and forgets it (a redirect's, an error's), whatever befalls it. */
export function drop(body: IncomingMessage): void {
  body.on('error', () => undefined);
  body.resume();
}
