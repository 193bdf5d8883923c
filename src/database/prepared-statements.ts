import { AsyncLocalStorage } from 'node:async_hooks';
import { Injectable } from '@nestjs/common';
import { DatabaseError, type Pool, type PoolClient, type QueryConfig } from 'pg';
import { DataSource, QueryFailedError } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
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
 * Hot statements run straight on the pool as named prepared statements: parsed once per
 * connection and planned once (a generic plan) instead of on every call, without TypeORM's
 * query runner. Repositories use it for the reads and writes on the request path; each
 * names its statements at the call site (one name per statement text).
 *
 * Inside {@link transaction}, every statement of the same async call tree runs in that
 * transaction instead: a write sent with an idempotency key and the answer stored for it
 * commit together, whatever the repositories the write goes through.
 */
@Injectable()
export class PreparedStatements {
  private readonly current = new AsyncLocalStorage<Transaction>();

  constructor(private readonly dataSource: DataSource) {}

  /** The rows of the named prepared statement `name` (`text`, run with `values`). */
  async query<T extends object>(name: string, text: string, values: unknown[]): Promise<T[]> {
    const transaction = this.current.getStore();
    if (transaction !== undefined && !transaction.ended) {
      return inTransaction<T>(transaction, { name, text, values });
    }
    const client = await this.pool().connect();
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

  private pool(): Pool {
    return (this.dataSource.driver as PostgresDriver).master as Pool;
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
