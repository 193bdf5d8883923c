// MCP over Streamable HTTP at concurrency 10 (targets in docs/performance.md): initialize, tools/list,
// list_documents over the seeded documents, get_document, batch_read of 3, and the writes;
// then the 2026-07-28 era: server/discover, tools/list, resources/list (first and
// deep pages), resources/read and completion/complete, each compared by p97.5 with tools/list
// or get_document of the same run (target: within 1.5×).
// Each scenario first sends one request and checks its answer (no JSON-RPC error, no
// isError), so a fast wrong answer is never reported as a latency.
// Baselines (docs/performance.md), run beside the scenario they measure with the same
// requests: bare node:http answering our tools/list bytes and the official SDK's stateless
// server listing our tools (for tools/list), and the same SQL straight through `pg` (for
// list_documents, get_document, batch_read); see bench/baselines.mjs. The ratio of
// requests/s is printed next to our row.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  envelope,
  mcpHeaders as withMcpHeaders,
  round,
  seededId,
  startBaseline,
  toolCall,
} from '../lib.mjs';

const CONCURRENCY = 10;
const ENDPOINT = '/mcp';

export default async function mcp({
  baseUrl,
  headers,
  load,
  documentCount,
  query,
  log,
  databaseUrl,
  settle,
}) {
  const folders = Math.max(1, Math.floor(documentCount / 100));
  const pick = (i) => (i * 7919) % documentCount;
  const idOf = seededId;
  const mcpHeaders = withMcpHeaders(headers);
  const tool = toolCall;
  const rows = [];

  // `extraHeaders`: fixed, or per request (2026 headers mirror the body).
  async function scenario(name, target, requests, body, extraHeaders = {}, compareWith) {
    const headersOf = (i) => (typeof extraHeaders === 'function' ? extraHeaders(i) : extraHeaders);
    const sample = await fetch(`${baseUrl}${ENDPOINT}`, {
      method: 'POST',
      headers: { ...mcpHeaders, ...headersOf(-1) },
      body: JSON.stringify(body(-1)),
    });
    const text = await sample.text();
    const answer = JSON.parse(text.startsWith('event:') ? text.split('\ndata: ')[1] : text);
    if (!sample.ok || answer.error || answer.result?.isError) {
      throw new Error(`${name}: the check request failed: ${sample.status} ${text.slice(0, 300)}`);
    }
    const result = await load({
      concurrency: CONCURRENCY,
      requests,
      request: (i) => ({
        method: 'POST',
        path: ENDPOINT,
        headers: { ...mcpHeaders, ...headersOf(i) },
        body: body(i),
      }),
    });
    const row = { scenario: `mcp ${name}`, ...result, target_p95_ms: target };
    if (compareWith !== undefined) {
      const base = rows.find((r) => r.scenario === `mcp ${compareWith}`);
      const ratio = round(result.p975 / base.p975);
      row.compared = `p97.5 ${ratio}× ${compareWith} (target ≤ 1.5×)`;
    }
    rows.push(row);
    return row;
  }

  /**
   * The same requests against a baseline server; its row, and our row's ratio to it. The
   * baseline process is new: a tenth of the requests warm it up first, unmeasured, as the
   * reads before each of our scenarios warmed ours.
   */
  async function baseline(ours, base, label, requests, body, target) {
    const request = (i) => ({ method: 'POST', path: ENDPOINT, headers: mcpHeaders, body: body(i) });
    await load({
      baseUrl: base.baseUrl,
      concurrency: CONCURRENCY,
      requests: Math.ceil(requests / 10),
      request,
    });
    const result = await load({
      baseUrl: base.baseUrl,
      concurrency: CONCURRENCY,
      requests,
      request,
    });
    rows.push({ scenario: `  baseline: ${label}`, ...result });
    const ratio = ours.rps / result.rps;
    const shown = ratio >= 1 ? `${Math.round(ratio * 10) / 10}×` : `${Math.round(ratio * 100)} %`;
    const text = `rps ${shown} of ${label} (target ${target})`;
    ours.compared = ours.compared ? `${ours.compared}; ${text}` : text;
  }

  const initialize = (i) =>
    envelope(
      'initialize',
      {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'bench', version: '1.0' },
      },
      i,
    );
  const toolsListBody = (i) => envelope('tools/list', {}, i);
  const reads = [
    [
      'list_documents (prefix, limit 50)',
      15,
      (i) =>
        tool(
          'list_documents',
          { prefix: `bench/d${String(Math.abs(i) % folders).padStart(3, '0')}/`, limit: 50 },
          i,
        ),
    ],
    ['get_document', 10, (i) => tool('get_document', { document_id: idOf(pick(Math.abs(i))) }, i)],
    [
      'batch_read (3 ids)',
      10,
      (i) =>
        tool(
          'batch_read',
          { document_ids: [0, 1, 2].map((k) => idOf(pick(Math.abs(i) * 3 + k))) },
          i,
        ),
    ],
  ];

  // Warm-up, unmeasured: the server has only answered the seeding so far. Requests of each
  // kind of read measured below, so that the first rows do not carry the JIT's first
  // compilations.
  const warmUps = [initialize, toolsListBody, ...reads.map(([, , body]) => body)];
  await load({
    concurrency: CONCURRENCY,
    requests: 4000,
    request: (i) => ({
      method: 'POST',
      path: ENDPOINT,
      headers: mcpHeaders,
      body: warmUps[i % warmUps.length](i),
    }),
  });

  await scenario('initialize', 3, 5000, initialize);
  const toolsList = await scenario('tools/list', 3, 5000, toolsListBody);
  {
    const sample = await fetch(`${baseUrl}${ENDPOINT}`, {
      method: 'POST',
      headers: mcpHeaders,
      body: JSON.stringify(toolsListBody(1)),
    });
    const bytes = Buffer.from(await sample.arrayBuffer());
    const dir = mkdtempSync(join(tmpdir(), 'agent-data-baseline-'));
    try {
      writeFileSync(join(dir, 'body.json'), bytes);
      writeFileSync(join(dir, 'tools.json'), JSON.stringify(JSON.parse(bytes).result));
      const servers = [
        [
          'http',
          {
            BASELINE_BODY_FILE: join(dir, 'body.json'),
            BASELINE_CONTENT_TYPE: sample.headers.get('content-type'),
          },
          'bare node:http',
          5000,
          '≥ 30 %',
        ],
        [
          'sdk-raw',
          { BASELINE_TOOLS_FILE: join(dir, 'tools.json') },
          "the SDK's low-level Server",
          3000,
          'none',
        ],
        ['sdk', {}, 'official SDK server', 2000, '≥ 10×'],
      ];
      for (const [kind, env, label, requests, target] of servers) {
        const server = await startBaseline(kind, env);
        await baseline(toolsList, server, label, requests, toolsListBody, target).finally(
          server.stop,
        );
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  await scenario('tools/list (one SSE event)', 3, 5000, toolsListBody, {
    Accept: 'text/event-stream',
  });
  const sql = await startBaseline('pg', { DATABASE_URL: databaseUrl });
  try {
    for (const [name, target, body] of reads) {
      const ours = await scenario(name, target, 3000, body);
      await baseline(ours, sql, 'the same SQL through pg', 3000, body, '≥ 50 %');
    }
  } finally {
    await sql.stop();
  }

  // Writes: new documents, then updates of seeded ones, then one patch per new document.
  const uploaded = (i) => `bench-writes/mcp/u-${i + 1}.md`;
  await scenario('upload_document', 20, 2000, (i) =>
    tool(
      'upload_document',
      {
        document_id: uploaded(i),
        content: `# Uploaded ${i}\n\nA new document written over MCP by the bench.`,
        tags: ['bench'],
      },
      i,
    ),
  );
  // Each write scenario has the vector pipeline to itself: its own writes' embedding, not
  // the backlog of the one before.
  await settle('embedding of the uploads');
  await scenario('update_document', 20, 2000, (i) =>
    tool(
      'update_document',
      {
        document_id: idOf(pick(Math.abs(i) + 31)),
        content: `# Updated ${i}\n\nNew text ${i} for the MCP update scenario.`,
      },
      i,
    ),
  );
  await settle('embedding of the updates');
  await scenario('patch_document', 20, 2000, (i) =>
    tool(
      'patch_document',
      { document_id: uploaded(i), old_str: 'A new document', new_str: 'A patched document' },
      i,
    ),
  );

  // Compared with reads measured while the pipeline was idle: measured while it is idle.
  await settle('embedding of the patches');

  // The 2026-07-28 era: one request per POST, the envelope in _meta, mirrored headers.
  const modern = (method, params, id) => ({
    jsonrpc: '2.0',
    id,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': '2026-07-28',
        'io.modelcontextprotocol/clientInfo': { name: 'bench', version: '1.0' },
        'io.modelcontextprotocol/clientCapabilities': {},
      },
    },
  });
  const modernHeaders = (method, name) => ({
    'MCP-Protocol-Version': '2026-07-28',
    'Mcp-Method': method,
    ...(name === undefined ? {} : { 'Mcp-Name': name }),
  });
  await scenario(
    '2026 server/discover',
    3,
    5000,
    (i) => modern('server/discover', {}, i),
    modernHeaders('server/discover'),
    'tools/list',
  );
  await scenario(
    '2026 tools/list',
    3,
    5000,
    (i) => modern('tools/list', {}, i),
    modernHeaders('tools/list'),
    'tools/list',
  );
  await scenario(
    '2026 resources/list (first page)',
    undefined,
    3000,
    (i) => modern('resources/list', {}, i),
    modernHeaders('resources/list'),
    'get_document',
  );
  // A deep page: the cursor after the id at the middle of the table.
  const middle = Buffer.from(idOf(Math.floor(documentCount / 2)), 'utf8').toString('base64url');
  await scenario(
    '2026 resources/list (page at the middle)',
    undefined,
    3000,
    (i) => modern('resources/list', { cursor: `k1.${middle}` }, i),
    modernHeaders('resources/list'),
    'get_document',
  );
  const uriOf = (i) => `kb://${idOf(pick(Math.abs(i)))}`;
  await scenario(
    '2026 resources/read',
    10,
    3000,
    (i) => modern('resources/read', { uri: uriOf(i) }, i),
    (i) => modernHeaders('resources/read', uriOf(i)),
    'get_document',
  );
  await scenario(
    '2026 completion/complete (document ids)',
    10,
    3000,
    (i) =>
      modern(
        'completion/complete',
        {
          ref: { type: 'ref/resource', uri: 'kb://{+document_id}' },
          argument: {
            name: 'document_id',
            value: `bench/d${String(Math.abs(i) % folders).padStart(3, '0')}/doc-`,
          },
        },
        i,
      ),
    modernHeaders('completion/complete'),
    'get_document',
  );

  const [{ patched }] = await query(
    `SELECT count(*)::int AS patched FROM kb_documents
      WHERE document_id LIKE 'bench-writes/mcp/%' AND body LIKE '%A patched document%'`,
  );
  log(`mcp: ${patched} uploaded documents patched`);
  return rows;
}
