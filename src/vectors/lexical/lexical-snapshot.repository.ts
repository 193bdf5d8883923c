import { crc32 } from 'node:zlib';
import type { PoolClient } from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import type { DataSource } from 'typeorm';
import { binaryCopyRows } from '../../database/binary-copy';
import type { LogPosition } from '../../database/change-log';
import type { SnapshotLayout } from './lexical-snapshot';

/** A snapshot's header as kept: what it reflects and how to read it. */
export interface SnapshotHeader {
  readonly format: number;
  readonly position: LogPosition;
  readonly layout: SnapshotLayout;
  readonly parts: number;
  readonly documents: number;
}

/** Thrown inside a save's transaction to give it up (the index changed while it was written). */
class SaveAbandoned extends Error {}

/**
 * The lexical index's snapshot in PostgreSQL (`kb_lexical_snapshot` and its parts): every
 * server on one database reads it at start and may write it, so it works with DATABASE_URL
 * and several replicas alike. Parts are written and read one at a time (a snapshot is some
 * 2.5 KB a document: 600 MB at 250 000), each checked against its CRC-32.
 */
export class LexicalSnapshotRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Replaces the kept snapshot with this one in one transaction, unless the one kept reflects a
   * later position of the same log (another server saved it meanwhile). Gives it up, keeping
   * the old one, as soon as `unchanged()` is false between two parts, or when another server's
   * save holds the table longer than `lockWaitMs` (0: gives way at once). Whether it was saved.
   */
  async save(
    header: SnapshotHeader,
    parts: Iterable<Buffer>,
    unchanged: () => boolean,
    lockWaitMs: number,
  ): Promise<boolean> {
    try {
      return await this.dataSource.transaction(async (manager) => {
        await manager.query(`SELECT set_config('lock_timeout', $1, true)`, [
          `${Math.max(1, Math.ceil(lockWaitMs))}ms`,
        ]);
        // One saver at a time; readers (ACCESS SHARE) are not held up.
        await manager.query(`LOCK TABLE kb_lexical_snapshot IN SHARE ROW EXCLUSIVE MODE`);
        const [kept]: Array<{ newer: boolean }> = await manager.query(
          `SELECT generation = $1 AND applied_id > $2::bigint AS newer FROM kb_lexical_snapshot`,
          [header.position.generation, header.position.appliedId],
        );
        if (kept?.newer) return false;
        await manager.query(`DELETE FROM kb_lexical_snapshot_parts`);
        let part = 0;
        for (const bytes of parts) {
          if (!unchanged()) throw new SaveAbandoned();
          await manager.query(
            `INSERT INTO kb_lexical_snapshot_parts (part, crc, bytes) VALUES ($1, $2, $3)`,
            [part++, crc32(bytes), bytes],
          );
        }
        if (part !== header.parts || !unchanged()) throw new SaveAbandoned();
        await manager.query(
          `INSERT INTO kb_lexical_snapshot
                  (singleton, format, generation, applied_id, position, layout, parts, documents)
           VALUES (true, $1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (singleton) DO UPDATE
              SET format = EXCLUDED.format, generation = EXCLUDED.generation,
                  applied_id = EXCLUDED.applied_id, position = EXCLUDED.position,
                  layout = EXCLUDED.layout, parts = EXCLUDED.parts,
                  documents = EXCLUDED.documents, saved_at = now()`,
          [
            header.format,
            header.position.generation,
            header.position.appliedId,
            JSON.stringify(header.position),
            JSON.stringify(header.layout),
            header.parts,
            header.documents,
          ],
        );
        return true;
      });
    } catch (error) {
      if (error instanceof SaveAbandoned) return false;
      // lock_not_available: another server's save outlasted the wait.
      if ((error as { driverError?: { code?: string } }).driverError?.code === '55P03') {
        return false;
      }
      throw error;
    }
  }

  /**
   * Reads the kept snapshot of `format` in one consistent view: its header, then each part in
   * order, to the reader `open` gives for that header (PostgreSQL sends the next parts while
   * one is read). `undefined` when none of that format is kept; throws when a part is missing
   * or does not match its CRC-32, or when the reader refuses one.
   */
  async load<T>(
    format: number,
    open: (header: SnapshotHeader) => { accept(part: Buffer): void; finish(): T },
  ): Promise<{ header: SnapshotHeader; value: T } | undefined> {
    const runner = this.dataSource.createQueryRunner('slave');
    const client = (await runner.connect()) as PoolClient;
    try {
      await runner.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
      const rows: Array<Omit<SnapshotHeader, 'format'>> = await runner.query(
        `SELECT position, layout, parts, documents FROM kb_lexical_snapshot WHERE format = $1`,
        [format],
      );
      if (rows.length === 0) return undefined;
      const header: SnapshotHeader = { format, ...rows[0] };
      const reader = open(header);
      const copy = client.query(
        copyTo(`COPY (SELECT part, crc, bytes FROM kb_lexical_snapshot_parts ORDER BY part)
                TO STDOUT (FORMAT binary)`),
      );
      // A failure is thrown once the output has been read to its end: the connection goes back
      // to the pool ready for its next statement.
      let failure: Error | undefined;
      let part = 0;
      for await (const [number, crc, bytes] of binaryCopyRows(copy)) {
        if (failure) continue;
        try {
          if (number?.readInt32BE(0) !== part) throw new Error(`part ${part} is missing`);
          if (crc32(bytes!) !== Number(crc!.readBigInt64BE(0))) {
            throw new Error(`part ${part} does not match its CRC-32`);
          }
          reader.accept(bytes!);
          part++;
        } catch (error) {
          failure = error as Error;
        }
      }
      if (failure) throw failure;
      if (part !== header.parts) throw new Error(`${header.parts - part} parts are missing`);
      return { header, value: reader.finish() };
    } finally {
      await runner.query('ROLLBACK').catch(() => undefined);
      await runner.release();
    }
  }
}
