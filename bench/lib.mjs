// Closed-loop load generator: `concurrency` workers on keep-alive connections, each sending
// its next request as soon as the previous one answered. Latencies are exact (every request
// is timed with hrtime), so p95 is a real p95, not an interpolated histogram bucket.
import http from 'node:http';

/**
 * @param {object} options
 * @param {string} options.baseUrl
 * @param {number} options.concurrency
 * @param {number} options.requests  requests that count (after warm-up)
 * @param {number} [options.warmup]  requests sent first and not counted (default: 2 × concurrency)
 * @param {(i: number) => {method?: string, path: string, headers?: object, body?: unknown}} options.request
 * @param {(status: number) => boolean} [options.ok]  which statuses count as success (default 2xx)
 */
export async function load({
  baseUrl,
  concurrency,
  requests,
  warmup = concurrency * 2,
  request,
  ok,
}) {
  const url = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const isOk = ok ?? ((status) => status >= 200 && status < 300);
  const latencies = [];
  const statuses = {};
  let errors = 0;
  let next = 0;
  const total = warmup + requests;
  let started = 0n;

  const worker = async () => {
    while (next < total) {
      const i = next++;
      if (i === warmup) started = process.hrtime.bigint();
      const spec = request(i);
      const t0 = process.hrtime.bigint();
      let status;
      try {
        status = await send(agent, url, spec);
      } catch {
        status = 0;
      }
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (i < warmup) continue;
      latencies.push(ms);
      statuses[status] = (statuses[status] ?? 0) + 1;
      if (!isOk(status)) errors++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = Number(process.hrtime.bigint() - (started || process.hrtime.bigint())) / 1e9;
  agent.destroy();
  return { ...summarize(latencies), rps: round(latencies.length / seconds), errors, statuses };
}

/** p50/p95/p99/max (ms) of a list of latencies, nearest-rank. */
export function summarize(latencies) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const at = (p) =>
    sorted.length === 0
      ? NaN
      : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
  return {
    requests: sorted.length,
    p50: round(at(50)),
    p95: round(at(95)),
    p99: round(at(99)),
    max: round(sorted[sorted.length - 1]),
  };
}

export function round(value) {
  return Math.round(value * 100) / 100;
}

function send(agent, url, { method = 'GET', path, headers = {}, body }) {
  return new Promise((resolve, reject) => {
    const payload =
      body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const req = http.request(
      {
        agent,
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: {
          ...(payload !== undefined
            ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
            : {}),
          ...headers,
        },
      },
      (res) => {
        res.on('data', () => undefined);
        res.on('end', () => resolve(res.statusCode));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    if (payload !== undefined) req.write(payload);
    req.end();
  });
}
