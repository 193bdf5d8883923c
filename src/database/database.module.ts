import { Global, Inject, Logger, Module, OnApplicationShutdown } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppConfig } from '../config/app-config';
import { dataSourceOptions } from './data-source-options';
import { EmbeddedPostgresHandle, startEmbeddedPostgres } from './embedded-postgres';

/** Token of the embedded cluster handle; `null` when DATABASE_URL points at a server. */
export const EMBEDDED_POSTGRES = Symbol('EMBEDDED_POSTGRES');

/** Connection string the application uses (the embedded cluster's, or DATABASE_URL). */
export const DATABASE_URL = Symbol('DATABASE_URL');

const logger = new Logger('Database');

@Global()
@Module({
  providers: [
    {
      provide: EMBEDDED_POSTGRES,
      inject: [AppConfig],
      useFactory: async (config: AppConfig): Promise<EmbeddedPostgresHandle | null> =>
        config.databaseUrl
          ? null
          : startEmbeddedPostgres(config.dataDir, {
              info: (m) => logger.log(m),
              warn: (m) => logger.warn(m),
              debug: (m) => logger.debug(m),
            }),
    },
    {
      provide: DATABASE_URL,
      inject: [AppConfig, EMBEDDED_POSTGRES],
      useFactory: (config: AppConfig, embedded: EmbeddedPostgresHandle | null) =>
        embedded?.url ?? config.databaseUrl!,
    },
    {
      provide: DataSource,
      inject: [AppConfig, DATABASE_URL],
      useFactory: async (config: AppConfig, url: string) => {
        const dataSource = new DataSource(dataSourceOptions(url, config.dbPoolSize));
        await dataSource.initialize();
        if (config.migrationsRun) {
          const applied = await dataSource.runMigrations({ transaction: 'each' });
          if (applied.length > 0)
            logger.log(`applied migrations: ${applied.map((m) => m.name).join(', ')}`);
        }
        return dataSource;
      },
    },
  ],
  exports: [DataSource, DATABASE_URL],
})
export class DatabaseModule implements OnApplicationShutdown {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(EMBEDDED_POSTGRES) private readonly embedded: EmbeddedPostgresHandle | null,
  ) {}

  /** Runs after every module's onModuleDestroy: nothing uses the pool any more. */
  async onApplicationShutdown(): Promise<void> {
    try {
      if (this.dataSource.isInitialized) await this.dataSource.destroy();
    } finally {
      await this.embedded?.stop();
    }
  }
}
