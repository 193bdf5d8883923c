import type { Client } from 'pg';
import request from 'supertest';
import { DocumentListingsRepository } from '../src/documents/document-listings.repository';
import { planNodes } from './support/explain';
import { startTestApp, TestApp } from './support/app';

/** Inserts alive documents straight into the table (ids may hold what the API refuses). */
async function insertIds(db: Client, ids: string[]): Promise<void> {
  await db.query(
    `INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash)
     SELECT id, NULL, id, 'body', 'hash' FROM unnest($1::text[]) AS id`,
    [ids],
  );
}

function byteOrder(ids: string[]): string[] {
  return [...ids].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

async function listIds(t: TestApp, query: Record<string, string | number>): Promise<string[]> {
  const response = await request(t.baseUrl).get('/documents').query(query).expect(200);
  return response.body.items.map((item: { document_id: string }) => item.document_id);
}

describe('GET /documents: listing', () => {
  let t: TestApp;
  let db: Client;
  beforeAll(async () => {
    t = await startTestApp();
    db = await t.db.client();
  });
  afterAll(() => t.close());

  describe('LIKE wildcards in the prefix are literal', () => {
    const ids = [
      'esc/100%/a.md',
      'esc/100x/b.md',
      'esc/1000/c.md',
      'esc/a_b/1.md',
      'esc/axb/1.md',
      'esc/a%b/1.md',
      // Backslashes are refused by the API but may be in the table (psql, older data).
      'esc/back\\slash/1.md',
      'esc/backslash/1.md',
      'esc/back\\%/2.md',
    ];
    beforeAll(() => insertIds(db, ids));

    it.each([
      ['esc/100%', ['esc/100%/a.md']],
      ['esc/a_b', ['esc/a_b/1.md']],
      ['esc/a%', ['esc/a%b/1.md']],
      ['esc/back\\s', ['esc/back\\slash/1.md']],
      ['esc/back\\', ['esc/back\\%/2.md', 'esc/back\\slash/1.md']],
      ['esc/back\\%', ['esc/back\\%/2.md']],
      ['%', []],
      ['_', []],
      ['esc/_', []],
      ['\\', []],
    ])('prefix %j matches only %j', async (prefix, expected) => {
      expect(await listIds(t, { prefix })).toEqual(byteOrder(expected));
    });

    it('accepts path as an alias of prefix', async () => {
      expect(await listIds(t, { path: 'esc/a_b' })).toEqual(['esc/a_b/1.md']);
    });
  });

  describe('pagination', () => {
    const ids = Array.from({ length: 150 }, (_, i) => `page/${String(i).padStart(3, '0')}.md`);
    beforeAll(async () => {
      await insertIds(db, [...ids, 'page', 'pagf/x.md', 'pag/x.md', 'page.md']);
      await db.query(
        `INSERT INTO kb_documents (document_id, body, content_hash, deleted_at)
         VALUES ('page/050-deleted.md', 'b', 'h', now())`,
      );
    });

    it.each([
      [50, 0, 0, 50, 50],
      [50, 49, 49, 99, 99],
      [50, 50, 50, 100, 100],
      [50, 99, 99, 149, 149],
      [50, 100, 100, 150, null],
      [50, 149, 149, 150, null],
      [50, 150, 150, 150, null],
      [50, 1000, 150, 150, null],
      [1, 0, 0, 1, 1],
      [1, 149, 149, 150, null],
      [100, 0, 0, 100, 100],
      [100, 50, 50, 150, null],
    ])(
      'limit %i offset %i → items [%i, %i), next_offset %p',
      async (limit, offset, from, to, next) => {
        const response = await request(t.baseUrl)
          .get('/documents')
          .query({ prefix: 'page/', limit, offset })
          .expect(200);
        const expected = ids.slice(from, to);
        expect(response.body.items.map((i: { document_id: string }) => i.document_id)).toEqual(
          expected,
        );
        expect(response.body).toMatchObject({
          count: expected.length,
          returned_count: expected.length,
          limit,
          offset,
          next_offset: next,
          truncated: next !== null,
        });
      },
    );

    it('returns the summary fields of each item', async () => {
      const response = await request(t.baseUrl)
        .get('/documents')
        .query({ prefix: 'page/000', limit: 1 })
        .expect(200);
      expect(Object.keys(response.body.items[0]).sort()).toEqual(
        [
          'document_id',
          'parent_id',
          'revision',
          'tags',
          'title',
          'updated_at',
          'vector_status',
        ].sort(),
      );
    });

    it('defaults to limit 50, offset 0', async () => {
      const response = await request(t.baseUrl).get('/documents?prefix=page/').expect(200);
      expect(response.body).toMatchObject({ limit: 50, offset: 0, count: 50, next_offset: 50 });
    });

    it('walks every document exactly once by following next_offset', async () => {
      const seen: string[] = [];
      let offset: number | null = 0;
      while (offset !== null) {
        const response: request.Response = await request(t.baseUrl)
          .get('/documents')
          .query({ prefix: 'page/', limit: 37, offset })
          .expect(200);
        seen.push(...response.body.items.map((i: { document_id: string }) => i.document_id));
        offset = response.body.next_offset;
      }
      expect(seen).toEqual(ids);
    });

    it.each([
      ['limit', { limit: 101 }],
      ['limit', { limit: 0 }],
      ['limit', { limit: -5 }],
      ['limit', { limit: 'ten' }],
      ['limit', { limit: '1.5' }],
      ['offset', { offset: -1 }],
      ['offset', { offset: '2147483648' }],
      ['offset', { offset: 'x' }],
      ['sort', { sort: 'desc' }],
    ])('refuses a bad %s with 400 naming it (no silent clamp)', async (field, query) => {
      const response = await request(t.baseUrl).get('/documents').query(query).expect(400);
      expect(response.body.error).toMatchObject({ code: 'INVALID_ARGUMENT', field });
    });

    it('refuses a repeated prefix', async () => {
      const response = await request(t.baseUrl).get('/documents?prefix=a&prefix=b').expect(400);
      expect(response.body.error.field).toBe('prefix');
    });
  });

  describe('order', () => {
    it('is byte order of the UTF-8 id, not a locale order', async () => {
      const ids = [
        'order/B',
        'order/a',
        'order/Z',
        'order/é',
        'order/e',
        'order/~',
        'order/10',
        'order/9',
        'order/文',
      ];
      await insertIds(db, ids);
      expect(await listIds(t, { prefix: 'order/' })).toEqual(byteOrder(ids));
      expect(byteOrder(ids)).toEqual([
        'order/10',
        'order/9',
        'order/B',
        'order/Z',
        'order/a',
        'order/e',
        'order/~',
        'order/é',
        'order/文',
      ]);
    });

    it('lists every alive document without a prefix', async () => {
      const { rows } = await db.query<{ document_id: string }>(
        `SELECT document_id FROM kb_documents WHERE deleted_at IS NULL`,
      );
      const all = byteOrder(rows.map((r) => r.document_id));
      const first = await listIds(t, { limit: 100 });
      expect(first).toEqual(all.slice(0, 100));
      expect(await listIds(t, { limit: 100, offset: 100, prefix: '' })).toEqual(
        all.slice(100, 200),
      );
    });
  });

  describe('query plan over 10 000+ rows', () => {
    beforeAll(async () => {
      await db.query(
        `INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash, deleted_at)
         SELECT 'bulk/' || (i % 100) || '/doc-' || i || '.md', 'bulk/' || (i % 100), 'T', 'b', 'h',
                CASE WHEN i % 10 = 0 THEN now() END
           FROM generate_series(1, 12000) AS i`,
      );
      await db.query('ANALYZE kb_documents');
    });

    it.each([
      ['a folder prefix', 'bulk/42/', 50, 0],
      ['a prefix with a wildcard character', 'bulk/4_', 50, 0],
      ['a prefix with a later page', 'bulk/', 100, 500],
      ['a short prefix', 'b', 50, 0],
      ['no prefix', '', 50, 0],
      ['no prefix, a later page', '', 100, 500],
    ])('uses the index, never a Seq Scan, for %s', async (_label, prefix, limit, offset) => {
      const repository = t.app.get(DocumentListingsRepository);
      const [sql, params] = repository.listQueryForExplain(prefix, limit, offset);
      const { rows } = await db.query(`EXPLAIN (FORMAT JSON) ${sql}`, params);
      const nodes = planNodes(rows[0]['QUERY PLAN'][0].Plan);
      const types = nodes.map((node) => node['Node Type']);
      expect(types).not.toContain('Seq Scan');
      expect(types.some((type) => /Index/.test(type))).toBe(true);
    });

    it.each([
      ['a folder prefix', 'bulk/42/', 50, 0],
      ['no prefix', '', 50, 0],
    ])(
      'uses the index in the generic plan the named statement reuses, for %s',
      async (_label, prefix, limit, offset) => {
        const repository = t.app.get(DocumentListingsRepository);
        const [sql, params] = repository.listQueryForExplain(prefix, limit, offset);
        await db.query('BEGIN');
        try {
          // The plan PostgreSQL keeps for a prepared statement after a few executions.
          await db.query(`SET LOCAL plan_cache_mode = force_generic_plan`);
          await db.query(`PREPARE generic_list AS ${sql}`);
          const literals = params.map((p) =>
            typeof p === 'string' ? `'${p.replace(/'/g, "''")}'` : String(p),
          );
          const { rows } = await db.query(
            `EXPLAIN (FORMAT JSON) EXECUTE generic_list(${literals.join(', ')})`,
          );
          const nodes = planNodes(rows[0]['QUERY PLAN'][0].Plan);
          const types = nodes.map((node) => node['Node Type']);
          expect(types).not.toContain('Seq Scan');
          expect(types.some((type) => /Index/.test(type))).toBe(true);
          if (prefix !== '') {
            // A range in the index condition, not an ordered walk of the whole index with a filter.
            const conditions = nodes.map((node) => node['Index Cond'] ?? '');
            expect(
              conditions.some((c) => /document_id >= \$1/.test(c) && /document_id < \$2/.test(c)),
            ).toBe(true);
          }
        } finally {
          await db.query('ROLLBACK');
          await db.query('DEALLOCATE ALL');
        }
      },
    );

    it('returns the same rows through the API as the explained query', async () => {
      const repository = t.app.get(DocumentListingsRepository);
      const [sql, params] = repository.listQueryForExplain('bulk/42/', 50, 0);
      const { rows } = await db.query<{ document_id: string }>(sql, params);
      const api = await listIds(t, { prefix: 'bulk/42/', limit: 50 });
      expect(api).toEqual(rows.slice(0, 50).map((r) => r.document_id));
      expect(api).toHaveLength(50);
      expect(api.every((id) => id.startsWith('bulk/42/'))).toBe(true);
    });
  });
});
