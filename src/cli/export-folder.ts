import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { stringify } from 'yaml';
import { documentPath } from '../common/document-path';
import { listAll, messageOf } from './import-folder';
import type { RestClient } from './rest-client';

export interface ExportReport {
  written: string[];
  failed: Array<{ document_id: string; error: string }>;
}

interface Document {
  document_id: string;
  title: string;
  tags: string[];
  metadata: Record<string, unknown>;
  body: string;
}

/** Documents read at the same time. */
const CONCURRENT_READS = 8;

/**
 * Writes every alive document under `folder` into `dir` at the inverse of the importer's path
 * (`FOLDER/a/b.md` → `dir/a/b.md`), as YAML front matter (title, tags, then the metadata's
 * fields) followed by the body byte for byte, but for links naming a document by id, which
 * become relative paths ({@link asFiles}): importing the folder back changes nothing but
 * those. Each file is written whole (a temporary file renamed), never half.
 */
export async function exportFolder(
  client: RestClient,
  folder: string,
  dir: string,
  progress?: (done: number, total: number) => void,
): Promise<ExportReport> {
  const existing = await stat(dir).catch(() => undefined);
  if (existing !== undefined && !existing.isDirectory()) {
    throw new Error(`${dir} is not a folder`);
  }
  const prefix = folder === '' ? '' : `${folder.replace(/\/+$/, '')}/`;
  const ids = [...(await listAll(client, prefix)).keys()];
  const report: ExportReport = { written: [], failed: [] };
  let done = 0;
  progress?.(0, ids.length);
  const next = ids.entries();
  const worker = async () => {
    for (const [, id] of next) {
      try {
        const document = await client.call<Document>('GET', documentPath(id));
        if (mayNameById(document.body)) {
          const { links } = await client.call<{ links: Link[] }>('GET', documentPath(id, '/links'));
          document.body = asFiles(document.body, id, links);
        }
        const relative = id.slice(prefix.length);
        const target = join(dir, ...relative.split('/'));
        if (!target.startsWith(join(dir) + sep)) throw new Error('its id leaves the folder');
        await mkdir(dirname(target), { recursive: true });
        const temporary = `${target}.agent-data-export`;
        await writeFile(temporary, fileOf(document));
        await rename(temporary, target);
        report.written.push(id);
      } catch (error) {
        report.failed.push({ document_id: id, error: messageOf(error) });
      }
      progress?.(++done, ids.length);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENT_READS }, worker));
  report.written.sort();
  return report;
}

/** A link of a document as `GET /documents/{id}/links` gives it (docs/documents.md). */
interface Link {
  kind: 'markdown' | 'wikilink' | 'uri';
  target: string;
  fragment: string | null;
  document_id: string | null;
  start: number;
  end: number;
  target_start: number;
  target_end: number;
  label: string;
}

/** Whether a body may hold a link that names a document by its id (a URI, a path from the root). */
function mayNameById(body: string): boolean {
  return body.includes('kb://') || body.includes('](/') || /^ {0,3}\[[^\]]+\]:\s*<?\//m.test(body);
}

/**
 * `body` with its links that name a document by id, which no file viewer follows (`kb://`
 * URIs, paths from the root of the knowledge base), written as paths relative to the
 * document's own file: `[x](kb://a/b.md)` in `a/c/d.md` becomes `[x](../b.md)`, and a bare
 * `kb://a/b.md` the link `[kb://a/b.md](../b.md)`. Relative links and wikilinks already work
 * as files, and are left as they are.
 */
export function asFiles(body: string, documentId: string, links: readonly Link[]): string {
  const rewrites = new Map<number, { start: number; end: number; text: string }>();
  for (const link of links) {
    const id =
      link.document_id ?? (link.kind === 'uri' ? link.target : link.target.replace(/^\/+/, ''));
    const path = relativePath(documentId, id).replace(/[\s()<>#?%]/g, (c) => encodeURIComponent(c));
    const written = body.slice(link.start, link.end);
    if (link.kind === 'uri' && !written.startsWith('[')) {
      const fragment = link.fragment === null ? '' : `#${link.fragment}`;
      rewrites.set(link.start, {
        start: link.start,
        end: link.end,
        text: `[${link.label.replace(/[[\]]/g, (c) => `\\${c}`)}](${path}${fragment})`,
      });
    } else if (link.kind === 'uri' || (link.kind === 'markdown' && link.target.startsWith('/'))) {
      rewrites.set(link.target_start, {
        start: link.target_start,
        end: link.target_end,
        text: path,
      });
    }
  }
  let result = body;
  for (const r of [...rewrites.values()].sort((a, b) => b.start - a.start)) {
    result = result.slice(0, r.start) + r.text + result.slice(r.end);
  }
  return result;
}

/** The path from the folder of `fromId` to `toId`: `a/b/x.md` to `a/c/y.md` is `../c/y.md`. */
function relativePath(fromId: string, toId: string): string {
  const from = fromId.split('/').slice(0, -1);
  const to = toId.split('/');
  let shared = 0;
  while (shared < from.length && shared < to.length - 1 && from[shared] === to[shared]) shared++;
  return [...from.slice(shared).map(() => '..'), ...to.slice(shared)].join('/');
}

/** A document as a file: its fields as YAML front matter, then the body as it is. */
export function fileOf(document: Pick<Document, 'title' | 'tags' | 'metadata' | 'body'>): string {
  const fields = { title: document.title, tags: document.tags, ...document.metadata };
  return `---\n${stringify(fields)}---\n${document.body}`;
}
