import { randomUUID } from 'node:crypto';
import { canonicalJson } from '../common/canonical-json';
import { documentPath } from '../common/document-path';
import { wellFormed } from '../common/well-formed';
import { RequestFailed, RestClient } from './rest-client';
import { readSource, sourceFiles, type SourceDocument } from './source-files';

export interface ImportOptions {
  readonly dir: string;
  /** The folder the files go under (`a/b.md` → `FOLDER/a/b.md`); none: the ids are the paths. */
  readonly prefix?: string;
  readonly mirror: boolean;
  readonly dryRun: boolean;
  readonly maxBytes: number;
  /** Told how far the run has got, for a progress bar. */
  readonly progress?: (done: number, total: number) => void;
}

export interface ImportReport {
  created: string[];
  updated: string[];
  moved: Array<{ from: string; to: string }>;
  unchanged: string[];
  deleted: string[];
  skipped: Array<{ file: string; reason: string }>;
  failed: Array<{ document_id: string; error: string }>;
  dry_run: boolean;
}

interface Listed {
  readonly revision: number;
}

interface BulkResult {
  results: Array<{
    document_id: string;
    ok: boolean;
    status: number;
    changed?: boolean;
    error?: { code: string; message: string };
  }>;
}

/** Files read at the same time, and bulk requests sent at the same time. */
const READERS = 16;
const SENDERS = 2;

/** Runs `task(0)` … `task(count - 1)`, at most `width` at a time. */
async function inParallel(
  count: number,
  width: number,
  task: (i: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(width, count) }, worker));
}

/** Items of one bulk request at most, and its JSON at most (under MAX_REQUEST_BYTES). */
const BATCH_ITEMS = 200;
const BATCH_BYTES = 1_500_000;

/**
 * Brings a folder of files into the knowledge base through the admin API: new files are
 * created, existing ones updated conditionally on the revision listed (an unchanged file is
 * an update that changes nothing: no revision, no re-embedding), a file renamed with the same
 * content becomes a move, and with `mirror` the documents under the prefix with no file any
 * more are deleted (soft). Bulk requests of up to 200 documents.
 */
export async function importFolder(
  client: RestClient,
  options: ImportOptions,
): Promise<ImportReport> {
  const report: ImportReport = {
    created: [],
    updated: [],
    moved: [],
    unchanged: [],
    deleted: [],
    skipped: [],
    failed: [],
    dry_run: options.dryRun,
  };
  const folder = options.prefix === undefined ? '' : `${options.prefix.replace(/\/+$/, '')}/`;
  const { files, skipped } = await sourceFiles(options.dir, options.maxBytes);
  report.skipped.push(...skipped.map((s) => ({ file: s.relative, reason: s.reason })));

  const wanted = new Map<string, SourceDocument>();
  /** The file each wanted id was read from. */
  const named = new Map<string, string>();
  const read = new Array<SourceDocument | Error>(files.length);
  await inParallel(files.length, READERS, async (i) => {
    read[i] = await readSource(files[i]).catch((error: Error) => error);
  });
  files.forEach((file, i) => {
    const id = idOf(folder, file.relative);
    const document = read[i];
    if (document instanceof Error) report.failed.push({ document_id: id, error: document.message });
    else if (wanted.has(id)) {
      // Two names that differ only in how their accents are written (on Linux both exist).
      report.failed.push({
        document_id: id,
        error: `${file.relative}: ${named.get(id)} has this name, composed (NFC), and holds ${id}`,
      });
    } else {
      wanted.set(id, document);
      named.set(id, file.relative);
    }
  });
  const existing = await listAll(client, folder);
  // A document an earlier import named decomposed (NFD) keeps its id: its file is the same.
  for (const id of existing.keys()) {
    const composed = id.normalize('NFC');
    if (composed === id || existing.has(composed) || !wanted.has(composed)) continue;
    wanted.set(id, wanted.get(composed)!);
    wanted.delete(composed);
  }
  const fresh = [...wanted.keys()].filter((id) => !existing.has(id));
  // A file that is there but not read (skipped: hidden, of a kind not imported, too large) or
  // that failed is not gone: `mirror` never deletes the document of a file it did not read.
  // A skipped folder (hidden, a link) keeps every document under it.
  const failed = new Set(report.failed.map((f) => f.document_id));
  const kept = new Set(skipped.map((s) => idOf(folder, s.relative)));
  const there = (spelled: string) => {
    const id = spelled.normalize('NFC');
    if (failed.has(id)) return true;
    for (let at = id.indexOf('/'); at !== -1; at = id.indexOf('/', at + 1)) {
      if (kept.has(id.slice(0, at))) return true;
    }
    return kept.has(id);
  };
  const gone = [...existing.keys()].filter((id) => !wanted.has(id) && !there(id));

  // A document with no file and a new file of the same content: the file was renamed.
  const moves: Array<{ from: string; to: string }> = [];
  if (fresh.length > 0 && gone.length > 0) {
    const byBody = new Map<string, string[]>();
    for (const id of fresh) {
      const list = byBody.get(wanted.get(id)!.body) ?? [];
      list.push(id);
      byBody.set(wanted.get(id)!.body, list);
    }
    for (const id of gone) {
      const { body } = await client.call<{ body: string }>('GET', documentPath(id));
      const to = byBody.get(body)?.shift();
      if (to !== undefined) moves.push({ from: id, to });
    }
  }
  const movedTo = new Set(moves.map((m) => m.to));
  const movedFrom = new Set(moves.map((m) => m.from));

  const items: Array<Record<string, unknown>> = [];
  for (const id of fresh) {
    if (!movedTo.has(id))
      items.push({ op: 'create', document_id: id, ...fieldsOf(wanted.get(id)!) });
  }
  const updated = [...existing.keys()].filter((id) => wanted.has(id));
  const deletes = options.mirror ? gone.filter((id) => !movedFrom.has(id)) : [];
  /** The updates and deletes, conditional on the revisions in `listed`. */
  const conditional = (listed: ReadonlyMap<string, Listed>) => [
    ...updated.map((id) => ({
      op: 'update',
      document_id: id,
      expected_revision: listed.get(id)?.revision ?? existing.get(id)!.revision,
      ...fieldsOf(wanted.get(id)!),
    })),
    ...deletes.map((id) => ({
      op: 'delete',
      document_id: id,
      expected_revision: listed.get(id)?.revision ?? existing.get(id)!.revision,
    })),
  ];

  const total = items.length + updated.length + deletes.length + moves.length;
  let done = 0;
  options.progress?.(0, total);
  if (options.dryRun) {
    for (const item of items) report.created.push(item.document_id as string);
    report.deleted.push(...deletes);
    report.moved.push(...moves);
    done = items.length + deletes.length;
    // Whether an existing document would change is read from it, field by field as the server
    // compares them: a dry run of a folder imported before says `unchanged`. A moved document
    // is compared with its file too (the run updates it after the move, as `updated`).
    const compared: Array<[read: string, file: string]> = [
      ...updated.map((id): [string, string] => [id, id]),
      ...moves.map((move): [string, string] => [move.from, move.to]),
    ];
    const changes = new Array<boolean | Error>(compared.length);
    await inParallel(compared.length, READERS, async (i) => {
      const [read, file] = compared[i];
      changes[i] = await client
        .call<StoredFields>('GET', documentPath(read))
        .then((stored) => wouldChange(stored, wanted.get(file)!))
        .catch((error: unknown) => new Error(`could not be read to compare: ${messageOf(error)}`));
      options.progress?.(++done, total);
    });
    compared.forEach(([read, file], i) => {
      const change = changes[i];
      if (change instanceof Error) report.failed.push({ document_id: read, error: change.message });
      else if (change) report.updated.push(file);
      else if (read === file) report.unchanged.push(file);
    });
    for (const list of [report.created, report.updated, report.unchanged, report.deleted])
      list.sort();
    return report;
  }
  for (const move of moves) {
    try {
      await client.call(
        'POST',
        documentPath(move.from, '/move'),
        { to: move.to },
        { idempotencyKey: randomUUID() },
      );
      report.moved.push(move);
      // Its fields may have changed too: checked (and written only if so) with the updates.
      items.push({ op: 'update', document_id: move.to, ...fieldsOf(wanted.get(move.to)!) });
    } catch (error) {
      report.failed.push({ document_id: move.from, error: messageOf(error) });
    }
    options.progress?.(++done, total);
  }
  // A move writes again the documents linking to the moved one (new revisions): the updates
  // are conditional on the revisions listed after the moves.
  items.push(...conditional(moves.length > 0 ? await listAll(client, folder) : existing));
  const all = [...batches(items)];
  await inParallel(all.length, SENDERS, async (b) => {
    const batch = all[b];
    // A key per request, kept across its retries: a request cut after the server committed
    // it is answered from the stored answer rather than written twice.
    const answer = await client.call<BulkResult>(
      'POST',
      '/documents/bulk',
      { items: batch },
      { idempotencyKey: randomUUID() },
    );
    answer.results.forEach((result, k) => {
      const op = batch[k].op;
      const moved = op === 'update' && movedTo.has(result.document_id);
      if (!result.ok) {
        report.failed.push({
          document_id: result.document_id,
          error: `${result.error?.code ?? result.status}: ${result.error?.message ?? ''}`,
        });
      } else if (op === 'create') report.created.push(result.document_id);
      else if (op === 'delete') report.deleted.push(result.document_id);
      else if (result.changed) report.updated.push(result.document_id);
      else if (!moved) report.unchanged.push(result.document_id);
    });
    done += batch.filter(
      (item) => !(item.op === 'update' && movedTo.has(item.document_id as string)),
    ).length;
    options.progress?.(Math.min(done, total), total);
  });
  for (const list of [report.created, report.updated, report.unchanged, report.deleted])
    list.sort();
  return report;
}

/** The one-line summary of a report. */
export function summaryOf(report: ImportReport): string {
  const line = `created ${report.created.length}, updated ${report.updated.length}, moved ${report.moved.length}, unchanged ${report.unchanged.length}, deleted ${report.deleted.length}, skipped ${report.skipped.length}, failed ${report.failed.length}`;
  return report.dry_run ? `dry run, nothing written; the run would report ${line}` : line;
}

/** The fields of a stored document an import may write. */
interface StoredFields {
  readonly body: string;
  readonly title: string;
  readonly tags: string[];
  readonly metadata: Record<string, unknown>;
}

/**
 * Whether writing `file`'s fields would change `stored`: the fields the file gives, compared as
 * the server compares them (the title and tags trimmed, tags once each, metadata as JSON
 * whatever the order of its keys, a lone surrogate of front matter as U+FFFD, as stored).
 */
function wouldChange(stored: StoredFields, file: SourceDocument): boolean {
  if (stored.body !== wellFormed(file.body)) return true;
  if (file.title !== undefined && stored.title !== wellFormed(file.title.trim())) return true;
  if (file.tags !== undefined) {
    const tags = [...new Set(file.tags.map((tag) => wellFormed(tag.trim())))];
    if (tags.length !== stored.tags.length || tags.some((tag, i) => tag !== stored.tags[i]))
      return true;
  }
  return (
    file.metadata !== undefined && canonicalJson(file.metadata) !== canonicalJson(stored.metadata)
  );
}

/** Every alive document under `folder`, with its revision, page by page. */
export async function listAll(client: RestClient, folder: string): Promise<Map<string, Listed>> {
  const found = new Map<string, Listed>();
  for (let offset: number | null = 0; offset !== null;) {
    const page: {
      items: Array<{ document_id: string; revision: number }>;
      next_offset: number | null;
    } = await client.call(
      'GET',
      `/documents?${new URLSearchParams({ ...(folder === '' ? {} : { prefix: folder }), limit: '100', offset: String(offset) })}`,
    );
    for (const item of page.items) found.set(item.document_id, { revision: item.revision });
    offset = page.next_offset;
  }
  return found;
}

function fieldsOf(document: SourceDocument): Record<string, unknown> {
  return {
    body: document.body,
    ...(document.title === undefined ? {} : { title: document.title }),
    ...(document.tags === undefined ? {} : { tags: document.tags }),
    ...(document.metadata === undefined ? {} : { metadata: document.metadata }),
  };
}

function* batches(
  items: Array<Record<string, unknown>>,
): Generator<Array<Record<string, unknown>>> {
  let batch: Array<Record<string, unknown>> = [];
  let bytes = 0;
  for (const item of items) {
    const size = Buffer.byteLength(JSON.stringify(item));
    if (batch.length > 0 && (batch.length >= BATCH_ITEMS || bytes + size > BATCH_BYTES)) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(item);
    bytes += size;
  }
  if (batch.length > 0) yield batch;
}

/**
 * The id of a file: its path under the folder, in Unicode's composed form (NFC), as people
 * type it and links name it; macOS writes names decomposed (NFD: `e` and a combining accent),
 * which would make ids no one can type.
 */
function idOf(folder: string, relative: string): string {
  return `${folder}${relative.normalize('NFC')}`;
}

export function messageOf(error: unknown): string {
  return error instanceof RequestFailed
    ? `${error.code}: ${error.message}`
    : (error as Error).message;
}
