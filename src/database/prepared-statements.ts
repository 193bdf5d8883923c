import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { DatabaseError, Pool, type PoolClient, type QueryConfig } from 'pg';
import { DataSource, QueryFailedError } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { AppConfig } from '../config/app-config';
import { isDatabaseUnavailable } from './database-errors';

/** A statement run in a transaction of {@link PreparedStatements.transaction}: its rows. */
export type TransactionQuery = <T extends object>(text: string, values: unknown[]) => Promise<T[]>;

/**
 * The transaction an async call tree runs in. Its connection is taken, and BEGIN sent, with
 * its first statement: work that fetches a page before writing holds no connection meanwhile.
 */
interface Transaction {
  /** The connection, taken and begun by the first statement (once). */
  readonly connection: () => Promise<PoolClient>;
  client?: PoolClient;
  /** The connection failed: it is dropped rather than given back to the pool. */
  broken?: Error;
  /** The first statement that failed: PostgreSQL refuses every later one, and the commit. */
  failure?: unknown;
  /**
   * Set once committed or rolled back: work the transaction started and left behind (a
   * timer, a cache refresh) goes to the pool rather than to a released connection.
   */
  ended: boolean;
}

/**
 * The connections of `DB_POOL_SIZE` kept for the named statements (the rest are TypeORM's):
 * half of them. A pool of one connection is not split: its named statements share it with
 * TypeORM and are planned as PostgreSQL chooses.
 */
export function plannedPoolSize(total: number): number {
  return total < 2 ? 0 : Math.floor(total / 2);
}

/**
 * Hot statements run straight on the pool as named prepared statements: parsed once per
 * connection and planned once (a generic plan) instead of on every call, without TypeORM's
 * query runner. Repositories use it for the reads and writes on the request path; each
 * names its statements at the call site (one name per statement text).
 *
 * They run on connections of their own whose sessions keep generic plans
 * (`plan_cache_mode = force_generic_plan`). Left to choose, PostgreSQL compares a generic
 * plan's estimated cost with the plans it makes for the values, and a `LIMIT $n` is
 * estimated as a tenth of the rows the range may hold: past a few hundred thousand documents
 * every page looked dearer generic than planned for its values, so each call was planned
 * again (about 0.2 ms, twice what a page's read costs), and listings served a third fewer
 * requests at a million documents than at 30 000. Every statement named here is written to
 * be good whatever its values (test/read-plans.e2e-spec.ts checks both kinds of plan of
 * each listing). TypeORM's statements, and {@link transaction}'s, keep PostgreSQL's choice:
 * they are not all written that way.
 *
 * Inside {@link transaction}, every statement of the same async call tree runs in that
 * transaction instead: a write sent with an idempotency key and the answer stored for it
 * commit together, whatever the repositories the write goes through.
 */
@Injectable()
export class PreparedStatements implements OnApplicationShutdown {
  private readonly logger = new Logger('Database');
  private readonly current = new AsyncLocalStorage<Transaction>();
  /** The named statements' own pool (TypeORM's when `DB_POOL_SIZE` is not split). */
  private readonly named: Pool;
  /** Whether {@link named} is this class's own, to end on shutdown. */
  private readonly ownsNamed: boolean;

  constructor(
    private readonly dataSource: DataSource,
    config: AppConfig,
  ) {
    const size = plannedPoolSize(config.dbPoolSize);
    this.ownsNamed = size > 0;
    this.named = this.ownsNamed ? this.plannedPool(size) : this.pool();
  }

  /** The rows of the named prepared statement `name` (`text`, run with `values`). */
  async query<T extends object>(name: string, text: string, values: unknown[]): Promise<T[]> {
    const transaction = this.current.getStore();
    if (transaction !== undefined && !transaction.ended) {
      return inTransaction<T>(transaction, { name, text, values });
    }
    const client = await this.named.connect();
    let broken: Error | undefined;
    // A checked-out client has no listener of the pool's: a connection that fails while
    // no statement runs on it (PostgreSQL restarting just before the query, or just after)
    // emits 'error', which must not go unheard (it would end the process). pg-pool's own
    // query() listens the same way.
    const onError = (error: Error) => (broken = error);
    client.on('error', onError);
    try {
      return (await client.query<T>({ name, text, values })).rows;
    } catch (error) {
      // A statement PostgreSQL refused leaves its connection (and the statements prepared
      // on it) good for the next one; only a connection that failed is dropped. The pool's
      // own query() would drop it after any error, which a client could cause at will.
      if (!(error instanceof DatabaseError) || isDatabaseUnavailable(error)) {
        broken = error as Error;
      }
      throw error;
    } finally {
      client.removeListener('error', onError);
      client.release(broken);
    }
  }

  /**
   * {@link query} for a writing statement: a failure is wrapped as TypeORM's
   * QueryFailedError, as TypeORM's query runner would, so that the error filters (and
   * isDatabaseUnavailable) see what they see for every other statement.
   */
  async write<T extends object>(name: string, text: string, values: unknown[]): Promise<T[]> {
    try {
      return await this.query<T>(name, text, values);
    } catch (error) {
      if (error instanceof QueryFailedError) throw error;
      throw new QueryFailedError(text, values, error as Error);
    }
  }

  /**
   * Runs `work` in one transaction, committed when it returns and rolled back when it throws;
   * `work`'s own statements go through `query`, and every {@link query} or {@link write} made
   * meanwhile in the same async call tree joins the transaction too. Called inside another
   * transaction, `work` joins that one (no nesting, no savepoint). A statement that failed
   * rolls the whole transaction back and its error is thrown, even when `work` caught it and
   * went on (a bulk write answers an outage per item): nothing it answered was committed.
   */
  async transaction<T>(work: (query: TransactionQuery) => Promise<T>): Promise<T> {
    const joined = this.current.getStore();
    if (joined !== undefined && !joined.ended) {
      return work((text, values) => inTransaction(joined, { text, values }));
    }
    let opened: Promise<PoolClient> | undefined;
    const transaction: Transaction = {
      connection: () => (opened ??= this.begin(transaction, onError)),
      ended: false,
    };
    const onError = (error: Error) => (transaction.broken = error);
    try {
      const result = await this.current.run(transaction, () =>
        work((text, values) => inTransaction(transaction, { text, values })),
      );
      if (transaction.failure !== undefined) throw transaction.failure;
      if (transaction.client !== undefined) await inTransaction(transaction, { text: 'COMMIT' });
      return result;
    } catch (error) {
      const client = transaction.client;
      if (client !== undefined && transaction.broken === undefined) {
        await client.query('ROLLBACK').catch((rollback: Error) => (transaction.broken = rollback));
      }
      throw error;
    } finally {
      transaction.ended = true;
      transaction.client?.removeListener('error', onError);
      transaction.client?.release(transaction.broken ?? brokenBy(transaction.failure));
    }
  }

  /** Takes a connection for `transaction` (listening to its errors, see query) and begins it. */
  private async begin(
    transaction: Transaction,
    onError: (error: Error) => void,
  ): Promise<PoolClient> {
    const client = await this.pool().connect();
    client.on('error', onError);
    transaction.client = client;
    await client.query('BEGIN');
    return client;
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.ownsNamed && !this.named.ended) await this.named.end();
  }

  private pool(): Pool {
    return (this.dataSource.driver as PostgresDriver).master as Pool;
  }

  /**
   * The pool of the named statements: TypeORM's connection options, its share of
   * `DB_POOL_SIZE`, and sessions that keep generic plans (set as each connection opens, before
   * its first statement: a client runs its queries in order). It connects on first use.
   */
  private plannedPool(size: number): Pool {
    const pool = new Pool({ ...this.pool().options, max: size });
    pool.on('connect', (client) => {
      // A connection lost meanwhile fails its first statement too, and is dropped then.
      client
        .query('SET plan_cache_mode = force_generic_plan')
        .catch((error: Error) =>
          this.logger.warn(`a connection keeps PostgreSQL's choice of plans: ${error.message}`),
        );
    });
    // An idle connection that fails (PostgreSQL restarting) is dropped by the pool; without a
    // listener its error would end the process.
    pool.on('error', (error) => this.logger.debug(`a pooled connection failed: ${error.message}`));
    return pool;
  }
}

/** One statement of `transaction`, remembering the first failure (the rest would fail after it). */
async function inTransaction<T extends object>(
  transaction: Transaction,
  statement: Omit<QueryConfig, 'values'> & { values?: unknown[] },
): Promise<T[]> {
  if (transaction.failure !== undefined) throw transaction.failure;
  try {
    const client = await transaction.connection();
    return (await client.query<T>(statement as QueryConfig)).rows;
  } catch (error) {
    const failure =
      error instanceof QueryFailedError
        ? error
        : new QueryFailedError(statement.text, statement.values, error as Error);
    transaction.failure = failure;
    throw failure;
  }
}

/** The error to drop a connection for: one that failed, not a statement PostgreSQL refused. */
function brokenBy(failure: unknown): Error | undefined {
  if (failure === undefined) return undefined;
  const cause = (failure as { driverError?: unknown }).driverError ?? failure;
  return !(cause instanceof DatabaseError) || isDatabaseUnavailable(cause)
    ? (failure as Error)
    : undefined;
}
