/**
 * The curl examples of docs/mcp.md, verbatim (a test checks that the page holds
 * each one). test/mcp-readme.e2e-spec.ts
 * runs each one against a live server (with the real curl when installed, and always through
 * an equivalent Node request) and checks the answer the page describes.
 */
export interface CurlExample {
  /** What docs/mcp.md says about it. */
  readonly title: string;
  readonly command: string;
  readonly expect: {
    readonly status: number;
    /** `json`, `sse` or `none` (empty body). */
    readonly framing: 'json' | 'sse' | 'none';
    /** A fragment the JSON (or the SSE event's data) must contain. */
    readonly body?: Record<string, unknown>;
    readonly headers?: Record<string, string>;
  };
}

export const CURL_EXAMPLES: readonly CurlExample[] = [
  {
    title: 'Both types accepted (what SDK clients send): the tie goes to JSON',
    command: `curl -s http://127.0.0.1:8080/mcp \\
  -H 'Content-Type: application/json' \\
  -H 'Accept: application/json, text/event-stream' \\
  -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"curl","version":"1.0"}}}'`,
    expect: {
      status: 200,
      framing: 'json',
      body: {
        jsonrpc: '2.0',
        id: 1,
        result: { protocolVersion: '2025-06-18', serverInfo: { name: 'agent-data' } },
      },
    },
  },
  {
    title: 'JSON only (MCP Inspector and most HTTP libraries)',
    command: `curl -s http://127.0.0.1:8080/mcp-readonly \\
  -H 'Content-Type: application/json' \\
  -H 'Accept: application/json' \\
  -d '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'`,
    expect: { status: 200, framing: 'json', body: { jsonrpc: '2.0', id: 2 } },
  },
  {
    title: 'SSE only: one "message" event, then the stream closes',
    command: `curl -sN http://127.0.0.1:8080/mcp \\
  -H 'Content-Type: application/json' \\
  -H 'Accept: text/event-stream' \\
  -d '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_documents","arguments":{"prefix":"knowledge/","limit":5}}}'`,
    expect: {
      status: 200,
      framing: 'sse',
      body: { id: 3, result: { structuredContent: { limit: 5, offset: 0 } } },
      headers: { 'cache-control': 'no-cache, no-transform', 'x-accel-buffering': 'no' },
    },
  },
  {
    title: 'SSE preferred by quality value',
    command: `curl -sN http://127.0.0.1:8080/mcp \\
  -H 'Content-Type: application/json' \\
  -H 'Accept: application/json;q=0.5, text/event-stream;q=1' \\
  -d '{"jsonrpc":"2.0","id":4,"method":"ping"}'`,
    expect: { status: 200, framing: 'sse', body: { id: 4, result: {} } },
  },
  {
    title: "No Accept header (curl's default */*): JSON",
    command: `curl -s http://127.0.0.1:8080/mcp \\
  -H 'Content-Type: application/json' \\
  -d '{"jsonrpc":"2.0","id":5,"method":"ping"}'`,
    expect: { status: 200, framing: 'json', body: { id: 5, result: {} } },
  },
  {
    title: 'Nothing acceptable: 406 with a JSON-RPC error',
    command: `curl -s -i http://127.0.0.1:8080/mcp \\
  -H 'Content-Type: application/json' \\
  -H 'Accept: application/xml' \\
  -d '{"jsonrpc":"2.0","id":6,"method":"ping"}'`,
    expect: {
      status: 406,
      framing: 'json',
      body: { jsonrpc: '2.0', id: null, error: { code: -32000 } },
    },
  },
  {
    title: 'A notification: 202 Accepted, empty body',
    command: `curl -s -i http://127.0.0.1:8080/mcp \\
  -H 'Content-Type: application/json' \\
  -H 'Accept: text/event-stream' \\
  -d '{"jsonrpc":"2.0","method":"notifications/initialized"}'`,
    expect: { status: 202, framing: 'none' },
  },
  {
    title: 'Malformed JSON: 400, -32700, framed like the answer would have been',
    command: `curl -s -i http://127.0.0.1:8080/mcp \\
  -H 'Content-Type: application/json' \\
  -H 'Accept: text/event-stream' \\
  -d '{"jsonrpc": "2.0",'`,
    expect: { status: 400, framing: 'sse', body: { id: null, error: { code: -32700 } } },
  },
  {
    title: 'GET: what the endpoint is',
    command: `curl -s http://127.0.0.1:8080/mcp-gpt`,
    expect: {
      status: 200,
      framing: 'json',
      body: { name: 'agent-data', profile: 'gpt', tool_count: 9 },
    },
  },
  {
    title: 'GET asking for an SSE stream: 405, Allow: POST',
    command: `curl -s -i http://127.0.0.1:8080/mcp -H 'Accept: text/event-stream'`,
    expect: { status: 405, framing: 'json', headers: { allow: 'POST' } },
  },
  {
    title: 'With API_KEYS set: the key as a Bearer token (or X-API-Key)',
    command: `curl -s http://127.0.0.1:8080/mcp-gpt \\
  -H "Authorization: Bearer $AGENT_DATA_KEY" \\
  -H 'Content-Type: application/json' \\
  -d '{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"search_knowledge","arguments":{"query":"deployment checklist","limit":3}}}'`,
    expect: {
      status: 200,
      framing: 'json',
      body: { id: 7, result: { structuredContent: { count: 0 } } },
    },
  },
  {
    title: 'What the server is and speaks',
    command: `curl -s http://127.0.0.1:8080/mcp \\
  -H 'Content-Type: application/json' \\
  -H 'Accept: application/json, text/event-stream' \\
  -H 'MCP-Protocol-Version: 2026-07-28' \\
  -H 'Mcp-Method: server/discover' \\
  -d '{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'`,
    expect: {
      status: 200,
      framing: 'json',
      body: {
        id: 1,
        result: {
          resultType: 'complete',
          supportedVersions: ['2026-07-28', '2025-11-25', '2025-06-18', '2025-03-26', '2024-11-05'],
          capabilities: { tools: {}, resources: {}, prompts: {}, completions: {} },
        },
      },
    },
  },
  {
    title:
      'Read a document as a resource (Mcp-Name mirrors the URI); a missing one is -32602 "Resource not found"',
    command: `curl -s http://127.0.0.1:8080/readonly/mcp \\
  -H 'Content-Type: application/json' \\
  -H 'MCP-Protocol-Version: 2026-07-28' \\
  -H 'Mcp-Method: resources/read' \\
  -H 'Mcp-Name: kb://knowledge/hello.md' \\
  -d '{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"kb://knowledge/hello.md","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'`,
    expect: {
      status: 200,
      framing: 'json',
      body: {
        id: 2,
        error: {
          code: -32602,
          message: 'Resource not found',
          data: { uri: 'kb://knowledge/hello.md' },
        },
      },
    },
  },
  {
    title: 'Without the envelope: 400, -32602',
    command: `curl -s -i http://127.0.0.1:8080/mcp \\
  -H 'Content-Type: application/json' \\
  -H 'MCP-Protocol-Version: 2026-07-28' \\
  -H 'Mcp-Method: tools/list' \\
  -d '{"jsonrpc":"2.0","id":3,"method":"tools/list"}'`,
    expect: { status: 400, framing: 'json', body: { id: 3, error: { code: -32602 } } },
  },
];
