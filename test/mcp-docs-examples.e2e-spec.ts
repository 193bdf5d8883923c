import { execFile, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startTestApp, TestApp } from './support/app';
import { CURL_EXAMPLES, type CurlExample } from './support/mcp-curl-examples';
import { parseCurl } from './support/mcp-curl';
import { send, sseEvents, type RawResponse } from './support/mcp-http';

const KEY = 'readme-key-0123456789abcdef';
const env = { AGENT_DATA_KEY: KEY };
const CURL = spawnSync('curl', ['--version']).status === 0;

/** Points an example at the test server instead of the documented 127.0.0.1:8080. */
function relocate(url: string, baseUrl: string): string {
  const target = new URL(url);
  return new URL(`${target.pathname}${target.search}`, baseUrl).toString();
}

/**
 * Runs the example through the real curl binary, with -i to see status and headers.
 * Asynchronously: the server under test lives in this process.
 */
async function runCurl(example: CurlExample, baseUrl: string): Promise<RawResponse> {
  const request = parseCurl(example.command, env);
  const argv = request.argv.map((arg) => (arg === request.url ? relocate(arg, baseUrl) : arg));
  if (!argv.some((arg) => /^-[sSN]*i[sSN]*$/.test(arg))) argv.unshift('-i');
  const stdout = await new Promise<string>((resolve, reject) =>
    execFile('curl', ['--max-time', '20', ...argv], { encoding: 'utf8' }, (error, out, stderr) =>
      error ? reject(new Error(`curl failed: ${stderr || error.message}`)) : resolve(out),
    ),
  );
  const split = stdout.indexOf('\r\n\r\n');
  const [statusLine, ...lines] = stdout.slice(0, split).split('\r\n');
  const headers = Object.fromEntries(
    lines.map((line) => [
      line.slice(0, line.indexOf(':')).toLowerCase(),
      line.slice(line.indexOf(':') + 1).trim(),
    ]),
  );
  const text = stdout.slice(split + 4);
  return {
    status: Number(statusLine.split(' ')[1]),
    headers,
    text,
    body: decode(headers['content-type'], text),
  };
}

/** Runs the same request from Node, for machines without curl. */
async function runNode(example: CurlExample, baseUrl: string): Promise<RawResponse> {
  const request = parseCurl(example.command, env);
  const url = new URL(relocate(request.url, baseUrl));
  return send(baseUrl, {
    method: request.method,
    path: url.pathname,
    headers: request.headers,
    body: request.body,
  });
}

function decode(contentType: string | undefined, text: string): unknown {
  if (text === '') return undefined;
  if ((contentType ?? '').startsWith('text/event-stream')) return sseEvents(text)[0].data;
  return JSON.parse(text);
}

function check(example: CurlExample, response: RawResponse): void {
  expect(response.status).toBe(example.expect.status);
  const type = response.headers['content-type'];
  if (example.expect.framing === 'none') {
    expect(response.text).toBe('');
  } else if (example.expect.framing === 'sse') {
    expect(type).toBe('text/event-stream; charset=utf-8');
    expect(response.text).toMatch(/^event: message\ndata: .*\n\n$/);
  } else {
    expect(type).toBe('application/json; charset=utf-8');
  }
  if (example.expect.body) expect(response.body).toMatchObject(example.expect.body);
  for (const [name, value] of Object.entries(example.expect.headers ?? {})) {
    expect(response.headers[name]).toBe(value);
  }
}

describe('the curl examples of docs/mcp.md', () => {
  let open: TestApp;
  let keyed: TestApp;
  beforeAll(async () => {
    open = await startTestApp();
    keyed = await startTestApp({ API_KEYS: `readme:${KEY}:internal,readonly,gpt` });
  });
  afterAll(async () => {
    await open.close();
    await keyed.close();
  });

  const appFor = (example: CurlExample) =>
    example.command.includes('$AGENT_DATA_KEY') ? keyed : open;

  it.each(CURL_EXAMPLES.map((example) => [example.title, example] as const))(
    '%s (replayed from Node)',
    async (_title, example) => {
      check(example, await runNode(example, appFor(example).baseUrl));
    },
  );

  (CURL ? it.each : it.skip.each)(
    CURL_EXAMPLES.map((example) => [example.title, example] as const),
  )('%s (the real curl)', async (_title, example) => {
    check(example, await runCurl(example, appFor(example).baseUrl));
  });

  it('docs/mcp.md shows every example, verbatim, with its title', () => {
    const readme = readFileSync(join(__dirname, '..', 'docs', 'mcp.md'), 'utf8');
    for (const example of CURL_EXAMPLES) {
      expect(readme).toContain(`# ${example.title}\n${example.command}\n`);
    }
  });

  it('the keyed example is refused without its key', async () => {
    const example = CURL_EXAMPLES.find((e) => e.command.includes('$AGENT_DATA_KEY'))!;
    const request = parseCurl(example.command, { AGENT_DATA_KEY: 'wrong-key-0123456789abcdef' });
    const response = await send(keyed.baseUrl, {
      method: request.method,
      path: new URL(request.url).pathname,
      headers: request.headers,
      body: request.body,
    });
    expect(response.status).toBe(401);
  });
});
