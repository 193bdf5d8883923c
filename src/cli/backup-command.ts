import { createReadStream, createWriteStream } from 'node:fs';
import { open, rename, rm, stat } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { createGunzip } from 'node:zlib';
import { BackupInvalid, GZIP_MAGIC, readBackup, type RowSink } from '../backup/backup-format';
import { humanSize } from './human-size';
import { progressBar } from './progress-bar';
import { SERVER_OPTIONS, serverClient } from './server-client';
import { CommandUsageError, help, out } from './usage-error';

export const BACKUP_USAGE = `agent-data backup FILE [--force] [--server URL] [--api-key-file F] [--json]

Saves a backup of the server's knowledge base into FILE: every document (deleted ones
included), every earlier version, the audit trail and the sources, read in one snapshot while
the server goes on serving. The backup is written to FILE.partial and renamed to FILE only once
it arrived whole and matched its manifest: a download cut short leaves FILE as it was (or
none). An existing FILE is refused unless --force.
Needs an admin key that may read every document.

  --force  replace FILE if it exists (only once the new backup arrived whole)
  --json   print {file, bytes, tables, seconds} instead of the summary line
  --server URL, --api-key-file FILE: as for every command`;

export const RESTORE_USAGE = `agent-data restore FILE [--server URL] [--api-key-file F] [--json]

Sends the backup in FILE to the server, which restores it into its knowledge base if that is
empty (no document, no audit row, no source), in one transaction committed only once every
checksum matched, then indexes the documents for lexical search (about a thousand a second on
two cores). The server answers once search finds them all, or after RESTORE_LEXICAL_WAIT_MS
(30 s); this command then shows how many search finds until it finds them all, and returns.
Their vectors follow in the background.
Needs an admin key that may write every document.

  --json   print the server's answer instead of the summary line (lexically_indexed and
           lexical_complete as they were when this command returned)
  --server URL, --api-key-file FILE: as for every command`;

/** `agent-data backup FILE`: its exit code. */
export async function runBackup(args: readonly string[]): Promise<number> {
  const { values, file } = parse(args, BACKUP_USAGE, 'backup', { force: { type: 'boolean' } });
  if (file === undefined) return help(BACKUP_USAGE);
  if (values.force !== true && (await stat(file).catch(() => undefined)) !== undefined) {
    throw new Error(`${file} exists: pass --force to replace it`);
  }
  const client = serverClient(values, BACKUP_USAGE);
  const started = Date.now();
  const response = await client.open('GET', '/admin/backup', { accept: 'application/gzip' });
  const bar = progressBar(values.json === true, { label: 'backup', bytes: true });
  const partial = `${file}.partial`;
  let bytes = 0;
  let table = '';
  const counted = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      bytes += chunk.length;
      // The total is unknown until the end: the bar shows what came so far.
      bar?.update(bytes, bytes, table);
      done(null, chunk);
    },
  });
  const source = Readable.fromWeb(response.body as never).pipe(counted);
  const saved = pipeline(source, createWriteStream(partial));
  const gunzip = createGunzip();
  source.pipe(gunzip);
  try {
    const [, { manifest }] = await Promise.all([
      saved,
      readBackup(gunzip, {
        header: () => undefined,
        table: (name) => {
          table = name;
          return Promise.resolve(DISCARD);
        },
      }),
    ]);
    bar?.stop();
    await rename(partial, file);
    const tables = Object.fromEntries(
      Object.entries(manifest.tables).map(([name, digest]) => [name, digest.rows]),
    );
    const seconds = (Date.now() - started) / 1000;
    if (values.json) {
      out(JSON.stringify({ file, bytes, tables, seconds }, null, 2));
    } else {
      out(
        `backed up ${tables.kb_documents} documents, ${tables.kb_document_snapshots} earlier versions, ${tables.kb_audit} audit rows and ${tables.kb_sources} sources into ${file} (${humanSize(bytes)}, ${seconds.toFixed(1)} s)`,
      );
    }
    return 0;
  } catch (error) {
    bar?.stop();
    source.destroy();
    gunzip.destroy();
    await finished(source).catch(() => undefined);
    await rm(partial, { force: true });
    if (error instanceof BackupInvalid)
      throw new Error(`the backup did not arrive whole: ${error.message}`);
    const code = (error as { code?: unknown }).code;
    if (typeof code === 'string' && code.startsWith('Z_')) {
      throw new Error('the backup did not arrive whole: the download was cut short or damaged');
    }
    throw error;
  }
}

/** `agent-data restore FILE`: its exit code. */
export async function runRestore(args: readonly string[]): Promise<number> {
  const { values, file } = parse(args, RESTORE_USAGE, 'restore');
  if (file === undefined) return help(RESTORE_USAGE);
  const size = (await stat(file).catch(() => undefined))?.size;
  if (size === undefined) throw new Error(`${file} does not exist`);
  if (!(await isGzip(file))) throw new Error(`${file} is not an Agent Data backup (not gzip)`);
  const client = serverClient(values, RESTORE_USAGE);
  const bar = progressBar(values.json === true, { label: 'restore', bytes: true });
  const response = await client.open('POST', '/admin/restore', {
    contentType: 'application/gzip',
    body: () => {
      let sent = 0;
      return createReadStream(file).pipe(
        new Transform({
          transform(chunk: Buffer, _encoding, done) {
            sent += chunk.length;
            bar?.update(sent, size, sent === size ? 'checking and indexing' : '');
            done(null, chunk);
          },
        }),
      );
    },
  });
  const answer = (await response.json()) as RestoreAnswer;
  bar?.stop();
  const searchable = answer.lexical_complete
    ? answer
    : await untilSearchable(client, answer, values.json === true);
  if (values.json) {
    out(JSON.stringify({ file, ...searchable }, null, 2));
  } else {
    const { restored } = answer;
    out(
      `restored ${restored.kb_documents} documents, ${restored.kb_document_snapshots} earlier versions, ${restored.kb_audit} audit rows and ${restored.kb_sources} sources from ${file} in ${answer.seconds.toFixed(1)} s; ${searchable.lexical_complete ? 'search finds them now' : `search finds ${searchable.lexically_indexed} of ${searchable.lexically_indexable} now and the others later`}, their vectors follow`,
    );
  }
  return 0;
}

interface RestoreAnswer {
  restored: Record<string, number>;
  lexically_indexed: number;
  lexically_indexable: number;
  lexical_complete: boolean;
  seconds: number;
}

/** How often the lexical pass is looked at after the answer, and how long it may stand still. */
const POLL_MS = 1000;
const STILL_MS = 60_000;

/**
 * Waits, with a progress bar, until lexical search finds every restored document (the server
 * answered before its lexical pass was over): the answer with the counts seen last. Gives up,
 * saying so, when the count stands still for a minute (the pipeline off, or stopped).
 */
async function untilSearchable(
  client: ReturnType<typeof serverClient>,
  answer: RestoreAnswer,
  json: boolean,
): Promise<RestoreAnswer> {
  const bar = progressBar(json, { label: 'searchable' });
  let { lexically_indexed: indexed, lexically_indexable: indexable } = answer;
  let movedAt = Date.now();
  try {
    while (indexed < indexable && Date.now() - movedAt < STILL_MS) {
      bar?.update(indexed, indexable, 'documents found by their words');
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      const status = await client.call<{
        lexical_coverage: { indexed: number; indexable: number };
      }>('GET', '/admin/vectors/status');
      if (status.lexical_coverage.indexed !== indexed) movedAt = Date.now();
      ({ indexed, indexable } = status.lexical_coverage);
    }
    bar?.update(indexed, indexable, 'documents found by their words');
  } finally {
    bar?.stop();
  }
  return {
    ...answer,
    lexically_indexed: indexed,
    lexically_indexable: indexable,
    lexical_complete: indexed >= indexable,
  };
}

/** Whether `file` starts as gzip does. */
async function isGzip(file: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const { bytesRead, buffer } = await handle.read(Buffer.alloc(2), 0, 2, 0);
    return bytesRead === GZIP_MAGIC.length && GZIP_MAGIC.every((byte, i) => buffer[i] === byte);
  } finally {
    await handle.close();
  }
}

const DISCARD: RowSink = { write: () => Promise.resolve(), end: () => Promise.resolve() };

function parse(
  args: readonly string[],
  usage: string,
  command: string,
  more: { force?: { type: 'boolean' } } = {},
) {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: { ...SERVER_OPTIONS, ...more },
  });
  if (values.help) return { values, file: undefined };
  if (positionals.length !== 1) throw new CommandUsageError(`${command} takes one FILE`, usage);
  return { values, file: positionals[0] };
}
