import type { Client } from 'pg';
import { DataSource } from 'typeorm';
import { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner';
import { dataSourceOptions } from '../../src/database/data-source-options';
import { createTestDatabase, type TestDatabase } from './database';

/** A node of `EXPLAIN (FORMAT JSON)` output, with the fields the tests read. */
export interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Index Cond'?: string;
  /** With EXPLAIN ANALYZE: rows the node produced per loop, and how many loops it ran. */
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  /** Rows a scan read and dropped (per loop, as Actual Rows). */
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

/** Every node of a plan tree, depth first. */
export function planNodes(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(planNodes)];
}

/** The nodes of the plan PostgreSQL runs for `sql` with `params`, with what each read (EXPLAIN ANALYZE). */
export async function analyzedPlan(
  db: Client,
  sql: string,
  params: unknown[],
): Promise<PlanNode[]> {
  const { rows } = await db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${sql}`, params);
  return planNodes(rows[0]['QUERY PLAN'][0].Plan as PlanNode);
}

/** Rows the plan's index and table scans read from the relations, from EXPLAIN ANALYZE. */
export async function rowsRead(db: Client, sql: string, params: unknown[]): Promise<number> {
  return rowsReadBy(await analyzedPlan(db, sql, params));
}

/** The generic plan PostgreSQL keeps for a named statement (prepared statements reuse it). */
export async function genericPlan(db: Client, sql: string, params: unknown[]): Promise<PlanNode[]> {
  await db.query('BEGIN');
  try {
    await db.query(`SET LOCAL plan_cache_mode = force_generic_plan`);
    await db.query(`PREPARE generic_probe AS ${sql}`);
    const { rows } = await db.query(
      `EXPLAIN (FORMAT JSON) EXECUTE generic_probe(${params.map(literal).join(', ')})`,
    );
    return planNodes(rows[0]['QUERY PLAN'][0].Plan as PlanNode);
  } finally {
    await db.query('ROLLBACK');
    await db.query('DEALLOCATE ALL');
  }
}

function literal(value: unknown): string {
  if (value === null) return 'NULL';
  if (Array.isArray(value)) return `ARRAY[${value.map(literal).join(', ')}]::text[]`;
  return typeof value === 'string' ? `'${value.replace(/'/g, "''")}'` : String(value);
}

/** How PostgreSQL may plan a named statement: the plan cache's choice, or either kind forced. */
export type PlanMode = 'auto' | 'force_custom_plan' | 'force_generic_plan';
export const PLAN_MODES: readonly PlanMode[] = ['auto', 'force_custom_plan', 'force_generic_plan'];

/**
 * The plan a prepared statement runs with after it has run a few times, executed (EXPLAIN
 * ANALYZE): in `auto` mode PostgreSQL plans the first five executions with the values
 * (custom plans), then keeps a generic plan only if it looks no dearer than those, so the
 * plan that serves requests may be either; the forced modes show each.
 */
export async function preparedPlan(
  db: Client,
  sql: string,
  params: unknown[],
  mode: PlanMode,
): Promise<PlanNode[]> {
  const execute = `EXECUTE prepared_probe(${params.map(literal).join(', ')})`;
  await db.query('BEGIN');
  try {
    await db.query(`SET LOCAL plan_cache_mode = ${mode}`);
    await db.query(`PREPARE prepared_probe AS ${sql}`);
    for (let i = 0; i < 6; i++) await db.query(execute);
    const { rows } = await db.query(`EXPLAIN (ANALYZE, FORMAT JSON) ${execute}`);
    return planNodes(rows[0]['QUERY PLAN'][0].Plan as PlanNode);
  } finally {
    await db.query('ROLLBACK');
    await db.query('DEALLOCATE ALL');
  }
}

/** The rows a scan node read: those it returned and those its filter or recheck dropped. */
function rowsOf(node: PlanNode): number {
  return (
    (node['Actual Rows'] ?? 0) +
    (node['Rows Removed by Filter'] ?? 0) +
    (node['Rows Removed by Index Recheck'] ?? 0)
  );
}

/** Rows the scans of an analyzed plan read from their relations. */
export function rowsReadBy(nodes: readonly PlanNode[]): number {
  const read = nodes
    .filter((node) => /^(Seq|Index|Index Only|Bitmap Heap) Scan$/.test(node['Node Type']))
    .reduce((sum, node) => sum + rowsOf(node) * (node['Actual Loops'] ?? 1), 0);
  // Actual Rows is a per-loop average (fractional since PostgreSQL 18): round the sum.
  return Math.round(read);
}

/**
 * Runs `load` with `triggers` of kb_documents off: a plan test's table of hundreds of
 * thousands of rows loaded without the bookkeeping (audit rows, the pipeline's queue, links)
 * that would take most of the load's time and change no plan it reads.
 */
export async function withoutTriggers(
  db: Client,
  triggers: readonly string[],
  load: () => Promise<void>,
): Promise<void> {
  const alter = (verb: string) =>
    `ALTER TABLE kb_documents ${triggers.map((name) => `${verb} TRIGGER ${name}`).join(', ')}`;
  await db.query(alter('DISABLE'));
  try {
    await load();
  } finally {
    await db.query(alter('ENABLE'));
  }
}

/** A statement as a repository sent it: its text and parameters. */
export interface SentStatement {
  readonly text: string;
  readonly values: unknown[];
}

/**
 * Runs `run`, recording the statements whose text `matches` that went through TypeORM's
 * query runner (every statement does, in a transaction or not), to explain them as sent.
 */
export async function statementsSent<T>(
  matches: (text: string) => boolean,
  run: () => Promise<T>,
): Promise<{ result: T; sent: SentStatement[] }> {
  const sent: SentStatement[] = [];
  const runnerQuery = PostgresQueryRunner.prototype.query;
  const spied = jest.spyOn(PostgresQueryRunner.prototype, 'query').mockImplementation(function (
    this: PostgresQueryRunner,
    text,
    values,
    ...rest
  ) {
    if (typeof text === 'string' && matches(text))
      sent.push({ text, values: (values as unknown[]) ?? [] });
    return runnerQuery.call(this, text, values, ...rest);
  });
  try {
    return { result: await run(), sent };
  } finally {
    spied.mockRestore();
  }
}

/**
 * A database of `count` documents `f{i % 100}/doc-{i}.md` (titled `Title {i}`, in 100
 * folders) and their lexical records, written in one transaction without the triggers'
 * bookkeeping (as the pipeline would have left them), then analysed: `lexical` is the SELECT
 * list of the records' columns `(document_id, revision, analyzer, tags, lengths,
 * passage_lengths, terms, postings, ...extra)` over `generate_series(1, count) AS i`.
 */
export async function filledForPlans(
  count: number,
  lexical: { columns: string; select: string; values?: unknown[] },
): Promise<{ db: TestDatabase; dataSource: DataSource }> {
  const db = await createTestDatabase();
  const dataSource = await new DataSource(dataSourceOptions(db.url, 2)).initialize();
  await dataSource.transaction(async (manager) => {
    await manager.query(`SET LOCAL session_replication_role = replica`);
    await manager.query(
      `INSERT INTO kb_documents (document_id, parent_id, title, body, content_hash)
       SELECT format('f%s/doc-%s.md', i % 100, i), format('f%s', i % 100), format('Title %s', i), 'b', 'h'
         FROM generate_series(1, $1::int) AS i`,
      [count],
    );
    await manager.query(
      `INSERT INTO kb_lexical_documents (${lexical.columns})
       SELECT ${lexical.select} FROM generate_series(1, ${count}) AS i`,
      lexical.values ?? [],
    );
  });
  await dataSource.query('VACUUM ANALYZE kb_documents, kb_lexical_documents');
  return { db, dataSource };
}
