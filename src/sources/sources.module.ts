import { Injectable, Module } from '@nestjs/common';
import { join } from 'node:path';
import { AppConfig } from '../config/app-config';
import { DocumentsModule } from '../documents/documents.module';
import { MetricsModule } from '../metrics/metrics.module';
import type { Connector } from './connectors/connector';
import { ConnectorBuilders } from './connectors/connector-builders';
import { ConnectorFactory } from './connectors/connector-factory';
import { GitConnector } from './connectors/git/git-connector';
import type {
  FolderSourceDeclaration,
  GitSourceDeclaration,
  WebSourceDeclaration,
} from './source-declaration';
import { SourceRunner } from './source-runner';
import { SourcesController } from './sources.controller';
import { SourcesMetrics } from './sources.metrics';
import { SourcesRepository } from './sources.repository';
import { SourcesService } from './sources.service';

/** The connectors the server runs. */
@Injectable()
class ServerConnectors extends ConnectorBuilders {
  constructor(private readonly config: AppConfig) {
    super();
  }

  folder(declaration: FolderSourceDeclaration): Connector {
    throw new Error(`folder sources are not available in this build (${declaration.id})`);
  }

  git(declaration: GitSourceDeclaration, cacheDir: string): Connector {
    return new GitConnector(declaration, {
      cacheDir: join(cacheDir, declaration.id),
      env: this.config.environment,
    });
  }

  web(declaration: WebSourceDeclaration): Connector {
    throw new Error(`web sources are not available in this build (${declaration.id})`);
  }
}

@Module({
  imports: [DocumentsModule, MetricsModule],
  controllers: [SourcesController],
  providers: [
    SourcesRepository,
    SourcesService,
    SourceRunner,
    SourcesMetrics,
    ConnectorFactory,
    { provide: ConnectorBuilders, useClass: ServerConnectors },
  ],
  exports: [SourcesService],
})
export class SourcesModule {}
