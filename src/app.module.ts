import {
  DynamicModule,
  MiddlewareConsumer,
  Module,
  NestModule,
  RequestMethod,
} from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { AuthModule } from './auth/auth.module';
import { BackupModule } from './backup/backup.module';
import { JsonBodyMiddleware } from './auth/json-body.middleware';
import { RestExceptionFilter } from './common/rest-exception.filter';
import { AppConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { ConsoleModule } from './console/console.module';
import { DatabaseModule } from './database/database.module';
import { DocumentsModule } from './documents/documents.module';
import { HealthModule } from './health/health.module';
import { McpModule } from './mcp/mcp.module';
import { MetricsModule } from './metrics/metrics.module';
import { SourcesModule } from './sources/sources.module';
import { VectorsModule } from './vectors/vectors.module';

@Module({})
export class AppModule implements NestModule {
  /** The whole application for one parsed configuration (tests pass their own). */
  static register(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot(config),
        DatabaseModule,
        // First among the modules with routes: Express tries routes in registration order.
        // The exact endpoint paths never reach the router (src/mcp/mcp-fast-path.ts); the
        // secret route and the other spellings of the endpoints do.
        McpModule,
        MetricsModule,
        HealthModule,
        AuthModule,
        DocumentsModule,
        VectorsModule,
        SourcesModule,
        BackupModule,
        ConsoleModule,
      ],
      providers: [{ provide: APP_FILTER, useClass: RestExceptionFilter }],
    };
  }

  configure(consumer: MiddlewareConsumer): void {
    consumer
      .apply(JsonBodyMiddleware)
      .forRoutes(
        { path: 'documents', method: RequestMethod.ALL },
        { path: 'documents/*path', method: RequestMethod.ALL },
        { path: 'admin/vectors/*path', method: RequestMethod.ALL },
        { path: 'sources', method: RequestMethod.ALL },
        { path: 'sources/*path', method: RequestMethod.ALL },
      );
  }
}
