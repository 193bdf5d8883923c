import request from 'supertest';
import { startTestApp, TestApp } from './support/app';
import { callTool, toolJson, type Json } from './support/mcp-http';
import { connectSdkClient, connectV2Client, resultJson } from './support/mcp-sdk';
import { namedKeys } from './support/keys';

const KEYS = {
  admin: 'links-mcp-admin-key-0123456789ab',
  bob: 'links-mcp-bob-key-0123456789abcd',
};
/** Bob reads kb/ only (with every profile, to call every endpoint). */
const { apiKeys: API_KEYS, as } = namedKeys(KEYS, 'admin,internal,readonly,gpt,gpt-full');
const POLICY = {
  rules: [
    { who: ['key:admin'], read: '*', write: '*' },
    { who: ['key:bob'], read: ['kb/'], write: ['kb/'] },
  ],
};

/**
 * Links over MCP (docs/mcp.md, "Following links"): get_document counts a document's links and
 * backlinks and names the first, follow_links walks them, on every profile that reads, from the
 * official SDK clients, and never names a document the caller may not read.
 */
describe('links over MCP', () => {
  let t: TestApp;
  const write = (document_id: string, body: string, title?: string) =>
    request(t.baseUrl)
      .post('/documents')
      .set(as('admin'))
      .send({ document_id, body, ...(title === undefined ? {} : { title }) })
      .expect(201);
  const tool = async (who: keyof typeof KEYS, name: string, args: Json, path = '/mcp') => {
    const envelope = await callTool(t.baseUrl, path, name, args, as(who));
    return { isError: envelope.result.isError === true, json: toolJson(envelope) };
  };

  beforeAll(async () => {
    t = await startTestApp({ API_KEYS, ACCESS_POLICY: JSON.stringify(POLICY) });
    await write(
      'kb/runbooks/db-failover.md',
      '# Database failover\n\nPromote [the replica](../services/postgres.md), restart [[api]], ' +
        'flush [[Cache service]]. Old notes: [[gone]].',
    );
    await write('kb/services/postgres.md', '# PostgreSQL\n\nThe primary database.');
    await write('kb/services/api.md', '# API\n\nServes [[postgres]] data.');
    await write('kb/services/redis.md', 'Redis.', 'Cache service');
    await write('kb/decisions/pg-16.md', '# Upgrade\n\nWe moved [[postgres]] to 16.');
    await write('secret/incident.md', '# Incident\n\n[[db-failover]] failed on [[postgres]].');
  });
  afterAll(() => t.close());

  it('follows a runbook to the services it names, from the official SDK client', async () => {
    const client = await connectSdkClient(t.baseUrl, '/mcp-readonly', { headers: as('admin') });
    try {
      const { tools } = await client.listTools();
      const listed = tools.find((t) => t.name === 'follow_links')!;
      expect(listed.annotations).toMatchObject({ readOnlyHint: true });
      const result = await client.callTool({
        name: 'follow_links',
        arguments: { document_id: 'kb/runbooks/db-failover.md' },
      });
      const neighbourhood = result.structuredContent as Json;
      expect(neighbourhood).toEqual(resultJson(result));
      expect(
        neighbourhood.neighbours.map((n: Json) => [n.document_id, n.title, n.direction]),
      ).toEqual([
        ['kb/services/postgres.md', 'PostgreSQL', 'links_to'],
        ['kb/services/api.md', 'API', 'links_to'],
        ['kb/services/redis.md', 'Cache service', 'links_to'],
        ['secret/incident.md', 'Incident', 'linked_from'],
      ]);
      expect(neighbourhood.neighbours[0].passage).toContain('Promote [the replica]');
      // Depth 2 reaches the decision that names a service.
      const two = await client.callTool({
        name: 'follow_links',
        arguments: { path: 'kb/runbooks/db-failover.md', depth: 2 },
      });
      expect((two.structuredContent as Json).neighbours).toContainEqual(
        expect.objectContaining({ document_id: 'kb/decisions/pg-16.md', depth: 2 }),
      );
    } finally {
      await client.close();
    }
  });

  it('is on every profile, and answers the 2026 SDK client too', async () => {
    for (const path of ['/mcp', '/mcp-readonly', '/mcp-gpt', '/mcp-gpt-full']) {
      const { isError, json } = await tool(
        'admin',
        'follow_links',
        { document_id: 'kb/services/api.md' },
        path,
      );
      expect({ path, isError }).toEqual({ path, isError: false });
      expect(json.neighbours.map((n: Json) => n.document_id)).toContain('kb/services/postgres.md');
    }
    const v2 = await connectV2Client(t.baseUrl, '/mcp', { pin: '2026-07-28' }, as('admin'));
    try {
      const result = (await v2.callTool({
        name: 'follow_links',
        arguments: { document_id: 'kb/services/postgres.md' },
      })) as Json;
      expect(result.structuredContent.neighbours.length).toBe(4);
      // Each neighbour as a resource link the client can read (2026-07-28 results carry them).
      const links = (result.content as Json[]).filter((c) => c.type === 'resource_link');
      expect(links.map((l) => l.uri)).toContain('kb://kb/runbooks/db-failover.md');
    } finally {
      await v2.close();
    }
  });

  it('counts links and backlinks in get_document, and names the first', async () => {
    const { json } = await tool('admin', 'get_document', {
      document_id: 'kb/runbooks/db-failover.md',
    });
    expect(json.links).toEqual({
      links: 4,
      broken: 1,
      backlinks: 1,
      links_to: [
        { document_id: 'kb/services/postgres.md', title: 'PostgreSQL', label: 'the replica' },
        { document_id: 'kb/services/api.md', title: 'API', label: 'api' },
        { document_id: 'kb/services/redis.md', title: 'Cache service', label: 'Cache service' },
      ],
      linked_from: [
        {
          document_id: 'secret/incident.md',
          title: 'Incident',
          passage: '[[db-failover]] failed on [[postgres]].',
        },
      ],
    });
    const postgres = (
      await tool('admin', 'get_document', { document_id: 'kb/services/postgres.md' })
    ).json;
    expect(postgres.links).toMatchObject({ links: 0, broken: 0, backlinks: 4 });
  });

  it('never names nor counts a document the caller may not read', async () => {
    const walk = (
      await tool('bob', 'follow_links', { document_id: 'kb/services/postgres.md', depth: 3 })
    ).json;
    const named = [
      ...walk.neighbours.flatMap((n: Json) => [n.document_id, n.from]),
      ...walk.edges.flatMap((e: Json) => [e.from, e.to]),
    ];
    expect(named.length).toBeGreaterThan(0);
    expect(named.filter((id: string) => !id.startsWith('kb/'))).toEqual([]);
    const document = (
      await tool('bob', 'get_document', { document_id: 'kb/runbooks/db-failover.md' })
    ).json;
    expect(document.links).toMatchObject({ backlinks: 0, linked_from: [] });
    const postgres = (await tool('bob', 'get_document', { document_id: 'kb/services/postgres.md' }))
      .json;
    expect(postgres.links.backlinks).toBe(3);
    // A link into secret/ counts for bob as a link to no document: broken, never named.
    await write('kb/notes/to-secret.md', 'See [[secret/incident]] and [[db-failover]].');
    const linking = (await tool('bob', 'get_document', { document_id: 'kb/notes/to-secret.md' }))
      .json;
    expect(linking.links).toMatchObject({ links: 2, broken: 1, backlinks: 0 });
    expect(linking.links.links_to.map((l: Json) => l.document_id)).toEqual([
      'kb/runbooks/db-failover.md',
    ]);
    expect(JSON.stringify(linking.links)).not.toContain('Incident');
    const forAdmin = (await tool('admin', 'get_document', { document_id: 'kb/notes/to-secret.md' }))
      .json;
    expect(forAdmin.links).toMatchObject({ links: 2, broken: 0 });
    // A document outside the grants is not found, as an absent one.
    const hidden = await tool('bob', 'follow_links', { document_id: 'secret/incident.md' });
    const absent = await tool('bob', 'follow_links', { document_id: 'kb/absent.md' });
    expect(hidden.isError).toBe(true);
    expect(hidden.json.error.code).toBe('NOT_FOUND');
    expect(hidden.json.error.message.replace('secret/incident.md', '<id>')).toBe(
      absent.json.error.message.replace('kb/absent.md', '<id>'),
    );
  });

  it('refuses a depth out of range, naming it', async () => {
    const { isError, json } = await tool('admin', 'follow_links', {
      document_id: 'kb/services/api.md',
      depth: 4,
    });
    expect(isError).toBe(true);
    expect(json.error).toMatchObject({ code: 'INVALID_ARGUMENT', field: 'depth' });
  });
});
