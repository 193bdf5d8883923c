import { mkdir, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join, sep } from 'node:path';
import { stringify } from 'yaml';
import { encodeId, listAll, messageOf } from './import-folder';
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
 * fields) followed by the body byte for byte: importing the folder back changes nothing. Each
 * file is written whole (a temporary file renamed), never half.
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
        const document = await client.call<Document>('GET', `/documents/${encodeId(id)}`);
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

/** A document as a file: its fields as YAML front matter, then the body as it is. */
export function fileOf(document: Pick<Document, 'title' | 'tags' | 'metadata' | 'body'>): string {
  const fields = { title: document.title, tags: document.tags, ...document.metadata };
  return `---\n${stringify(fields)}---\n${document.body}`;
}
