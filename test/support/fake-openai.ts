import { createServer, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LocalEmbedder } from '../../src/vectors/embedders/local.embedder';

export interface EmbeddingRequest {
  readonly model: string;
  readonly input: string[];
  readonly dimensions?: number;
  readonly encoding_format?: string;
  readonly authorization?: string;
}

/**
 * A real HTTP server on 127.0.0.1 speaking OpenAI's `POST /v1/embeddings`. Vectors come from
 * the local feature-hashing embedder, so search over them behaves sensibly. It can fail on
 * purpose (a status for the next N requests, or until told to recover), answer vectors of a
 * wrong length, and hold requests until released.
 */
export class FakeOpenAi {
  /** Every request received, failed ones included, in arrival order. */
  readonly requests: EmbeddingRequest[] = [];
  /** Requests answered with a failure status. */
  failures = 0;
  private server: Server | undefined;
  private failNextQueue: number[] = [];
  private outageStatus: number | undefined;
  private vectorLength: number | undefined;
  private hold: ((request: EmbeddingRequest) => boolean) | undefined;
  private readonly held: (() => void)[] = [];
  private heldWaiters: (() => void)[] = [];

  /** Base URL for OPENAI_BASE_URL (`/v1` included). */
  url = '';

  constructor(private readonly dimensions = 64) {}

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
    return this;
  }

  async close(): Promise<void> {
    this.release();
    await new Promise<void>((resolve) => {
      this.server?.closeAllConnections();
      this.server?.close(() => resolve());
    });
  }

  /** The next requests get these statuses, one each (e.g. `[429, 500]`). */
  failNext(...statuses: number[]): void {
    this.failNextQueue.push(...statuses);
  }

  /** Every request gets `status` until {@link recover}. */
  outage(status = 503): void {
    this.outageStatus = status;
  }

  recover(): void {
    this.outageStatus = undefined;
  }

  /** Answer vectors of this length instead of the configured one. */
  answerLength(length: number | undefined): void {
    this.vectorLength = length;
  }

  /** Requests for which `predicate` holds wait until {@link release}. */
  holdWhen(predicate: (request: EmbeddingRequest) => boolean): void {
    this.hold = predicate;
  }

  /** Lets held requests (and later ones) through. */
  release(): void {
    this.hold = undefined;
    this.held.splice(0).forEach((go) => go());
  }

  get heldCount(): number {
    return this.held.length;
  }

  /** Resolves once at least one request is being held. */
  async waitForHeld(): Promise<void> {
    if (this.held.length > 0) return;
    await new Promise<void>((resolve) => this.heldWaiters.push(resolve));
  }

  /** Held requests whose client went away before their answer. */
  abandoned = 0;
  private abandonedWaiters: (() => void)[] = [];

  /** Resolves once a held request's client has gone away (it cancelled the request). */
  async waitForAbandoned(): Promise<void> {
    if (this.abandoned > 0) return;
    await new Promise<void>((resolve) => this.abandonedWaiters.push(resolve));
  }

  /** All texts received in requests that were answered with vectors. */
  embeddedInputs(): string[] {
    return this.answered.flatMap((r) => r.input);
  }

  private readonly answered: EmbeddingRequest[] = [];

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
      return send(res, 404, { error: { message: `no route ${req.method} ${req.url}` } });
    }
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as EmbeddingRequest & {
      input: string | string[];
    };
    const request: EmbeddingRequest = {
      model: body.model,
      input: Array.isArray(body.input) ? body.input : [body.input],
      dimensions: body.dimensions,
      encoding_format: body.encoding_format,
      authorization: req.headers.authorization,
    };
    this.requests.push(request);

    const status = this.failNextQueue.shift() ?? this.outageStatus;
    if (status !== undefined) {
      this.failures++;
      // retry-after-ms keeps the client's own retries quick in tests.
      return send(
        res,
        status,
        { error: { message: `fake failure ${status}`, type: 'server_error' } },
        {
          'retry-after-ms': '5',
        },
      );
    }
    if (this.hold?.(request)) {
      res.once('close', () => {
        if (!res.writableFinished) {
          this.abandoned++;
          this.abandonedWaiters.splice(0).forEach((wake) => wake());
        }
      });
      await new Promise<void>((resolve) => {
        this.held.push(resolve);
        this.heldWaiters.splice(0).forEach((wake) => wake());
      });
    }
    const length = this.vectorLength ?? request.dimensions ?? this.dimensions;
    const embedder = new LocalEmbedder(length);
    const data = request.input.map((text, index) => {
      const vector = embedder.embedOne(text);
      return {
        object: 'embedding',
        index,
        embedding:
          request.encoding_format === 'base64'
            ? Buffer.from(vector.buffer).toString('base64')
            : Array.from(vector),
      };
    });
    this.answered.push(request);
    send(res, 200, {
      object: 'list',
      model: request.model,
      data: data.reverse(), // order must come from `index`, not position
      usage: { prompt_tokens: 1, total_tokens: 1 },
    });
  }
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}
