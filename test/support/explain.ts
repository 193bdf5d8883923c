import type { Client } from 'pg';

/** A node of `EXPLAIN (FORMAT JSON)` output, with the fields the tests read. */
export interface PlanNode {
  'Node Type': string;
  'Index Name'?: string;
  'Relation Name'?: string;
  'Index Cond'?: string;
  /** With EXPLAIN ANALYZE: rows the node produced per loop, and how many loops it ran. */
  'Actual Rows'?: number;
  'Actual Loops'?: number;
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
  const read = (await analyzedPlan(db, sql, params))
    .filter((node) => /^(Seq|Index|Index Only|Bitmap Heap) Scan$/.test(node['Node Type']))
    .reduce((sum, node) => sum + (node['Actual Rows'] ?? 0) * (node['Actual Loops'] ?? 1), 0);
  // Actual Rows is a per-loop average (fractional since PostgreSQL 18): round the sum.
  return Math.round(read);
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
