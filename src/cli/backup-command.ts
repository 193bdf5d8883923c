import { createReadStream, createWriteStream } from 'node:fs';
import { rename, rm, stat } from 'node:fs/promises';
import { Readable, Transform } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { parseArgs } from 'node:util';
import { createGunzip } from 'node:zlib';
import { BackupInvalid, readBackup, type RowSink } from '../backup/backup-format';
import { progressBar } from './progress-bar';
import { SERVER_OPTIONS, serverClient } from './server-client';
import { CommandUsageError, help, out } from './usage-error';

export const BACKUP_USAGE = `agent-data backup FILE [--server URL] [--api-key-file F] [--json]

Saves a backup of the server's knowledge base into FILE: every document (deleted ones
included), every earlier version, the audit trail and the sources, read in one snapshot while
the server goes on serving. The backup is written to FILE.partial and renamed to FILE only once
it arrived whole and matched its manifest: a download cut short leaves no FILE.
Needs an admin key that may read every document.

  --json   print {file, bytes, tables, seconds} instead of the summary line
  --server URL, --api-key-file FILE: as for every command`;

export const RESTORE_USAGE = `agent-data restore FILE [--server URL] [--api-key-file F] [--json]

Sends the backup in FILE to the server, which restores it into its knowledge base if that is
empty (no document, no audit row, no source), in one transaction committed only once every
checksum matched. It returns once lexical search finds them all, or after 30 s saying how many
it finds (the rest follows in the background, some 150 a second); their vectors follow after.
Needs an admin key that may write every document.

  --json   print the server's answer instead of the summary line
  --server URL, --api-key-file FILE: as for every command`;

/** `agent-data backup FILE`: its exit code. */
export async function runBackup(args: readonly string[]): Promise<number> {
  const { values, file } = parse(args, BACKUP_USAGE, 'backup');
  if (file === undefined) return help(BACKUP_USAGE);
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
        `backed up ${tables.kb_documents} documents, ${tables.kb_document_snapshots} earlier versions, ${tables.kb_audit} audit rows and ${tables.kb_sources} sources into ${file} (${(bytes / 1e6).toFixed(1)} MB, ${seconds.toFixed(1)} s)`,
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
  const answer = (await response.json()) as {
    restored: Record<string, number>;
    lexically_indexed: number;
    lexical_complete: boolean;
    seconds: number;
  };
  bar?.stop();
  if (values.json) {
    out(JSON.stringify({ file, ...answer }, null, 2));
  } else {
    const { restored } = answer;
    out(
      `restored ${restored.kb_documents} documents, ${restored.kb_document_snapshots} earlier versions, ${restored.kb_audit} audit rows and ${restored.kb_sources} sources from ${file} in ${answer.seconds.toFixed(1)} s; ${answer.lexical_complete ? 'search finds them now' : `search finds ${answer.lexically_indexed} of them now and the others shortly`}, their vectors follow`,
    );
  }
  return 0;
}

const DISCARD: RowSink = { write: () => Promise.resolve(), end: () => Promise.resolve() };

function parse(args: readonly string[], usage: string, command: string) {
  const { values, positionals } = parseArgs({
    args: [...args],
    allowPositionals: true,
    options: SERVER_OPTIONS,
  });
  if (values.help) return { values, file: undefined };
  if (positionals.length !== 1) throw new CommandUsageError(`${command} takes one FILE`, usage);
  return { values, file: positionals[0] };
}
