import { lstat, readdir, readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import TurndownService from 'turndown';
import { parse as parseYaml } from 'yaml';

/** A file of the folder being imported, by its path relative to the folder (`/`-separated). */
export interface SourceFile {
  readonly path: string;
  readonly relative: string;
  readonly size: number;
}

/** A file or folder left out, and why. */
export interface Skipped {
  readonly relative: string;
  readonly reason: string;
}

/** What a file becomes: the document's body and, from its front matter, the other fields. */
export interface SourceDocument {
  readonly body: string;
  readonly title?: string;
  readonly tags?: string[];
  readonly metadata?: Record<string, unknown>;
}

const AS_IS = new Set(['.md', '.markdown', '.txt']);
const CONVERTED = new Set(['.html', '.htm', '.pdf', '.docx']);
/** A PDF or DOCX larger than this is not read (its text could only be larger than the body limit). */
const MAX_CONVERTED_BYTES = 64 * 1024 * 1024;
const CONTROL = /[\u0000-\u001f\u007f-\u009f\\]/;

/**
 * Every importable file under `dir`, in byte order of path, and what was left out: hidden
 * files and folders (`.git`, `.obsidian`), symbolic links (never followed: no loop), other
 * types, names a document id cannot hold, files over `maxBytes` (a text file) or 64 MiB (one to
 * convert), unread.
 */
export async function sourceFiles(
  dir: string,
  maxBytes: number,
): Promise<{ files: SourceFile[]; skipped: Skipped[] }> {
  const files: SourceFile[] = [];
  const skipped: Skipped[] = [];
  const visit = async (folder: string, relative: string): Promise<void> => {
    const entries = await readdir(folder, { withFileTypes: true });
    for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(folder, entry.name);
      const rel = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (entry.name.startsWith('.')) {
        skipped.push({ relative: rel, reason: 'hidden' });
      } else if (CONTROL.test(entry.name)) {
        skipped.push({
          relative: JSON.stringify(rel),
          reason: 'its name holds control characters',
        });
      } else if (entry.isSymbolicLink()) {
        skipped.push({ relative: rel, reason: 'a symbolic link (not followed)' });
      } else if (entry.isDirectory()) {
        await visit(path, rel);
      } else if (entry.isFile()) {
        const type = extname(entry.name).toLowerCase();
        const { size } = await lstat(path);
        if (!AS_IS.has(type) && !CONVERTED.has(type)) {
          skipped.push({
            relative: rel,
            reason: `not a type that is imported (${type || 'no extension'})`,
          });
        } else if (AS_IS.has(type) && size > maxBytes) {
          skipped.push({
            relative: rel,
            reason: `${size} bytes, over the body limit of ${maxBytes}`,
          });
        } else if (size > MAX_CONVERTED_BYTES) {
          skipped.push({
            relative: rel,
            reason: `${size} bytes, over ${MAX_CONVERTED_BYTES} for a file to convert`,
          });
        } else {
          files.push({ path, relative: rel, size });
        }
      } else {
        skipped.push({ relative: rel, reason: 'not a regular file' });
      }
    }
  };
  await visit(dir, '');
  return { files, skipped };
}

/**
 * A file's document: markdown and text as they are, their YAML front matter giving `title`,
 * `tags` and the rest `metadata`; HTML, PDF and DOCX converted to markdown (turndown, unpdf,
 * mammoth), `metadata.source_type` saying what they were (unless the file starts with front
 * matter: an exported document). Throws naming the problem.
 */
export async function readSource(file: SourceFile): Promise<SourceDocument> {
  const type = extname(file.path).toLowerCase();
  const bytes = await readFile(file.path);
  // A file that starts with front matter is markdown whatever its name: what `export` wrote
  // for a document converted from HTML, PDF or DOCX keeps the document's id as its name.
  if (AS_IS.has(type) || /^---\r?\n/.test(bytes.subarray(0, 5).toString('latin1'))) {
    return withFrontMatter(decodeUtf8(bytes));
  }
  if (type === '.html' || type === '.htm') {
    return { body: markdownOf(decodeUtf8(bytes)), metadata: { source_type: 'html' } };
  }
  if (type === '.docx') {
    const mammoth = await import('mammoth');
    let html: string;
    try {
      html = (await mammoth.convertToHtml({ buffer: bytes })).value;
    } catch (error) {
      throw new Error(`not a readable DOCX file (${(error as Error).message.split('\n')[0]})`);
    }
    return { body: markdownOf(html), metadata: { source_type: 'docx' } };
  }
  const { extractText, getDocumentProxy } = await importEsm<typeof import('unpdf')>('unpdf');
  try {
    const pdf = await getDocumentProxy(new Uint8Array(bytes));
    const { text } = await extractText(pdf, { mergePages: true });
    return { body: text, metadata: { source_type: 'pdf' } };
  } catch (error) {
    throw new Error(`not a readable PDF file (${(error as Error).message.split('\n')[0]})`);
  }
}

/**
 * The front matter a file starts with (`---` lines around YAML) as title, tags and metadata,
 * and the body after it byte for byte; a file without one is all body.
 */
export function withFrontMatter(text: string): SourceDocument {
  const match = /^---\r?\n([\s\S]*?)\r?\n---\r?\n/.exec(text);
  if (!match) return { body: text };
  let fields: unknown;
  try {
    fields = parseYaml(match[1], { maxAliasCount: 100 }) ?? {};
  } catch (error) {
    throw new Error(`invalid front matter (${(error as Error).message.split('\n')[0]})`);
  }
  if (typeof fields !== 'object' || fields === null || Array.isArray(fields)) {
    throw new Error('invalid front matter (not a mapping of fields)');
  }
  const { title, tags, ...metadata } = fields as Record<string, unknown>;
  if (title !== undefined && typeof title !== 'string') {
    throw new Error('invalid front matter (title is not text)');
  }
  if (tags !== undefined && !(Array.isArray(tags) && tags.every((t) => typeof t === 'string'))) {
    throw new Error('invalid front matter (tags is not a list of text)');
  }
  return {
    body: text.slice(match[0].length),
    title,
    tags: tags as string[] | undefined,
    metadata: JSON.parse(JSON.stringify(metadata)) as Record<string, unknown>,
  };
}

function decodeUtf8(bytes: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new Error('not UTF-8 text');
  }
}

function markdownOf(html: string): string {
  return new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced' }).turndown(html);
}

/** An ES module from CommonJS (TypeScript would turn `import()` into `require`). */
function importEsm<T>(specifier: string): Promise<T> {
  return (new Function('s', 'return import(s)') as (s: string) => Promise<T>)(specifier);
}
