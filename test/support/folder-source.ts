import { NODE_FOLDER_FILE_SYSTEM } from '../../src/conversion/folder-files';
import type {
  Enumeration,
  EnumerationContext,
  KnownItem,
} from '../../src/sources/connectors/connector';
import {
  FolderConnector,
  type FolderConnectorOptions,
} from '../../src/sources/connectors/folder/folder-connector';
import { openNoFollow, type OpenFile } from '../../src/sources/connectors/folder/steady-read';
import type { temporaryFolders } from './folders';

/** A first run's context: nothing known, a body limit of 4 096 bytes. */
export function aContext(overrides: Partial<EnumerationContext> = {}): EnumerationContext {
  return {
    known: new Map(),
    cursor: null,
    signal: new AbortController().signal,
    maxBodyBytes: 4096,
    ...overrides,
  };
}

/** What the reconciliation keeps of a run: the next run's `known`. */
export function knownOf(enumeration: Enumeration): Map<string, KnownItem> {
  return new Map(
    enumeration.items.map((item) => [item.key, { version: item.version, uri: item.uri }]),
  );
}

/** The items a reconciliation would read (those whose version is not the known one), read. */
export async function loadChanged(enumeration: Enumeration, known: ReadonlyMap<string, KnownItem>) {
  const changed = enumeration.items.filter((item) => known.get(item.key)?.version !== item.version);
  return Promise.all(
    changed.map(async (item) => ({ key: item.key, document: await item.load!() })),
  );
}

/** The real file system, counting the files opened (every read of a file opens it). */
export function countingOpens() {
  const opened: string[] = [];
  const open: OpenFile = (path) => {
    opened.push(path);
    return openNoFollow(path);
  };
  return { opened, fs: { ...NODE_FOLDER_FILE_SYSTEM, open } };
}

/**
 * A connector over `path`. The files the tests write were changed a moment ago, which would
 * make every version unsettled (read again at the next run) for 3 s: but for the test of that,
 * a file changed before the listing is taken as settled.
 */
export function aConnector(
  declaration: ConstructorParameters<typeof FolderConnector>[0],
  options: FolderConnectorOptions = {},
): FolderConnector {
  return new FolderConnector(declaration, { unsettledMs: 0, ...options });
}

/** A folder of `files`, a tick of the clock behind the next listing. */
export async function aFolder(
  folders: ReturnType<typeof temporaryFolders>,
  files: Record<string, string> = {},
): Promise<string> {
  const root = folders.make(files);
  await new Promise((resolve) => setTimeout(resolve, 2));
  return root;
}
