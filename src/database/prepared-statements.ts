import { Injectable } from '@nestjs/common';
import { DatabaseError, type Pool } from 'pg';
import { DataSource, QueryFailedError } from 'typeorm';
import type { PostgresDriver } from 'typeorm/driver/postgres/PostgresDriver';
import { isDatabaseUnavailable } from './database-errors';

/**
 * Hot statements run straight on the pool as named prepared statements: parsed once per
 * connection and planned once (a generic plan) instead of on every call, without TypeORM's
 * query runner. Repositories use it for the reads and writes on the request path; each
 * names its statements at the call site (one name per statement text).
 */
@Injectable()
export class PreparedStatements {
  constructor(private readonly dataSource: DataSource) {}

  /** The rows of the named prepared statement `name` (`text`, run with `values`). */
  async query<T extends object>(name: string, text: string, values: unknown[]): Promise<T[]> {
    const pool = (this.dataSource.driver as PostgresDriver).master as Pool;
    const client = await pool.connect();
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
      throw new QueryFailedError(text, values, error as Error);
    }
  }
}
