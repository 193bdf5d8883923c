/** The admin REST API, as the console calls it: same origin, the key as a Bearer token. */

const KEY_STORAGE = 'agent-data.console.key';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly body?: unknown,
  ) {
    super(message);
  }
}

/** The server did not answer at all (down, restarting, network gone). */
export class Unreachable extends Error {}

let key: string | null = sessionStorage.getItem(KEY_STORAGE);
const signedOutListeners = new Set<(reason: string) => void>();
const reachabilityListeners = new Set<(reachable: boolean) => void>();

export const session = {
  get key(): string | null {
    return key;
  },
  /** Kept in session storage only: gone when the tab closes, never in a cookie or a URL. */
  signIn(value: string): void {
    key = value;
    sessionStorage.setItem(KEY_STORAGE, value);
  },
  signOut(reason = ''): void {
    key = null;
    sessionStorage.removeItem(KEY_STORAGE);
    for (const listener of signedOutListeners) listener(reason);
  },
  onSignedOut(listener: (reason: string) => void): () => void {
    signedOutListeners.add(listener);
    return () => signedOutListeners.delete(listener);
  },
  onReachability(listener: (reachable: boolean) => void): () => void {
    reachabilityListeners.add(listener);
    return () => reachabilityListeners.delete(listener);
  },
};

export interface RequestOptions {
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
  /** The key to use instead of the session's (sign-in checks one before keeping it). */
  key?: string;
}

/** One request; JSON in, JSON out. Retries a request that found no server, three times. */
export async function request<T>(path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
  const credential = options.key ?? key;
  if (credential) headers.Authorization = `Bearer ${credential}`;
  if (options.body !== undefined) headers['Content-Type'] = 'application/json';
  let response: Response | undefined;
  for (let attempt = 0; response === undefined; attempt++) {
    try {
      response = await fetch(path, {
        method: options.method ?? 'GET',
        headers,
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        cache: 'no-store',
      });
    } catch {
      for (const listener of reachabilityListeners) listener(false);
      if (attempt === 2) throw new Unreachable('The server does not answer.');
      await new Promise((resolve) => setTimeout(resolve, 500 * 2 ** attempt));
    }
  }
  for (const listener of reachabilityListeners) listener(true);
  const text = await response.text();
  let body: unknown = undefined;
  try {
    body = text === '' ? undefined : JSON.parse(text);
  } catch {
    body = text;
  }
  if (!response.ok) {
    const error = (body as { error?: { code?: string; message?: string } } | undefined)?.error;
    const failure = new ApiError(
      response.status,
      error?.code ?? `HTTP_${response.status}`,
      error?.message ?? `The server answered ${response.status}.`,
      body,
    );
    if (response.status === 401 && options.key === undefined) session.signOut(failure.message);
    throw failure;
  }
  return body as T;
}

export { documentPath } from '../../src/common/document-path';

/** A link of a document, as `GET /documents/{id}/links` gives it. */
export interface Link {
  kind: 'markdown' | 'wikilink' | 'uri';
  target: string;
  fragment: string | null;
  label: string;
  document_id: string | null;
  title: string | null;
  start: number;
  end: number;
  target_start: number;
  target_end: number;
}

export interface DocumentLinks {
  document_id: string;
  links: Link[];
  count: number;
  broken: number;
}

export interface Backlinks {
  document_id: string;
  backlinks: Array<{
    document_id: string;
    title: string;
    links: number;
    label: string;
    passage: string;
  }>;
  count: number;
  next_cursor: string | null;
}

export interface BrokenLinks {
  prefix: string;
  items: Array<{
    document_id: string;
    title: string;
    kind: Link['kind'];
    target: string;
    fragment: string | null;
    label: string;
    passage: string;
  }>;
  documents_read: number;
  next_cursor: string | null;
}

export interface Neighbourhood {
  document_id: string;
  title: string;
  depth: number;
  neighbours: Array<{
    document_id: string;
    title: string;
    depth: number;
    direction: 'links_to' | 'linked_from';
    from: string;
    label: string;
    passage: string;
  }>;
  edges: Array<{ from: string; to: string }>;
  truncated: boolean;
}

export interface DocumentSummary {
  document_id: string;
  title: string;
  tags: string[];
  revision: number;
  updated_at: string;
  vector_status?: string;
}

export interface Document extends DocumentSummary {
  body: string;
  metadata: Record<string, unknown>;
  created_at: string;
  vector_status: string;
  /** GET's: the source that keeps it in sync (read-only to every other writer), or null. */
  source?: { id: string; uri: string } | null;
}

export interface ListResult {
  items: DocumentSummary[];
  total?: number;
  next_offset?: number | null;
}

export interface SearchHit {
  document_id: string;
  title: string;
  score: number;
  heading_path: string;
  snippet: string;
}

export interface HistoryEntry {
  revision: number;
  title: string;
  tags: string[];
  body_bytes: number;
  deleted_at: string | null;
  reason: string;
  actor: string;
  snapshot_at: string;
}

/** What a source's run did, by kind of outcome (`GET /sources`). */
export type RunCounts = Record<
  | 'checked'
  | 'created'
  | 'updated'
  | 'moved'
  | 'unchanged'
  | 'deleted'
  | 'held'
  | 'skipped'
  | 'failed',
  number
>;

export interface SourceRun {
  id: string;
  source_id: string;
  status: 'queued' | 'running' | 'succeeded' | 'completed_with_errors' | 'failed' | 'cancelled';
  trigger: string;
  confirm_deletions: boolean;
  queued_at: string;
  started_at: string | null;
  finished_at: string | null;
  version: string | null;
  counts: RunCounts;
  failed_items: Array<{ key: string; document_id: string; reason: string }>;
  message: string | null;
}

export interface Source {
  id: string;
  kind: 'folder' | 'git' | 'web';
  mount: string;
  origin: 'file' | 'api';
  declaration: { url?: string; path?: string; ref?: string; every?: string };
  state: 'idle' | 'queued' | 'running' | 'paused' | 'failing';
  /** Null for a caller who may not read the whole mount. */
  documents: number | null;
  next_run_at: string | null;
  last_success_at: string | null;
  failures: number;
  held_deletions: number;
  last_run: SourceRun | null;
}

/** `/sources/<id>` and below. */
export function sourcePath(id: string, suffix = ''): string {
  return `/sources/${encodeURIComponent(id)}${suffix}`;
}
