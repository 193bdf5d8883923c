import { Injectable, Logger } from '@nestjs/common';
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { Readable, Transform, type Writable } from 'node:stream';
import { finished, pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { DomainError, ErrorCode } from '../common/domain-error';
import { AppConfig } from '../config/app-config';
import { isDatabaseUnavailable } from '../database/database-errors';
import type { Access } from '../documents/access';
import { DocumentSources } from '../documents/document-sources';
import { SERVER_VERSION } from '../common/version';
import { VectorsAdminService } from '../vectors/vectors-admin.service';
import {
  BACKUP_FORMAT,
  BACKUP_MAGIC,
  BackupInvalid,
  END_OF_TABLE,
  GZIP_MAGIC,
  migrationTime,
  readBackup,
  TableHash,
  type BackupHeader,
  type RowSink,
  type TableDigest,
} from './backup-format';
import { BackupRepository, endCopy, type Restore } from './backup.repository';
import { KEPT_BY_NAME, KEPT_TABLES } from './backup-tables';
import type { RestoreResult } from './backup.schemas';

/**
 * Backups and restores of what the knowledge base cannot derive again (backup-tables.ts), in
 * the format of backup-format.ts.
 */
@Injectable()
export class BackupService {
  private readonly logger = new Logger('Backup');

  constructor(
    private readonly repository: BackupRepository,
    private readonly vectors: VectorsAdminService,
    private readonly config: AppConfig,
    private readonly sources: DocumentSources,
  ) {}

  /**
   * Opens a backup's snapshot and resolves with what writes the backup (gzip) into a stream,
   * read from the snapshot as the stream takes it: memory holds the chunk in flight, whatever
   * the size. Refused unless `access` reads every document. The snapshot is taken before this
   * resolves, so every write acknowledged earlier is in it.
   */
  async backup(access: Access): Promise<(target: Writable) => Promise<void>> {
    if (access.readableUnder('') !== 'all') {
      access.refused();
      throw new DomainError(
        ErrorCode.PERMISSION_DENIED,
        'a backup holds every document: it needs read access to all of them, and the access policy grants this caller only some folders',
      );
    }
    const snapshot = await this.repository.openSnapshot();
    const header: BackupHeader = {
      format: BACKUP_FORMAT,
      schema: snapshot.facts.schema,
      server_version: SERVER_VERSION,
      postgres_version: snapshot.facts.postgresVersion,
      created_at: new Date().toISOString(),
      audit_through: snapshot.facts.auditThrough,
    };
    const started = Date.now();
    const logger = this.logger;
    async function* bytes(): AsyncGenerator<Buffer> {
      const whole = createHash('sha256');
      const framed = (text: string) => {
        const buffer = Buffer.from(text, 'utf8');
        whole.update(buffer);
        return buffer;
      };
      const tables: Record<string, TableDigest> = {};
      try {
        yield framed(`${BACKUP_MAGIC}\n${JSON.stringify(header)}\n`);
        for (const table of KEPT_TABLES) {
          yield framed(`TABLE ${table.name} (${table.columns.join(',')})\n`);
          const hash = new TableHash();
          for await (const chunk of snapshot.rows(table) as AsyncIterable<Buffer>) {
            hash.update(chunk);
            whole.update(chunk);
            yield chunk;
          }
          yield framed(`${END_OF_TABLE}\n`);
          tables[table.name] = hash.digest();
        }
        const manifest = { tables, sha256: whole.digest('hex') };
        yield Buffer.from(`MANIFEST ${JSON.stringify(manifest)}\n`);
        logger.log(
          `backup taken: ${tables.kb_documents.rows} documents, ${tables.kb_audit.rows} audit rows through id ${header.audit_through}, in ${((Date.now() - started) / 1000).toFixed(1)} s`,
        );
      } finally {
        await snapshot.close();
      }
    }
    const source = Readable.from(bytes(), { objectMode: false });
    // A middling level: markdown shrinks about as well, at a fraction of the CPU of level 9.
    return (target) => pipeline(source, createGzip({ level: 4 }), target);
  }

  /**
   * Restores the gzip backup read from `body` into an empty knowledge base, in one
   * transaction committed only once every checksum matched, then indexes the documents
   * lexically so that search finds them at once (their vectors follow in the background).
   */
  async restore(body: Readable, access: Access): Promise<RestoreResult> {
    if (access.write !== '*') {
      access.refused();
      throw new DomainError(
        ErrorCode.PERMISSION_DENIED,
        'a restore writes every document: it needs write access to all of them, and the access policy grants this caller only some folders',
      );
    }
    const started = Date.now();
    const restore = await this.repository.openRestore();
    let copying: Writable | undefined;
    let header: BackupHeader;
    let tables: Record<string, TableDigest>;
    try {
      const found = await restore.nonEmptyTables();
      if (found.length > 0) {
        throw new DomainError(
          ErrorCode.NOT_EMPTY,
          `the knowledge base is not empty (${found.map(describeTable).join(', ')} found): a backup is restored only into an empty one`,
          { found },
        );
      }
      const columns = await restore.columns();
      await restore.quietTriggers();
      const ours = restore.facts.schema;
      ({
        header,
        manifest: { tables },
      } = await readBackup(gunzipped(body), {
        header: (read) => checkSchema(read.schema, ours),
        table: async (name, names) => {
          const known = KEPT_BY_NAME.has(name) ? columns.get(name) : undefined;
          if (known === undefined) {
            throw new BackupInvalid(`the backup holds table ${name}, which is not restored`);
          }
          const unknown = names.filter((column) => !known.includes(column));
          if (unknown.length > 0 || new Set(names).size !== names.length) {
            throw new BackupInvalid(
              `table ${name} of the backup has columns this schema lacks or repeats: ${unknown.join(', ') || names.join(', ')}`,
            );
          }
          copying = restore.copyInto(name, names);
          return sinkOf(copying, () => (copying = undefined));
        },
      }));
      const missing = KEPT_TABLES.filter((table) => !(table.name in tables));
      if (missing.length > 0) {
        throw new BackupInvalid(`the backup lacks table ${missing.map((t) => t.name).join(', ')}`);
      }
      await restore.commit();
    } catch (error) {
      await abort(restore, copying);
      throw refusalOf(error);
    }
    // The restored sources own their documents from now on, here (other servers within 5 s).
    await this.sources.reloadMounts().catch((error: Error) => {
      this.logger.warn(`the restored sources' folders are learnt within 5 s: ${error.message}`);
    });
    const documents = tables.kb_documents.rows;
    const lexical = await this.indexLexically(documents);
    const seconds = (Date.now() - started) / 1000;
    this.logger.log(
      `restored ${documents} documents, ${tables.kb_document_snapshots.rows} snapshots and ${tables.kb_audit.rows} audit rows from the backup of ${header.created_at} (schema ${header.schema}) in ${seconds.toFixed(1)} s`,
    );
    return {
      restored: Object.fromEntries(Object.entries(tables).map(([name, t]) => [name, t.rows])),
      schema: header.schema,
      created_at: header.created_at,
      audit_through: header.audit_through,
      lexically_indexed: lexical.indexed,
      lexically_indexable: lexical.indexable,
      lexical_complete: lexical.indexed >= lexical.indexable,
      seconds,
    };
  }

  /**
   * The lexical pass over the restored documents, waited for at most RESTORE_LEXICAL_WAIT_MS
   * (30 s: a proxy in front would cut a longer silence): it goes on in the background after,
   * and a failure leaves the rest to the pipeline. Then how many documents search finds, of
   * those it is to find (the pipeline's batches index some too, from the other end of the
   * queue).
   */
  private async indexLexically(documents: number): Promise<{ indexed: number; indexable: number }> {
    const pass = this.vectors.indexLexicallyNow().then(
      () => undefined,
      (error: Error) => {
        this.logger.warn(
          `lexical indexing after the restore stopped, the pipeline goes on with it: ${error.message}`,
        );
      },
    );
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.config.restoreLexicalWaitMs);
    });
    await Promise.race([pass, waited]);
    clearTimeout(timer);
    try {
      return await this.vectors.lexicalCoverage();
    } catch (error) {
      // The restore is committed: the answer says so, with nothing known of the index.
      this.logger.warn(`lexical search's coverage unknown: ${(error as Error).message}`);
      return { indexed: 0, indexable: documents };
    }
  }
}

const TABLE_WORDS: Record<string, string> = {
  kb_documents: 'documents',
  kb_document_snapshots: 'document versions',
  kb_audit: 'audit rows',
  kb_sources: 'sources',
  kb_source_items: 'source items',
  kb_source_runs: 'source runs',
};

function describeTable(name: string): string {
  return TABLE_WORDS[name] ?? name;
}

/** Refuses a backup of a schema this server does not know yet. */
function checkSchema(theirs: string, ours: string): void {
  if (theirs === ours) return;
  const [their, our] = [migrationTime(theirs), migrationTime(ours)];
  if (Number.isNaN(their)) throw new BackupInvalid(`the backup's schema ${theirs} is not known`);
  if (their > our) {
    throw new BackupInvalid(
      `the backup was taken at a newer schema (${theirs}) than this server's (${ours}): restore it with a server at least as new`,
    );
  }
}

/**
 * The body, decompressed; a body that does not start as gzip does (1f 8b) fails at its first
 * bytes, saying so, rather than as a gzip stream cut short.
 */
function gunzipped(body: Readable): AsyncIterable<Buffer> {
  const gunzip = createGunzip();
  let checked = 0;
  const magic = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      for (let at = 0; checked < GZIP_MAGIC.length && at < chunk.length; at++, checked++) {
        if (chunk[at] !== GZIP_MAGIC[checked]) {
          done(new BackupInvalid('this is not an Agent Data backup (not gzip)'));
          return;
        }
      }
      done(null, chunk);
    },
  });
  body.on('error', (error) => gunzip.destroy(error));
  magic.on('error', (error) => gunzip.destroy(error));
  return body.pipe(magic).pipe(gunzip);
}

/**
 * Rows into a COPY stream, waiting whenever PostgreSQL is behind. PostgreSQL may refuse a row
 * while the next ones are still being read and checked: its error is kept (an 'error' event
 * nobody listened to would bring the process down) and thrown at the next write or the end.
 */
function sinkOf(stream: Writable, ended: () => void): RowSink {
  let refused: Error | undefined;
  stream.on('error', (error) => (refused ??= error));
  return {
    async write(rows) {
      if (refused) throw refused;
      if (!stream.write(rows)) await once(stream, 'drain');
    },
    async end() {
      if (refused) throw refused;
      await endCopy(stream);
      ended();
    },
  };
}

async function abort(restore: Restore, copying: Writable | undefined): Promise<void> {
  if (copying !== undefined) {
    // A COPY left open is failed first (CopyFail), so that the transaction can roll back.
    copying.destroy(new Error('the restore was abandoned'));
    await finished(copying).catch(() => undefined);
  }
  await restore.rollback();
}

/** What the caller is told of a failed restore. */
function refusalOf(error: unknown): unknown {
  if (error instanceof BackupInvalid) {
    return new DomainError(ErrorCode.INVALID_BACKUP, error.message);
  }
  const zlibCode = (error as { code?: unknown }).code;
  if (typeof zlibCode === 'string' && zlibCode.startsWith('Z_')) {
    return new DomainError(
      ErrorCode.INVALID_BACKUP,
      `the backup is not a whole gzip stream (${(error as Error).message}): it was cut short or corrupted`,
    );
  }
  // PostgreSQL refusing a row (a bad value, a duplicate key) means the backup is not valid.
  const sqlState = (error as { code?: unknown }).code;
  if (typeof sqlState === 'string' && /^(22|23)/.test(sqlState) && !isDatabaseUnavailable(error)) {
    return new DomainError(
      ErrorCode.INVALID_BACKUP,
      `PostgreSQL refused a row of the backup: ${(error as Error).message}`,
    );
  }
  return error;
}
