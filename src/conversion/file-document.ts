import { extname } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { decodeText, markdownOf, metaCharset, readHtml } from './html-page';

/**
 * What a file becomes in the knowledge base, the same for `agent-data import` and for the
 * sources the server keeps in sync: its body and, from its front matter, the other fields.
 */
export interface SourceDocument {
  readonly body: string;
  readonly title?: string;
  readonly tags?: string[];
  readonly metadata?: Record<string, unknown>;
}

/** Files taken as they are, and files converted to markdown. */
export const AS_IS_TYPES: ReadonlySet<string> = new Set(['.md', '.markdown', '.txt']);
export const CONVERTED_TYPES: ReadonlySet<string> = new Set(['.html', '.htm', '.pdf', '.docx']);
/** A PDF or DOCX larger than this is not read (its text could only be larger than the body limit). */
export const MAX_CONVERTED_BYTES = 64 * 1024 * 1024;

/** Characters a document id cannot hold (control characters, the backslash). */
export const UNUSABLE_IN_IDS = /[\u0000-\u001f\u007f-\u009f\\]/;

/** Why a file of this name and size is not made a document, or `null` when it is. */
export function refusalOf(name: string, size: number, maxBytes: number): string | null {
  const type = extname(name).toLowerCase();
  if (!AS_IS_TYPES.has(type) && !CONVERTED_TYPES.has(type)) {
    return `not a type that is imported (${type || 'no extension'})`;
  }
  if (AS_IS_TYPES.has(type) && size > maxBytes) {
    return `${size} bytes, over the body limit of ${maxBytes}`;
  }
  if (size > MAX_CONVERTED_BYTES) {
    return `${size} bytes, over ${MAX_CONVERTED_BYTES} for a file to convert`;
  }
  return null;
}

/**
 * A file's document: markdown and text as they are, their YAML front matter giving `title`,
 * `tags` and the rest `metadata`; HTML reduced to its main content and titled as a fetched
 * page is (see {@link readHtml}), PDF and DOCX converted to markdown (unpdf, mammoth),
 * `metadata.source_type` saying what they were (unless the file starts with front matter:
 * an exported document). Throws naming the problem.
 */
export async function documentOfFile(name: string, bytes: Buffer): Promise<SourceDocument> {
  const type = extname(name).toLowerCase();
  // A file that starts with front matter is markdown whatever its name: what `export` wrote
  // for a document converted from HTML, PDF or DOCX keeps the document's id as its name.
  if (AS_IS_TYPES.has(type) || /^---\r?\n/.test(bytes.subarray(0, 5).toString('latin1'))) {
    return withFrontMatter(decodeUtf8(bytes));
  }
  if (type === '.html' || type === '.htm') {
    const { body, title } = readHtml(htmlText(bytes)).content();
    return { body, title, metadata: { source_type: 'html' } };
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

/**
 * An HTML file's text: in the charset its `<meta>` names (a page saved from the web keeps
 * the one it was served in), else UTF-8, refused when it is not.
 */
function htmlText(bytes: Buffer): string {
  const charset = metaCharset(bytes);
  if (charset === undefined || /^utf-?8$/i.test(charset)) return decodeUtf8(bytes);
  return decodeText(bytes, charset);
}

function decodeUtf8(bytes: Buffer): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new Error('not UTF-8 text');
  }
}

/** An ES module from CommonJS (TypeScript would turn `import()` into `require`). */
function importEsm<T>(specifier: string): Promise<T> {
  return (new Function('s', 'return import(s)') as (s: string) => Promise<T>)(specifier);
}
