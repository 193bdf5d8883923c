import { createHash } from 'node:crypto';
import {
  createServer,
  type IncomingHttpHeaders,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/** A file the fake hub serves, and how it misbehaves. */
export interface HubFile {
  readonly data: Buffer;
  /** Kept in LFS: the hub redirects to its CDN and announces the SHA-256; else the git SHA-1. */
  readonly lfs?: boolean;
  /** Announce this hash rather than the file's own. */
  readonly announce?: string;
  /** The first GET of the whole file sends this share of it, then the connection is cut. */
  readonly cutAt?: number;
  /** Answer the GET with a web page (the HEAD as for the file). */
  readonly webPage?: boolean;
  /** Answer the GET's head, then send nothing. */
  readonly silent?: boolean;
  /** Answer 401 unless this bearer token comes. */
  readonly token?: string;
  /** Redirect to itself, for ever. */
  readonly loop?: boolean;
  /** Answer a range request with the whole file (200), as some servers do. */
  readonly ignoresRanges?: boolean;
}

/** A request as the fake hub or its CDN saw it. */
export interface SeenRequest {
  readonly server: 'hub' | 'cdn';
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
}

/**
 * Hugging Face as `agent-data models pull` sees it, on 127.0.0.1: `/REPO/resolve/REV/PATH`
 * answers a HEAD or a GET as the hub does, an LFS file by a 302 to a CDN (another origin,
 * so another server) carrying `X-Linked-Etag` (its SHA-256) and `X-Linked-Size`, a file kept
 * in git directly with its git blob SHA-1 as `ETag`; both serve byte ranges (`If-Range`
 * honoured) and 416 past the end. Every request is recorded.
 */
export class FakeHub {
  readonly files = new Map<string, HubFile>();
  readonly requests: SeenRequest[] = [];
  private readonly hub = createServer((req, res) => this.answerHub(req, res));
  private readonly cdn = createServer((req, res) => this.answerCdn(req, res));
  private readonly served = new Set<string>();

  /** Starts both servers; resolves with the hub's base URL (MODELS_BASE_URL). */
  async start(): Promise<string> {
    await Promise.all([listen(this.hub), listen(this.cdn)]);
    return this.url(this.hub);
  }

  async close(): Promise<void> {
    for (const server of [this.hub, this.cdn]) server.closeAllConnections();
    await Promise.all([this.hub, this.cdn].map((s) => new Promise((r) => s.close(r))));
  }

  /** Serves `file` at `/REPO/resolve/main/PATH`; forgets what was served before. */
  serve(repo: string, path: string, file: HubFile): void {
    this.files.set(`/${repo}/resolve/main/${path}`, file);
    this.served.clear();
  }

  private answerHub(req: IncomingMessage, res: ServerResponse): void {
    const path = decodeURIComponent(new URL(req.url!, 'http://hub').pathname);
    this.requests.push({ server: 'hub', method: req.method!, path, headers: req.headers });
    const file = this.files.get(path);
    if (file === undefined) {
      res.writeHead(404, { 'x-error-code': 'EntryNotFound', 'content-type': 'text/plain' });
      res.end('Entry not found');
      return;
    }
    if (file.token !== undefined && req.headers.authorization !== `Bearer ${file.token}`) {
      res.writeHead(401, { 'x-error-code': 'GatedRepo' });
      res.end('Access to this repository is restricted');
      return;
    }
    if (file.loop) {
      res.writeHead(302, { location: req.url! }).end();
      return;
    }
    if (file.lfs) {
      const sha256 = createHash('sha256').update(file.data).digest('hex');
      res.writeHead(302, {
        location: `${this.url(this.cdn)}/blobs/${encodeURIComponent(path)}?signature=abc`,
        'x-linked-etag': `"${file.announce ?? sha256}"`,
        'x-linked-size': String(file.data.length),
        // The ETag of the LFS pointer kept in git, not of the file.
        etag: `"${createHash('sha1').update(path).digest('hex')}"`,
        'content-length': '0',
      });
      res.end();
      return;
    }
    const blob = createHash('sha1').update(`blob ${file.data.length}\0`).update(file.data);
    this.answerFile(req, res, path, file, `"${file.announce ?? blob.digest('hex')}"`);
  }

  private answerCdn(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url!, 'http://cdn');
    const path = decodeURIComponent(url.pathname.replace(/^\/blobs\//, ''));
    this.requests.push({ server: 'cdn', method: req.method!, path, headers: req.headers });
    const file = this.files.get(path);
    if (file === undefined || url.searchParams.get('signature') !== 'abc') {
      res.writeHead(403).end();
      return;
    }
    // A CDN's ETag: an MD5, no hash the hub announces.
    this.answerFile(req, res, path, file, `"${createHash('md5').update(file.data).digest('hex')}"`);
  }

  /** The file itself, whole or a range of it, or its misbehaviour. */
  private answerFile(
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    file: HubFile,
    etag: string,
  ): void {
    const size = file.data.length;
    const head = { etag, 'accept-ranges': 'bytes', 'content-type': 'application/octet-stream' };
    if (req.method === 'HEAD') {
      res.writeHead(200, { ...head, 'content-length': String(size) });
      res.end();
      return;
    }
    if (file.webPage) {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end('<!doctype html><title>Sign in</title><form>…</form>');
      return;
    }
    if (file.silent) {
      res.writeHead(200, { ...head, 'content-length': String(size) });
      res.flushHeaders();
      return; // and nothing more, until the client gives up
    }
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const ifRange = req.headers['if-range'];
    if (range && !file.ignoresRanges && (ifRange === undefined || ifRange === etag)) {
      const start = Number(range[1]);
      if (start >= size) {
        res.writeHead(416, { 'content-range': `bytes */${size}` }).end();
        return;
      }
      res.writeHead(206, {
        ...head,
        'content-range': `bytes ${start}-${size - 1}/${size}`,
        'content-length': String(size - start),
      });
      res.end(file.data.subarray(start));
      return;
    }
    res.writeHead(200, { ...head, 'content-length': String(size) });
    if (file.cutAt !== undefined && !this.served.has(path)) {
      this.served.add(path);
      res.write(file.data.subarray(0, Math.floor(size * file.cutAt)), () =>
        setTimeout(() => res.socket?.destroy(), 50),
      );
      return;
    }
    res.end(file.data);
  }

  private url(server: Server): string {
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }
}

function listen(server: Server): Promise<void> {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
}
