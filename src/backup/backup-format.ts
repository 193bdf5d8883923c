import { createHash, type Hash } from 'node:crypto';

/**
 * The backup file, as the server writes it and both the server (restore) and the command line
 * (`agent-data backup`, which checks what it saved) read it: gzip of lines,
 *
 *     AGENT-DATA-BACKUP 1
 *     {"format":1,"schema":…,"server_version":…,"created_at":…,"audit_through":…}
 *     TABLE kb_documents (document_id,parent_id,…)
 *     <the rows, in PostgreSQL's COPY text format: one line each>
 *     \.
 *     TABLE …
 *     MANIFEST {"tables":{"kb_documents":{"rows":…,"sha256":…},…},"sha256":…}
 *
 * COPY's text format escapes newlines and backslashes inside values, so a row is one line and
 * never `\.`. The manifest comes last: each table's row count and the sha256 of its rows'
 * bytes, and the sha256 of every byte before the manifest line. A file without it was cut.
 */
export const BACKUP_MAGIC = 'AGENT-DATA-BACKUP 1';
export const BACKUP_FORMAT = 1;
export const END_OF_TABLE = '\\.';

export interface BackupHeader {
  readonly format: number;
  /** The name of the last migration applied to the database backed up. */
  readonly schema: string;
  /** The version of the server that wrote it. */
  readonly server_version: string;
  readonly postgres_version: string;
  readonly created_at: string;
  /** The highest audit id in the snapshot (0 with none): the change feed's position. */
  readonly audit_through: number;
}

export interface TableDigest {
  readonly rows: number;
  readonly sha256: string;
}

export interface BackupManifest {
  readonly tables: Readonly<Record<string, TableDigest>>;
  readonly sha256: string;
}

/** A backup that cannot be read as one: cut, corrupt, or not a backup at all. */
export class BackupInvalid extends Error {}

/** Longest line other than a row (the header, a TABLE line, the manifest). */
const MAX_FRAME_LINE = 1 << 20;
/** Longest row: a document at the largest body the server accepts is far below this. */
const MAX_ROW_LINE = 256 << 20;
/** Rows handed to a table's sink at a time. */
const ROW_BATCH_BYTES = 256 << 10;

/** The sha256 and row count of one table's COPY bytes, fed as they pass. */
export class TableHash {
  private readonly hash: Hash = createHash('sha256');
  rows = 0;

  update(bytes: Buffer): void {
    this.hash.update(bytes);
    for (let at = bytes.indexOf(10); at !== -1; at = bytes.indexOf(10, at + 1)) this.rows++;
  }

  digest(): TableDigest {
    return { rows: this.rows, sha256: this.hash.digest('hex') };
  }
}

/**
 * Lines of a byte stream, without their `\n`, each handed over as a view of the chunk it lies
 * in when it does (no copy). A last line without its `\n` means the stream was cut.
 */
export class LineReader {
  private readonly iterator: AsyncIterator<Buffer>;
  private chunk: Buffer = Buffer.alloc(0);
  private at = 0;
  private partial: Buffer[] = [];
  private partialBytes = 0;

  constructor(source: AsyncIterable<Buffer>) {
    this.iterator = source[Symbol.asyncIterator]();
  }

  /** The next line, or `undefined` at the end. */
  async next(max: number): Promise<Buffer | undefined> {
    for (;;) {
      const newline = this.chunk.indexOf(10, this.at);
      if (newline !== -1) {
        const piece = this.chunk.subarray(this.at, newline);
        this.at = newline + 1;
        if (this.partial.length === 0) return piece;
        const line = Buffer.concat([...this.partial, piece]);
        this.partial = [];
        this.partialBytes = 0;
        return line;
      }
      if (this.at < this.chunk.length) {
        this.partial.push(this.chunk.subarray(this.at));
        this.partialBytes += this.chunk.length - this.at;
        if (this.partialBytes > max) {
          throw new BackupInvalid(`a line is longer than ${max} bytes: this is not a backup`);
        }
      }
      const { value, done } = await this.iterator.next();
      if (done) {
        if (this.partialBytes > 0)
          throw new BackupInvalid('the backup ends in the middle of a line');
        return undefined;
      }
      this.chunk = value;
      this.at = 0;
    }
  }
}

/** Where the rows of one table go. */
export interface RowSink {
  write(rows: Buffer): Promise<void>;
  end(): Promise<void>;
}

export interface BackupReader {
  /** Checks the header (a newer schema, another format); throws BackupInvalid to refuse. */
  header(header: BackupHeader): Promise<void> | void;
  /** Opens a table's section; throws BackupInvalid for a table or column it does not know. */
  table(name: string, columns: readonly string[]): Promise<RowSink>;
}

/**
 * Reads a whole (decompressed) backup into `reader`, then checks every table's rows and
 * checksum and the whole stream's checksum against the manifest, and that nothing follows
 * it. Resolves only for a backup proven whole; else throws BackupInvalid naming the problem
 * (or what `reader` threw).
 */
export async function readBackup(
  source: AsyncIterable<Buffer>,
  reader: BackupReader,
): Promise<{ header: BackupHeader; manifest: BackupManifest }> {
  const lines = new LineReader(source);
  const whole = createHash('sha256');
  const frame = async (what: string): Promise<string> => {
    const line = await lines.next(MAX_FRAME_LINE);
    if (line === undefined) {
      throw new BackupInvalid(`the backup ends before its ${what}: it was cut short`);
    }
    whole.update(line).update('\n');
    return line.toString('utf8');
  };

  if ((await frame('first line')) !== BACKUP_MAGIC) {
    throw new BackupInvalid(`this is not an Agent Data backup (no "${BACKUP_MAGIC}" line)`);
  }
  const header = parseHeader(await frame('header'));
  await reader.header(header);

  const digests: Record<string, TableDigest> = {};
  for (;;) {
    const line = await lines.next(MAX_FRAME_LINE);
    if (line === undefined) {
      throw new BackupInvalid('the backup ends before its manifest: it was cut short');
    }
    const text = line.toString('utf8');
    if (text.startsWith('MANIFEST ')) {
      const manifest = parseManifest(text.slice('MANIFEST '.length));
      checkManifest(manifest, digests, whole.digest('hex'));
      if ((await lines.next(MAX_FRAME_LINE)) !== undefined) {
        throw new BackupInvalid('the backup goes on after its manifest');
      }
      return { header, manifest };
    }
    whole.update(line).update('\n');
    const [, name, columns] = /^TABLE ([a-z_]+) \(([a-z_,]+)\)$/.exec(text) ?? [];
    if (name === undefined) throw new BackupInvalid(`a line is neither a table nor the manifest`);
    if (name in digests) throw new BackupInvalid(`the backup holds table ${name} twice`);
    const sink = await reader.table(name, columns.split(','));
    const hash = new TableHash();
    let batch: Buffer[] = [];
    let batchBytes = 0;
    for (;;) {
      const row = await lines.next(MAX_ROW_LINE);
      if (row === undefined) {
        throw new BackupInvalid(`the backup ends inside table ${name}: it was cut short`);
      }
      if (row.length === 2 && row[0] === 0x5c && row[1] === 0x2e) break;
      const bytes = Buffer.concat([row, NEWLINE]);
      hash.update(bytes);
      whole.update(bytes);
      batch.push(bytes);
      batchBytes += bytes.length;
      if (batchBytes >= ROW_BATCH_BYTES) {
        await sink.write(Buffer.concat(batch));
        batch = [];
        batchBytes = 0;
      }
    }
    whole.update(END_OF_TABLE).update('\n');
    if (batch.length > 0) await sink.write(Buffer.concat(batch));
    await sink.end();
    digests[name] = hash.digest();
  }
}

const NEWLINE = Buffer.from('\n');

function parseHeader(text: string): BackupHeader {
  const header = parseJson(text, 'header') as Partial<BackupHeader>;
  if (header.format !== BACKUP_FORMAT) {
    throw new BackupInvalid(
      `the backup is of format ${String(header.format)}; this server reads format ${BACKUP_FORMAT}`,
    );
  }
  if (typeof header.schema !== 'string' || typeof header.audit_through !== 'number') {
    throw new BackupInvalid('the backup header lacks its schema or audit position');
  }
  return header as BackupHeader;
}

function parseManifest(text: string): BackupManifest {
  const manifest = parseJson(text, 'manifest') as Partial<BackupManifest>;
  if (
    typeof manifest.sha256 !== 'string' ||
    typeof manifest.tables !== 'object' ||
    manifest.tables === null
  ) {
    throw new BackupInvalid('the manifest lacks its tables or checksum');
  }
  return manifest as BackupManifest;
}

function checkManifest(
  manifest: BackupManifest,
  read: Readonly<Record<string, TableDigest>>,
  sha256: string,
): void {
  const listed = Object.keys(manifest.tables).sort();
  const seen = Object.keys(read).sort();
  if (listed.join(',') !== seen.join(',')) {
    throw new BackupInvalid(
      `the manifest lists tables ${listed.join(', ')} but the backup holds ${seen.join(', ')}`,
    );
  }
  for (const name of seen) {
    const expected = manifest.tables[name];
    if (expected.rows !== read[name].rows) {
      throw new BackupInvalid(
        `table ${name} holds ${read[name].rows} rows where the manifest says ${expected.rows}`,
      );
    }
    if (expected.sha256 !== read[name].sha256) {
      throw new BackupInvalid(`table ${name} does not match its checksum: the backup is corrupt`);
    }
  }
  if (manifest.sha256 !== sha256) {
    throw new BackupInvalid('the backup does not match its checksum: it is corrupt');
  }
}

function parseJson(text: string, what: string): unknown {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value === 'object' && value !== null) return value;
  } catch {
    // Answered below.
  }
  throw new BackupInvalid(`the backup's ${what} is not valid JSON`);
}

/** The timestamp at the end of a migration's name (`Sources1763800140000`), or NaN. */
export function migrationTime(name: string): number {
  const match = /(\d{13})$/.exec(name);
  return match ? Number(match[1]) : Number.NaN;
}

/** The first two bytes of every gzip stream, and so of every backup. */
export const GZIP_MAGIC: readonly number[] = [0x1f, 0x8b];
