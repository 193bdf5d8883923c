// MCP over Streamable HTTP at concurrency 10 (issue 4 targets): initialize, tools/list,
// list_documents over the seeded documents, get_document, batch_read of 3, and the writes.
// Each scenario first sends one request and checks its answer (no JSON-RPC error, no
// isError), so a fast wrong answer is never reported as a latency.
const CONCURRENCY = 10;
const ENDPOINT = '/mcp';

export default async function mcp({ baseUrl, headers, load, documentCount, query, log }) {
  const folders = Math.max(1, Math.floor(documentCount / 100));
  const pick = (i) => (i * 7919) % documentCount;
  const idOf = (n) =>
    `bench/d${String(Math.floor(n / 100)).padStart(3, '0')}/doc-${String(n).padStart(5, '0')}.md`;
  const mcpHeaders = {
    ...headers,
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': '2025-06-18',
  };
  const envelope = (method, params, id) => ({ jsonrpc: '2.0', id, method, params });
  const tool = (name, args, id) => envelope('tools/call', { name, arguments: args }, id);
  const rows = [];

  async function scenario(name, target, requests, body, extraHeaders = {}) {
    const sample = await fetch(`${baseUrl}${ENDPOINT}`, {
      method: 'POST',
      headers: { ...mcpHeaders, ...extraHeaders },
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
        headers: { ...mcpHeaders, ...extraHeaders },
        body: body(i),
      }),
    });
    rows.push({ scenario: `mcp ${name}`, ...result, target_p95_ms: target });
  }

  await scenario('initialize', 3, 5000, (i) =>
    envelope(
      'initialize',
      {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'bench', version: '1.0' },
      },
      i,
    ),
  );
  await scenario('tools/list', 3, 5000, (i) => envelope('tools/list', {}, i));
  await scenario('tools/list (one SSE event)', 3, 5000, (i) => envelope('tools/list', {}, i), {
    Accept: 'text/event-stream',
  });
  await scenario('list_documents (prefix, limit 50)', 15, 3000, (i) =>
    tool(
      'list_documents',
      { prefix: `bench/d${String(Math.abs(i) % folders).padStart(3, '0')}/`, limit: 50 },
      i,
    ),
  );
  await scenario('get_document', 10, 3000, (i) =>
    tool('get_document', { document_id: idOf(pick(Math.abs(i))) }, i),
  );
  await scenario('batch_read (3 ids)', 10, 3000, (i) =>
    tool('batch_read', { document_ids: [0, 1, 2].map((k) => idOf(pick(Math.abs(i) * 3 + k))) }, i),
  );

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
  await scenario('patch_document', 20, 2000, (i) =>
    tool(
      'patch_document',
      { document_id: uploaded(i), old_str: 'A new document', new_str: 'A patched document' },
      i,
    ),
  );

  const [{ patched }] = await query(
    `SELECT count(*)::int AS patched FROM kb_documents
      WHERE document_id LIKE 'bench-writes/mcp/%' AND body LIKE '%A patched document%'`,
  );
  log(`mcp: ${patched} uploaded documents patched`);
  return rows;
}
