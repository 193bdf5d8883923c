import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { startTestApp, TestApp } from './support/app';
import { callTool, post, rpc, toolJson, type Json } from './support/mcp-http';
import { startOidcProvider, type OidcProvider } from './support/oidc';
import { waitFor } from './support/wait';

const ADMIN = 'admin-key-0123456789abcdef01';
const BOB = 'bob-key-0123456789abcdef0123';
const API_KEYS = `admin:${ADMIN}:admin,internal;bob:${BOB}:admin,internal,readonly`;

/** Writes a document at each id, as the admin (who reads and writes everything). */
async function createAll(t: TestApp, ids: readonly string[]): Promise<void> {
  for (const id of ids) {
    await request(t.baseUrl)
      .post('/documents')
      .set('X-API-Key', ADMIN)
      .send({ document_id: id, body: `text of ${id}` })
      .expect(201);
  }
}

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
}

describe('an access policy from a file', () => {
  let t: TestApp;
  let dir: string;
  let file: string;
  const setPolicy = (policy: unknown) => writeFileSync(file, JSON.stringify(policy));
  const bobList = async () =>
    (
      await request(t.baseUrl).get('/documents').query({ limit: 100 }).set('X-API-Key', BOB)
    ).body.items.map((d: Json) => d.document_id) as string[];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'access-policy-'));
    file = join(dir, 'policy.json');
    setPolicy({
      rules: [
        { who: ['key:admin'], read: '*', write: '*' },
        { who: ['key:bob'], read: ['b/'] },
      ],
    });
    t = await startTestApp({ API_KEYS, ACCESS_POLICY_FILE: file });
    await createAll(t, ['a/1.md', 'a/2.md', 'b/1.md', 'c/1.md']);
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('applies a changed file, keeps the last good policy for a bad one, and never serves a half-applied one', async () => {
    expect(await bobList()).toEqual(['b/1.md']);
    // Requests keep running while the file changes: each answer is one policy's or the other's.
    let stop = false;
    const seen = new Set<string>();
    const load = (async () => {
      while (!stop) seen.add(JSON.stringify(await bobList()));
    })();
    setPolicy({
      rules: [
        { who: ['key:admin'], read: '*', write: '*' },
        { who: ['key:bob'], read: ['a/', 'c/'] },
      ],
    });
    await waitFor(async () => (await bobList()).includes('a/1.md'), 'the new policy', 10_000);
    stop = true;
    await load;
    for (const answer of seen) {
      expect([
        JSON.stringify(['b/1.md']),
        JSON.stringify(['a/1.md', 'a/2.md', 'c/1.md']),
      ]).toContain(answer);
    }
    // A bad file (an unknown who) changes nothing; SIGHUP reads it again, still refused; so
    // are a 10 MB file and a truncated one.
    writeFileSync(file, JSON.stringify({ rules: [{ who: ['team:x'], read: ['b/'] }] }));
    process.emit('SIGHUP', 'SIGHUP');
    writeFileSync(file, `{"rules": [], "pad": "${'x'.repeat(10 * 1024 * 1024)}"}`);
    process.emit('SIGHUP', 'SIGHUP');
    writeFileSync(file, '{"rules": [');
    await new Promise((resolve) => setTimeout(resolve, 2500)); // past the file check interval
    expect(await bobList()).toEqual(['a/1.md', 'a/2.md', 'c/1.md']);
  });

  it('a policy that cannot be used at start-up stops the server with one line', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'rules:\n  - who: []\n    read: [a/]\n');
    await expect(startTestApp({ API_KEYS, ACCESS_POLICY_FILE: bad })).rejects.toThrow(
      /ACCESS_POLICY_FILE: .*bad\.yaml: rule 1: "who" must be a non-empty list/,
    );
    await expect(
      startTestApp({ API_KEYS, ACCESS_POLICY: '{"rules":[{"who":["*"],"read":["../x/"]}]}' }),
    ).rejects.toThrow(/ACCESS_POLICY: rule 1: read: "..\/x\/": must not contain a ".." segment/);
  });
});

describe('access policies compared with a model of their grants', () => {
  let t: TestApp;
  const FOLDERS = ['a', 'a/x', 'ab', 'b', 'b/y', 'c'];
  const ids = FOLDERS.flatMap((folder) => [`${folder}/one.md`, `${folder}/two words.md`]);
  let dir: string;
  let file: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'access-model-'));
    file = join(dir, 'policy.yaml');
    writeFileSync(file, 'rules:\n  - who: ["key:admin"]\n    read: "*"\n    write: "*"\n');
    t = await startTestApp({ API_KEYS, ACCESS_POLICY_FILE: file, VECTOR_SYNC_ENABLED: 'true' });
    await createAll(t, ids);
    const sql = await t.db.client();
    await waitFor(
      async () =>
        (
          await sql.query(
            `SELECT count(*)::int AS n FROM kb_documents WHERE vector_status <> 'ready'`,
          )
        ).rows[0].n === 0,
      'every document to be indexed',
    );
  });
  afterAll(async () => {
    await t?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists, reads, completes and pages exactly what random policies grant', async () => {
    const next = random(42);
    for (let round = 0; round < 12; round++) {
      const granted = FOLDERS.filter(() => next() < 0.35);
      const yaml = [
        'rules:',
        '  - who: ["key:admin"]',
        '    read: "*"',
        '    write: "*"',
        ...(granted.length === 0
          ? []
          : ['  - who: ["key:bob"]', `    read: [${granted.map((f) => `"${f}/"`).join(', ')}]`]),
      ].join('\n');
      writeFileSync(file, `${yaml}\n`);
      const readable = (id: string) => granted.some((folder) => id.startsWith(`${folder}/`));
      const expected = ids.filter(readable).sort();
      await waitFor(
        async () => {
          const listed = (
            await request(t.baseUrl).get('/documents').query({ limit: 100 }).set('X-API-Key', BOB)
          ).body.items.map((d: Json) => d.document_id);
          return JSON.stringify(listed) === JSON.stringify(expected);
        },
        `the policy granting ${granted.join(', ') || 'nothing'}`,
        10_000,
      );
      for (const prefix of ['a', 'a/', 'b/', '']) {
        const listed = toolJson(
          await callTool(
            t.baseUrl,
            '/mcp',
            'list_documents',
            { prefix, limit: 100 },
            { 'X-API-Key': BOB },
          ),
        ).items.map((d: Json) => d.document_id);
        expect(listed).toEqual(expected.filter((id) => id.startsWith(prefix)));
        const completed = (
          await post(
            t.baseUrl,
            '/mcp',
            rpc('completion/complete', {
              ref: { type: 'ref/resource', uri: 'kb://{+document_id}' },
              argument: { name: 'document_id', value: prefix },
            }),
            { Accept: 'application/json', 'X-API-Key': BOB },
          )
        ).body.result.completion.values;
        expect(completed).toEqual(expected.filter((id) => id.startsWith(prefix)));
      }
      for (const id of ids) {
        const got = await request(t.baseUrl)
          .get(`/documents/${id.split('/').map(encodeURIComponent).join('/')}`)
          .set('X-API-Key', BOB);
        expect([id, got.status]).toEqual([id, readable(id) ? 200 : 404]);
      }
      const searched = (
        await request(t.baseUrl)
          .get('/search')
          .query({ query: 'text of', mode: 'lexical', limit: 50 })
          .set('X-API-Key', BOB)
          .expect(200)
      ).body.results.map((r: Json) => r.document_id);
      expect([...searched].sort()).toEqual(expected);
      const batch = toolJson(
        await callTool(
          t.baseUrl,
          '/mcp',
          'batch_read',
          { document_ids: ids },
          { 'X-API-Key': BOB },
        ),
      );
      expect(batch.items.map((item: Json) => [item.document_id, item.found])).toEqual(
        ids.map((id) => [id, readable(id)]),
      );
      const pages: string[] = [];
      let cursor: string | undefined;
      do {
        const page = (
          await post(
            t.baseUrl,
            '/mcp',
            rpc('resources/list', cursor === undefined ? {} : { cursor }),
            {
              Accept: 'application/json',
              'X-API-Key': BOB,
            },
          )
        ).body.result;
        pages.push(...page.resources.map((r: Json) => r.name));
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      expect(pages).toEqual(expected);
    }
  }, 120_000);
});

describe('access policies naming OAuth scopes and groups', () => {
  let idp: OidcProvider;
  let t: TestApp;
  const CANONICAL = 'https://kb.example.test';

  beforeAll(async () => {
    idp = await startOidcProvider();
    t = await startTestApp({
      OAUTH_ISSUER: idp.issuer,
      OAUTH_RESOURCE: CANONICAL,
      API_KEYS: `admin:${ADMIN}:admin,internal`,
      ACCESS_POLICY: JSON.stringify({
        rules: [
          { who: ['key:admin'], read: '*', write: '*' },
          // kb-writer-cli's tokens carry the group eng; kb-reader-cli's the scope kb.read.
          { who: ['group:eng'], read: ['eng/'], write: ['eng/'] },
          { who: ['scope:kb.read'], read: ['shared/'] },
        ],
      }),
    });
    await createAll(t, ['eng/plan.md', 'shared/faq.md', 'hr/salaries.md']);
  });
  afterAll(async () => {
    await t?.close();
    await idp?.stop();
  });

  const listWith = async (clientId: string, scope: string) => {
    const token = await idp.token(clientId, scope, `${CANONICAL}/mcp-readonly`);
    const answer = await callTool(
      t.baseUrl,
      '/mcp-readonly',
      'list_documents',
      { limit: 100 },
      { Authorization: `Bearer ${token}` },
    );
    return toolJson(answer).items.map((d: Json) => d.document_id) as string[];
  };

  it('grants by the token’s groups and scopes, from the real authorization server', async () => {
    // The writer's token has the group eng and the scope kb.read.
    expect(await listWith('kb-writer-cli', 'kb.read')).toEqual(['eng/plan.md', 'shared/faq.md']);
    // The reader's has kb.read and other groups.
    expect(await listWith('kb-reader-cli', 'kb.read')).toEqual(['shared/faq.md']);
  });
});
