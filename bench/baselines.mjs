// Baseline servers for `npm run bench` (docs/performance.md): what our request paths are
// measured against in the same run, on the same machine, with the same load generator.
// Each runs in a process of its own, like the server, and prints `listening <port>`:
//
//   node bench/baselines.mjs http   answers every POST with the bytes of BASELINE_BODY_FILE
//                                   (BASELINE_CONTENT_TYPE): bare node:http, nothing else
//   node bench/baselines.mjs pg     answers the MCP tools/call of list_documents,
//                                   get_document and batch_read by running the very SQL of
//                                   the server (its DocumentsRepository, named prepared
//                                   statements) straight through a `pg` pool of DB_POOL_SIZE
//                                   on DATABASE_URL, and JSON.stringify of the rows
//   node bench/baselines.mjs sdk    the official MCP SDK's stateless Streamable HTTP server
//                                   as its documentation and example build one: an McpServer
//                                   and a transport per request (JSON answers), our ten tools
//                                   registered with their own zod schemas (from dist/)
//   node bench/baselines.mjs sdk-raw
//                                   the same with the SDK's low-level Server answering
//                                   tools/list with the JSON of BASELINE_TOOLS_FILE (our
//                                   tools/list result): the SDK's transport alone
//
// PORT picks the port (0: any free one).
import { createServer } from 'node:http';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const kind = process.argv[2];
const handlers = { http: bareHttp, pg: straightSql, sdk: officialSdk, 'sdk-raw': officialSdkRaw };
if (!handlers[kind]) {
  process.stderr.write(`usage: node bench/baselines.mjs ${Object.keys(handlers).join('|')}\n`);
  process.exit(2);
}
const server = createServer(await handlers[kind]());
server.keepAliveTimeout = 60_000;
server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', () => {
  process.stdout.write(`listening ${server.address().port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));

/** The same bytes, read once: the cost of HTTP alone. */
async function bareHttp() {
  const body = readFileSync(process.env.BASELINE_BODY_FILE);
  const headers = {
    'Content-Type': process.env.BASELINE_CONTENT_TYPE ?? 'application/json',
    'Content-Length': body.length,
  };
  return (req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, headers);
      res.end(body);
    });
  };
}

/** The server's SQL for three tools, with nothing between the socket and `pg` but JSON. */
async function straightSql() {
  const { default: pg } = await import('pg');
  const { DocumentsRepository } = await import(
    pathToFileURL(join(root, 'dist/src/documents/documents.repository.js')).href
  );
  const { PreparedStatements } = await import(
    pathToFileURL(join(root, 'dist/src/database/prepared-statements.js')).href
  );
  const pool = new pg.Pool({
    connectionString: process.env.DATABASE_URL,
    max: Number(process.env.DB_POOL_SIZE ?? 20),
  });
  // The statements read their pool from a TypeORM DataSource's driver: give them this one.
  const dataSource = { driver: { master: pool } };
  const repository = new DocumentsRepository(dataSource, new PreparedStatements(dataSource));
  const tools = {
    list_documents: (a) => repository.list(a.prefix ?? '', a.limit ?? 50, a.offset ?? 0),
    get_document: (a) => repository.findAlive(a.document_id),
    batch_read: (a) => repository.findManyAlive(a.document_ids),
  };
  return async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    let status = 200;
    let answer;
    try {
      const message = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const run = tools[message.params?.name];
      if (!run) throw new Error(`no baseline for ${message.params?.name}`);
      answer = { jsonrpc: '2.0', id: message.id, result: await run(message.params.arguments) };
    } catch (error) {
      status = 400;
      answer = { error: String(error?.message ?? error) };
    }
    const body = JSON.stringify(answer);
    res.writeHead(status, {
      'Content-Type': 'application/json',
      'Content-Length': Buffer.byteLength(body),
    });
    res.end(body);
  };
}

/** The official SDK's stateless server, the way its documentation serves one request. */
async function officialSdk() {
  const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
  const { readdirSync } = await import('node:fs');
  const { loadConfig } = await import(
    pathToFileURL(join(root, 'dist/src/config/load-config.js')).href
  );
  const config = loadConfig({});
  const folder = join(root, 'dist/src/mcp/tools');
  const tools = [];
  for (const file of readdirSync(folder).filter((f) => f.endsWith('.tool.js'))) {
    for (const exported of Object.values(await import(pathToFileURL(join(folder, file)).href))) {
      // The tools' services are not needed to list them; ingest_document reads the defaults.
      if (typeof exported === 'function' && exported.name.endsWith('Tool'))
        tools.push(new exported(undefined, config));
    }
  }
  const build = () => {
    const server = new McpServer({ name: 'sdk-baseline', version: '1.0.0' });
    for (const tool of tools) {
      server.registerTool(
        tool.name,
        {
          title: tool.title,
          description: tool.description,
          inputSchema: tool.input.shape,
          outputSchema: tool.output.shape,
          annotations: tool.annotations,
        },
        async () => ({ content: [] }),
      );
    }
    return server;
  };
  return serveStateless(build);
}

/** The SDK's low-level Server listing a fixed set of tools. */
async function officialSdkRaw() {
  const { Server } = await import('@modelcontextprotocol/sdk/server/index.js');
  const { ListToolsRequestSchema } = await import('@modelcontextprotocol/sdk/types.js');
  const { tools } = JSON.parse(readFileSync(process.env.BASELINE_TOOLS_FILE, 'utf8'));
  return serveStateless(() => {
    const server = new Server(
      { name: 'sdk-baseline', version: '1.0.0' },
      { capabilities: { tools: {} } },
    );
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
    return server;
  });
}

/** A server and a stateless transport per request, closed with the response. */
async function serveStateless(build) {
  const { StreamableHTTPServerTransport } =
    await import('@modelcontextprotocol/sdk/server/streamableHttp.js');
  return async (req, res) => {
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const server = build();
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      transport.close();
      server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, JSON.parse(Buffer.concat(chunks).toString('utf8')));
  };
}
