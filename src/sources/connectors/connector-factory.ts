import { Injectable } from '@nestjs/common';
import { join } from 'node:path';
import { AppConfig } from '../../config/app-config';
import type { SourceDeclaration } from '../source-declaration';
import type { Connector } from './connector';
import { ConnectorBuilders } from './connector-builders';

/**
 * The connector of a declared source, built from its declaration at each run (a changed
 * declaration takes effect at the next run). Git keeps its clones under
 * `DATA_DIR/sources/git/`.
 */
@Injectable()
export class ConnectorFactory {
  constructor(
    private readonly config: AppConfig,
    private readonly builders: ConnectorBuilders,
  ) {}

  connectorFor(declaration: SourceDeclaration): Connector {
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
