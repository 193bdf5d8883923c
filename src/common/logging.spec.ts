import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config/load-config';
import type { RoutedRequest } from './http-server';
import { createRootLogger, PinoNestLogger, requestLogging } from './logging';

/**
 * What the logger writes, read back from a file: a file is not a terminal, as the pipe of a
 * container or a service manager is not.
 */
describe('the process logger', () => {
  let dir: string;
  let path: string;
  let fd: number;
  let server: Server | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'agent-data-logging-'));
    path = join(dir, 'log');
    fd = openSync(path, 'w');
  });
  afterEach(async () => {
    await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
    server = undefined;
    closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  });

  const written = () => readFileSync(path, 'utf8').split('\n').filter(Boolean);

  /** One GET answered with 200 on a real loopback server, logged as the application does. */
  async function aRequest(root: ReturnType<typeof createRootLogger>): Promise<void> {
    const observe = requestLogging(root);
    let logged: Promise<unknown> = Promise.resolve();
    server = createServer((req, res) => {
      const routed = req as RoutedRequest;
      routed.originalUrl = req.url!;
      observe(routed, res);
      // Listeners run in order: once this one runs, the observer's has written its line.
      logged = new Promise((resolve) => res.once('close', resolve));
      res.end('ok');
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve, reject) => {
      httpRequest(
        {
          port,
          host: '127.0.0.1',
          path: '/documents?limit=2',
          headers: { 'X-API-Key': 'the-key-itself', Cookie: 'session=the-cookie' },
        },
        (res) => res.resume().on('end', resolve),
      )
        .on('error', reject)
        .end();
    });
    await logged;
  }

  it('writes JSON lines when the log is not a terminal (LOG_FORMAT auto)', () => {
    const root = createRootLogger(loadConfig({}), fd);
    new PinoNestLogger(root).log('listening on http://127.0.0.1:8080', 'Main');
    expect(written().map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({
        level: 30,
        context: 'Main',
        msg: 'listening on http://127.0.0.1:8080',
      }),
    ]);
  });

  it('writes one readable line per entry with LOG_FORMAT pretty, a request as method, path, status and time', async () => {
    const root = createRootLogger(loadConfig({ LOG_FORMAT: 'pretty' }), fd);
    new PinoNestLogger(root).log('listening on http://127.0.0.1:8080', 'Main');
    await aRequest(root);
    const lines = written();
    expect(lines).toHaveLength(2);
    // No colours: the file is not a terminal.
    expect(lines[0]).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: Main: listening on http:\/\/127\.0\.0\.1:8080$/,
    );
    expect(lines[1]).toMatch(
      /^\[\d\d:\d\d:\d\d\.\d{3}\] INFO: GET \/documents\?limit=2 200 [\d.]+ ms$/,
    );
  });

  it('leaves Nest start-up chatter (modules, routes) to debug', () => {
    for (const level of ['info', 'debug']) {
      const file = join(dir, level);
      const out = openSync(file, 'w');
      const nest = new PinoNestLogger(createRootLogger(loadConfig({ LOG_LEVEL: level }), out));
      nest.log('AppModule dependencies initialized', 'InstanceLoader');
      nest.log('DocumentsController {/documents}:', 'RoutesResolver');
      nest.log('Mapped {/documents, GET} route', 'RouterExplorer');
      nest.log('Nest application successfully started', 'NestApplication');
      closeSync(out);
      const messages = readFileSync(file, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => (JSON.parse(line) as { msg: string }).msg);
      expect(messages).toEqual(
        level === 'info'
          ? ['Nest application successfully started']
          : [
              'AppModule dependencies initialized',
              'DocumentsController {/documents}:',
              'Mapped {/documents, GET} route',
              'Nest application successfully started',
            ],
      );
    }
  });

  it('logs a request its client left before the answer as aborted, at warn (no server error)', async () => {
    const observe = requestLogging(createRootLogger(loadConfig({ LOG_LEVEL: 'info' }), fd));
    let closed!: Promise<unknown>;
    const arrived = new Promise<void>((resolve) => {
      server = createServer((req, res) => {
        const routed = req as RoutedRequest;
        routed.originalUrl = req.url!;
        observe(routed, res);
        closed = new Promise((done) => res.once('close', done));
        resolve(); // and never answered
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    const { port } = server!.address() as AddressInfo;
    const client = httpRequest({ port, host: '127.0.0.1', path: '/documents' }).on(
      'error',
      () => {},
    );
    client.end();
    await arrived;
    client.destroy();
    await closed;
    const [line] = written().map((text) => JSON.parse(text));
    expect(line).toMatchObject({ level: 40, msg: 'request aborted', req: { url: '/documents' } });
  });

  it('logs a request without its headers at info, and with them, redacted, at debug', async () => {
    await aRequest(createRootLogger(loadConfig({ LOG_LEVEL: 'info' }), fd));
    const [atInfo] = written().map((line) => JSON.parse(line));
    expect(atInfo).toMatchObject({
      req: { method: 'GET', url: '/documents?limit=2' },
      res: { statusCode: 200 },
      msg: 'request completed',
    });
    expect(atInfo.req).not.toHaveProperty('headers');

    await new Promise((resolve) => server!.close(resolve));
    server = undefined;
    const debugFile = join(dir, 'debug');
    const out = openSync(debugFile, 'w');
    await aRequest(createRootLogger(loadConfig({ LOG_LEVEL: 'debug' }), out));
    closeSync(out);
    const text = readFileSync(debugFile, 'utf8');
    expect(JSON.parse(text.trim()).req.headers).toMatchObject({
      'x-api-key': '[redacted]',
      cookie: '[redacted]',
      host: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
    });
    expect(text).not.toContain('the-key-itself');
    expect(text).not.toContain('the-cookie');
  });
});
