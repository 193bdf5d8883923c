import type { RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { OutgoingHttpHeaders } from 'node:http';
import type { Logger } from 'pino';
import { LOCAL_AGENT_HEADER } from '../auth/local-agent';
import type { AppConfig } from '../config/app-config';
import {
  databaseIdentity,
  liveAnnouncement,
  type ServerAnnouncement,
} from '../local-server/server-announcement';
import { INTERNAL_ERROR, jsonRpcError } from '../transport/json-rpc-envelope';
import { InFlightLimit } from '../transport/in-flight-limit';
import { oversizedLine, unparsableLine } from '../transport/stdio-lines';
import { RelayError, type McpRelay } from './mcp-relay';
import { relayHeaders } from './relay-headers';
import type { StdioSession } from './stdio-serve';

/** Where the session's messages go, and as whom. */
interface Target {
  readonly url: string;
  readonly endpoint: URL;
  readonly credentials: OutgoingHttpHeaders;
  /** Whether it acts as the local user with the announcement's token (no API key). */
  readonly local: boolean;
}

/**
 * The server a bridged session talks to: the one announced in DATA_DIR when the session
 * started, and, once it stops answering, whichever is announced there next (it may come
 * back on another port). Never the in-process application: a session keeps one mode.
 */
export class ServerLink {
  private target: Target;
  private lost = false;
  private finding: Promise<Target> | undefined;

  constructor(
    private readonly config: Pick<AppConfig, 'dataDir' | 'databaseUrl'>,
    /** The profile's endpoint path (`/mcp`, `/readonly/mcp`...). */
    private readonly path: string,
    private readonly apiKey: string | undefined,
    announced: ServerAnnouncement,
    private readonly log: Pick<Logger, 'info' | 'warn'>,
  ) {
    this.target = this.targetOf(announced);
  }

  /** Whether `announced` serves the database this command would open itself. */
  static servesOurDatabase(
    announced: ServerAnnouncement,
    config: Pick<AppConfig, 'databaseUrl'>,
  ): boolean {
    return announced.database === databaseIdentity(config.databaseUrl, announced.local_token);
  }

  get url(): string {
    return this.target.url;
  }

  /** The server to send to now; rejects with {@link RelayError} while none answers. */
  current(): Promise<Target> {
    if (!this.lost) return Promise.resolve(this.target);
    this.finding ??= this.find().finally(() => (this.finding = undefined));
    return this.finding;
  }

  /**
   * After the server turned down the announcement's token: whether DATA_DIR now announces
   * another one (the server started again, on the same port), which is then used.
   */
  async refresh(): Promise<boolean> {
    const announced = await liveAnnouncement(this.config.dataDir);
    if (announced === undefined || !ServerLink.servesOurDatabase(announced, this.config)) {
      return false;
    }
    const next = this.targetOf(announced);
    if (JSON.stringify(next.credentials) === JSON.stringify(this.target.credentials)) return false;
    this.target = next;
    this.log.info(`reached the Agent Data server at ${announced.url} (pid ${announced.pid})`);
    return true;
  }

  /** The server did not answer: look in DATA_DIR again before the next request. */
  markLost(): void {
    if (!this.lost) this.log.warn(`the Agent Data server at ${this.target.url} does not answer`);
    this.lost = true;
  }

  private async find(): Promise<Target> {
    const { dataDir } = this.config;
    const announced = await liveAnnouncement(dataDir);
    if (announced === undefined) {
      throw new RelayError(
        `no Agent Data server answers on DATA_DIR ${dataDir} (it was at ${this.target.url}); agent-data mcp reaches it again once it runs`,
        true,
      );
    }
    if (!ServerLink.servesOurDatabase(announced, this.config)) {
      throw new RelayError(
        `the Agent Data server now at ${announced.url} serves another database than this agent's (DATABASE_URL)`,
        true,
      );
    }
    this.target = this.targetOf(announced);
    this.lost = false;
    this.log.info(`reached the Agent Data server at ${announced.url} (pid ${announced.pid})`);
    return this.target;
  }

  private targetOf(announced: ServerAnnouncement): Target {
    return {
      url: announced.url,
      endpoint: new URL(this.path, announced.url),
      local: this.apiKey === undefined,
      // A key decides alone; without one, the token of server.json makes this the local user.
      credentials:
        this.apiKey === undefined
          ? { [LOCAL_AGENT_HEADER]: announced.local_token }
          : { authorization: `Bearer ${this.apiKey}` },
    };
  }
}

export interface BridgeSessionOptions {
  readonly relay: McpRelay;
  readonly link: ServerLink;
  /**
   * Writes one protocol message (a line of JSON, newline included) to stdout; `false` when the
   * client reads slower than lines come (then {@link onDrain} says when to go on).
   */
  readonly write: (line: string) => boolean | void;
  /** Calls `resume` once what waited to be written has been (at once if nothing waits). */
  readonly onDrain?: (resume: () => void) => void;
  /** Stops (`true`) or resumes (`false`) reading stdin. */
  readonly backpressure?: (paused: boolean) => void;
}

/**
 * One MCP client on stdin/stdout relayed to a server's HTTP endpoint: each line is
 * POSTed as it is, with the headers an HTTP client sends (relay-headers.ts), and every
 * message of the answer written as a line; the server applies its rules to both eras.
 * What never reaches the server: a line that is not JSON (-32700), one over
 * MAX_REQUEST_BYTES (-32600), and `notifications/cancelled`, which aborts the named
 * request's POST (its answer is then never written; a 2026-era request is cancelled on the
 * server as its connection closes). Requests run concurrently within the stdio session's
 * bound. A request the server cannot answer (it went away) gets -32603 naming why.
 */
export class BridgeSession implements StdioSession {
  private legacyVersion: string | undefined;
  private readonly running = new Map<RequestId, AbortController>();
  private readonly limit: InFlightLimit;
  private readonly settled = new Set<Promise<void>>();

  constructor(private readonly options: BridgeSessionOptions) {
    this.limit = new InFlightLimit(options.backpressure);
  }

  receive(line: string): void {
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      this.options.write(`${JSON.stringify(unparsableLine(error))}\n`);
      return;
    }
    const cancelled = cancelledRequest(value);
    if (cancelled !== undefined) {
      this.running.get(cancelled)?.abort();
      return;
    }
    const work = this.forward(value, line).catch(() => undefined);
    this.settled.add(work);
    void work.finally(() => this.settled.delete(work));
  }

  oversized(bytes: number, limit: number): void {
    this.options.write(`${JSON.stringify(oversizedLine(bytes, limit))}\n`);
  }

  async drain(): Promise<void> {
    while (this.settled.size > 0) await Promise.all([...this.settled]);
  }

  cancelAll(): void {
    for (const controller of this.running.values()) controller.abort();
  }

  private async forward(value: unknown, line: string): Promise<void> {
    const ids = requestIds(value);
    const controller = new AbortController();
    const single = Array.isArray(value) ? undefined : ids[0];
    if (single !== undefined) this.running.set(single, controller);
    try {
      await this.limit.run(() => this.relay(value, line, ids, controller.signal));
    } finally {
      if (single !== undefined && this.running.get(single) === controller) {
        this.running.delete(single);
      }
    }
  }

  /**
   * POSTs one line and writes the answer's messages. A 401 to the announcement's token is
   * held back once: when DATA_DIR announces a new token (the server started again on the
   * same port), the line goes again with it.
   */
  private async relay(
    value: unknown,
    line: string,
    ids: readonly RequestId[],
    signal: AbortSignal,
  ): Promise<void> {
    const { relay, link } = this.options;
    let responded = false;
    try {
      for (let attempt = 0; ; attempt++) {
        const target = await link.current();
        const held: string[] = [];
        const { status } = await relay.post(
          target.endpoint,
          line,
          { ...relayHeaders(value, this.legacyVersion), ...target.credentials },
          signal,
          (message, text, status) => {
            if (signal.aborted) return;
            if (status === 401 && target.local && attempt === 0) {
              held.push(text);
              return;
            }
            responded ||= isResponse(message);
            this.learnVersion(value, message);
            const { onDrain } = this.options;
            if (this.options.write(`${text}\n`) === false && onDrain !== undefined) {
              return new Promise<void>((resume) => onDrain(resume));
            }
          },
        );
        if (held.length > 0 && !signal.aborted) {
          if (await link.refresh()) continue;
          for (const text of held) this.options.write(`${text}\n`);
          return;
        }
        if (!responded && ids.length > 0 && !signal.aborted) {
          this.fail(
            ids,
            `the Agent Data server at ${link.url} answered HTTP ${status} without a result`,
          );
        }
        return;
      }
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof RelayError && error.unreachable) link.markLost();
      // Progress an SSE answer already delivered stays; the request still gets its error.
      if (!responded) this.fail(ids, (error as Error).message);
    }
  }

  /** After a successful `initialize`, the 2025-era requests speak the version it settled. */
  private learnVersion(sent: unknown, answer: unknown): void {
    const request = sent as { id?: unknown; method?: unknown };
    if (request.method !== 'initialize') return;
    const reply = answer as { id?: unknown; result?: { protocolVersion?: unknown } } | null;
    const version = reply?.result?.protocolVersion;
    if (reply?.id === request.id && typeof version === 'string') this.legacyVersion = version;
  }

  private fail(ids: readonly RequestId[], reason: string): void {
    for (const id of ids) {
      this.options.write(
        `${JSON.stringify(jsonRpcError(id, INTERNAL_ERROR, `Internal error: ${reason}`))}\n`,
      );
    }
  }
}

/** Whether a message from the server answers a request (a batch's answer is an array). */
function isResponse(message: unknown): boolean {
  if (Array.isArray(message)) return true;
  return (
    typeof message === 'object' && message !== null && ('result' in message || 'error' in message)
  );
}

/** The ids of the requests in a message or a batch (those a client waits an answer for). */
function requestIds(value: unknown): RequestId[] {
  const messages = Array.isArray(value) ? (value as unknown[]) : [value];
  const ids: RequestId[] = [];
  for (const message of messages) {
    if (typeof message !== 'object' || message === null) continue;
    const { id, method } = message as { id?: unknown; method?: unknown };
    if (typeof method === 'string' && (typeof id === 'string' || typeof id === 'number')) {
      ids.push(id);
    }
  }
  return ids;
}

/** The request a well-formed `notifications/cancelled` names, if `value` is one. */
function cancelledRequest(value: unknown): RequestId | undefined {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const message = value as { method?: unknown; id?: unknown; params?: { requestId?: unknown } };
  if (message.method !== 'notifications/cancelled' || 'id' in message) return undefined;
  const id = message.params?.requestId;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}
