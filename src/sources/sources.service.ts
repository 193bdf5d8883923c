import { unwatchFile, watchFile } from 'node:fs';
import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { DomainError, ErrorCode } from '../common/domain-error';
import { parseInput } from '../common/validation';
import { AppConfig } from '../config/app-config';
import { Access } from '../documents/access';
import { DocumentSources, sourceActor } from '../documents/document-sources';
import { DocumentsService } from '../documents/documents.service';
import { SourceRunner } from './source-runner';
import {
  shown,
  SOURCE_ID,
  sourceDeclarationSchema,
  type SourceDeclaration,
} from './source-declaration';
import { readSourcesFile } from './sources-file';
import { NO_COUNTS, type RunRow, type SourceRow, SourcesRepository } from './sources.repository';
import type { RunView, SourceDetail, SourceList, SourceView } from './sources.schemas';

/** How often every server re-reads the mounts (so that its writers respect a new source). */
const MOUNTS_REFRESH_MS = 5000;
/** How often the sources file is looked at for a change (besides SIGHUP). */
const FILE_POLL_MS = 2000;

/**
 * The declared sources: from `SOURCES_FILE` (the whole truth when set: read at start, when
 * it changes and on SIGHUP; an invalid file changes nothing and its error is shown) or from
 * the API, kept in PostgreSQL; their status and runs; a sync asked for.
 */
@Injectable()
export class SourcesService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Sources');
  private timer?: NodeJS.Timeout;
  /** Why the sources file was last refused, `null` when its last reading applied. */
  fileError: string | null = null;
  private readonly onSighup = () => void this.applyFile();

  constructor(
    private readonly config: AppConfig,
    private readonly repository: SourcesRepository,
    private readonly documents: DocumentsService,
    private readonly owners: DocumentSources,
    private readonly runner: SourceRunner,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const file = this.config.sourcesFile;
    if (file !== null && this.runner.here) {
      await this.applyFile();
      watchFile(file, { interval: FILE_POLL_MS }, () => void this.applyFile());
      process.on('SIGHUP', this.onSighup);
    }
    await this.owners.reloadMounts().catch(() => undefined);
    this.timer = setInterval(
      () => void this.owners.reloadMounts().catch(() => undefined),
      MOUNTS_REFRESH_MS,
    );
    this.timer.unref();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
    if (this.config.sourcesFile !== null) unwatchFile(this.config.sourcesFile);
    process.off('SIGHUP', this.onSighup);
  }

  /** Applies the sources file: declared sources upserted, the others removed. */
  async applyFile(): Promise<void> {
    const file = this.config.sourcesFile!;
    const reading = await readSourcesFile(file);
    if (!reading.ok) {
      if (this.fileError !== reading.error) {
        this.logger.error(`sources file refused, the sources stay as they were: ${reading.error}`);
      }
      this.fileError = reading.error;
      return;
    }
    this.fileError = null;
    const declared = new Set(reading.sources.map((source) => source.id));
    for (const declaration of reading.sources) await this.repository.upsert(declaration, 'file');
    for (const source of await this.repository.all()) {
      if (!declared.has(source.id)) await this.removeSource(source.id);
    }
    await this.owners.reloadMounts();
    this.runner.nudge();
  }

  async list(): Promise<SourceList> {
    const [sources, runs, counts] = await Promise.all([
      this.repository.all(),
      this.repository.lastRuns(),
      this.repository.documentCounts(),
    ]);
    return {
      sources: sources.map((source) => viewOf(source, runs.get(source.id) ?? null, counts)),
      file: this.config.sourcesFile,
      file_error: this.fileError,
    };
  }

  async get(id: string): Promise<SourceDetail> {
    const source = await this.found(id);
    const [runs, counts] = await Promise.all([
      this.repository.runs(id, 1, null),
      this.repository.documentCounts(),
    ]);
    return { ...viewOf(source, runs[0] ?? null, counts), file_error: this.fileError };
  }

  async runs(id: string, limit: number, before: string | null): Promise<{ runs: RunView[] }> {
    await this.found(id);
    return { runs: (await this.repository.runs(id, limit, before)).map(runViewOf) };
  }

  /** Queues a run (or finds the one queued or running): 202 with its id. */
  async sync(id: string, confirmDeletions: boolean): Promise<RunView> {
    await this.found(id);
    const run = await this.repository.enqueue(id, 'manual', confirmDeletions);
    this.runner.nudge();
    return runViewOf(run);
  }

  async create(input: unknown): Promise<SourceDetail> {
    this.refuseWhenFile();
    const declaration = parseInput(sourceDeclarationSchema, input);
    if ((await this.repository.find(declaration.id)) !== null) {
      throw new DomainError(ErrorCode.ALREADY_EXISTS, `source ${declaration.id} already exists`, {
        source_id: declaration.id,
      });
    }
    await this.refuseOverlap(declaration);
    await this.repository.upsert(declaration, 'api');
    await this.owners.reloadMounts();
    this.runner.nudge();
    return this.get(declaration.id);
  }

  async replace(id: string, input: unknown): Promise<SourceDetail> {
    this.refuseWhenFile();
    const declaration = parseInput(sourceDeclarationSchema, input);
    if (declaration.id !== id) {
      throw new DomainError(ErrorCode.INVALID_ARGUMENT, `the declaration's id is not ${id}`, {
        field: 'id',
      });
    }
    const before = await this.found(id);
    if (before.mount !== declaration.mount) {
      throw new DomainError(
        ErrorCode.INVALID_ARGUMENT,
        `a source's mount cannot change (${before.mount}): remove the source and declare it again`,
        { field: 'mount' },
      );
    }
    await this.repository.upsert(declaration, 'api');
    this.runner.nudge();
    return this.get(id);
  }

  async remove(id: string): Promise<void> {
    this.refuseWhenFile();
    await this.found(id);
    await this.removeSource(id);
    await this.owners.reloadMounts();
  }

  /** Removes a source and (softly) the documents it owned; an agent's documents stay. */
  private async removeSource(id: string): Promise<void> {
    const items = await this.repository.items(id);
    const ids = [...items.values()].map((item) => item.document_id);
    for (let at = 0; at < ids.length; at += 200) {
      await this.documents.bulk(
        ids.slice(at, at + 200).map((document_id) => ({ op: 'delete' as const, document_id })),
        sourceActor(id),
        Access.ofSource(id),
      );
    }
    await this.repository.forgetAllItems(id);
    await this.repository.remove(id);
    this.logger.log(`source ${id} removed with its ${ids.length} documents`);
  }

  private async found(id: string): Promise<SourceRow> {
    // No source has an id outside the pattern: not looked for (a NUL byte is no text to
    // PostgreSQL, and its refusal is no answer to give).
    const source = SOURCE_ID.test(id) ? await this.repository.find(id) : null;
    if (source === null) {
      throw new DomainError(ErrorCode.NOT_FOUND, `source ${id} does not exist`, { source_id: id });
    }
    return source;
  }

  private refuseWhenFile(): void {
    if (this.config.sourcesFile === null) return;
    throw new DomainError(
      ErrorCode.PERMISSION_DENIED,
      `sources are declared in ${this.config.sourcesFile} (SOURCES_FILE): change them there`,
    );
  }

  private async refuseOverlap(declaration: SourceDeclaration): Promise<void> {
    const other = (await this.repository.all()).find(
      (source) =>
        source.mount === declaration.mount ||
        source.mount.startsWith(`${declaration.mount}/`) ||
        declaration.mount.startsWith(`${source.mount}/`),
    );
    if (other !== undefined) {
      throw new DomainError(
        ErrorCode.INVALID_ARGUMENT,
        `the mount ${declaration.mount} overlaps the mount ${other.mount} of the source ${other.id}`,
        { field: 'mount' },
      );
    }
  }
}

function viewOf(source: SourceRow, run: RunRow | null, counts: Map<string, number>): SourceView {
  const state: SourceView['state'] =
    run?.status === 'queued' || run?.status === 'running'
      ? run.status
      : source.paused
        ? 'paused'
        : source.failures > 0
          ? 'failing'
          : 'idle';
  return {
    id: source.id,
    kind: source.kind,
    mount: source.mount,
    origin: source.origin,
    declaration: shown(source.declaration),
    state,
    documents: counts.get(source.id) ?? 0,
    next_run_at: iso(source.next_run_at),
    last_success_at: iso(source.last_success_at),
    failures: source.failures,
    held_deletions: source.held_deletions?.keys.length ?? 0,
    last_run: run === null ? null : runViewOf(run),
  };
}

/**
 * A run as the routes show it: the lease's bookkeeping (runner, heartbeat) left out, and the
 * counts of a run not ended yet given as zeros.
 */
function runViewOf(run: RunRow): RunView {
  return {
    id: run.id,
    source_id: run.source_id,
    status: run.status,
    trigger: run.trigger,
    confirm_deletions: run.confirm_deletions,
    queued_at: iso(run.queued_at)!,
    started_at: iso(run.started_at),
    finished_at: iso(run.finished_at),
    version: run.version,
    counts: { ...NO_COUNTS, ...run.counts },
    failed_items: run.failed_items,
    message: run.message,
  };
}

function iso(date: Date | null): string | null {
  return date === null ? null : new Date(date).toISOString();
}
