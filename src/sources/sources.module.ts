import { Injectable, Module } from '@nestjs/common';
import { join } from 'node:path';
import { AppConfig } from '../config/app-config';
import { DocumentsModule } from '../documents/documents.module';
import { MetricsModule } from '../metrics/metrics.module';
import type { Connector } from './connectors/connector';
import { ConnectorBuilders } from './connectors/connector-builders';
import { ConnectorFactory } from './connectors/connector-factory';
import { FolderConnector } from './connectors/folder/folder-connector';
import { GitConnector } from './connectors/git/git-connector';
import { WebConnector } from './connectors/web/web-connector';
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
    return new FolderConnector(declaration);
  }

  git(declaration: GitSourceDeclaration, cacheDir: string): Connector {
    return new GitConnector(declaration, {
      cacheDir: join(cacheDir, declaration.id),
      env: this.config.environment,
    });
  }

  web(declaration: WebSourceDeclaration): Connector {
    // A source's URLs are the operator's: no host allow-list, but the same rules of scheme
    // and address as ingest_document.
    return new WebConnector(declaration, {
      allowHttp: this.config.ingestAllowHttp,
      allowedPrivateCidrs: this.config.ingestAllowedPrivateCidrs,
      requestTimeoutMs: this.config.ingestTimeoutMs,
    });
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
