import { Injectable } from '@nestjs/common';
import { join } from 'node:path';
import { AppConfig } from '../../config/app-config';
import type { SourceDeclaration } from '../source-declaration';
import type { Connector } from './connector';
import { ConnectorBuilders } from './connector-builders';

/**
 * The connector of a declared source, built from its declaration and kept while the
 * declaration stays (a changed one takes effect at the next run). Git keeps its clones under
 * `DATA_DIR/sources/git/`.
 */
@Injectable()
export class ConnectorFactory {
  constructor(
    private readonly config: AppConfig,
    private readonly builders: ConnectorBuilders,
  ) {}

  /** The connector of each source, kept while its declaration stays (a site's pacing lives in it). */
  private readonly built = new Map<string, { declaration: string; connector: Connector }>();

  connectorFor(declaration: SourceDeclaration): Connector {
    const key = JSON.stringify(declaration);
    const kept = this.built.get(declaration.id);
    if (kept !== undefined && kept.declaration === key) return kept.connector;
    const connector = this.build(declaration);
    this.built.set(declaration.id, { declaration: key, connector });
    return connector;
  }

  /** Forgets the connectors of sources no longer declared. */
  forgetAllBut(ids: ReadonlySet<string>): void {
    for (const id of this.built.keys()) if (!ids.has(id)) this.built.delete(id);
  }

  private build(declaration: SourceDeclaration): Connector {
    switch (declaration.kind) {
      case 'folder':
        return this.builders.folder(declaration);
      case 'git':
        return this.builders.git(declaration, join(this.config.dataDir, 'sources', 'git'));
      case 'web':
        return this.builders.web(declaration);
    }
  }
}
