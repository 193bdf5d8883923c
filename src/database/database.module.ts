import { Global, Inject, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { openDatabase, OpenedDatabase } from './database-opener';
import { ListenConnection } from './listen-connection';
import { plannedPoolSize, PreparedStatements } from './prepared-statements';

/** Token of the opened database (data source, connection string, embedded cluster). */
const OPENED_DATABASE = Symbol('OPENED_DATABASE');

/** Connection string the application uses (the embedded cluster's, or DATABASE_URL). */
export const DATABASE_URL = Symbol('DATABASE_URL');

const logger = new Logger('Database');

/**
 * The database of the application, opened once with {@link openDatabase} (the same opener
 * `migrate.ts` and the TypeORM CLI use): the embedded PostgreSQL or DATABASE_URL, the
 * data source, and with MIGRATIONS_RUN the migrations, under the advisory lock that lets
 * several replicas start at once on a fresh database.
 */
@Global()
@Module({
  providers: [
    {
      provide: OPENED_DATABASE,
      inject: [AppConfig],
      useFactory: (config: AppConfig): Promise<OpenedDatabase> =>
        openDatabase({
          target: config,
          // The named statements' share of the connections is theirs (PreparedStatements).
          poolSize: config.dbPoolSize - plannedPoolSize(config.dbPoolSize),
          migrate: config.migrationsRun,
          log: {
            info: (m) => logger.log(m),
            warn: (m) => logger.warn(m),
            debug: (m) => logger.debug(m),
          },
        }),
    },
    {
      provide: DATABASE_URL,
      inject: [OPENED_DATABASE],
      useFactory: (opened: OpenedDatabase) => opened.url,
    },
    {
      provide: DataSource,
      inject: [OPENED_DATABASE],
      useFactory: (opened: OpenedDatabase) => opened.dataSource,
    },
    {
      provide: ListenConnection,
      inject: [DATABASE_URL],
      useFactory: (url: string) => new ListenConnection(url),
    },
    PreparedStatements,
  ],
  exports: [DataSource, DATABASE_URL, ListenConnection, PreparedStatements],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(@Inject(OPENED_DATABASE) private readonly opened: OpenedDatabase) {}

  /** Runs after every module's onModuleDestroy: nothing uses the pool any more. */
  async onApplicationShutdown(): Promise<void> {
    await this.opened.close();
  }
}
