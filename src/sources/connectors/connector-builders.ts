import type {
  FolderSourceDeclaration,
  GitSourceDeclaration,
  WebSourceDeclaration,
} from '../source-declaration';
import type { Connector } from './connector';

/**
 * How each kind of source's connector is built: the sources module provides the one that
 * builds the real connectors (folder/, git/, web/); a test may provide its own.
 */
export abstract class ConnectorBuilders {
  abstract folder(declaration: FolderSourceDeclaration): Connector;
  /** `cacheDir`: where git keeps its clones, one folder per source. */
  abstract git(declaration: GitSourceDeclaration, cacheDir: string): Connector;
  abstract web(declaration: WebSourceDeclaration): Connector;
}
