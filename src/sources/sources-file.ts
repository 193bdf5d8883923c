import { readFile } from 'node:fs/promises';
import { parse as parseYaml } from 'yaml';
import { sourcesFileSchema, type SourceDeclaration } from './source-declaration';

/** A sources file read: its declarations, or why it was refused (nothing of it applies). */
export type SourcesFileReading =
  | { readonly ok: true; readonly sources: SourceDeclaration[] }
  | { readonly ok: false; readonly error: string };

/** Largest sources file read (a thousand declarations fit in a few hundred KB). */
const MAX_BYTES = 4 * 1024 * 1024;

/**
 * Reads and validates `SOURCES_FILE` (YAML, of which JSON is a part): strictly, every
 * problem named with where it is (`sources[2].mount: ...`), so that an operator who broke the
 * file learns what to fix while the last good declarations stay in force.
 */
export async function readSourcesFile(path: string): Promise<SourcesFileReading> {
  let text: string;
  try {
    const bytes = await readFile(path);
    if (bytes.length > MAX_BYTES) {
      return { ok: false, error: `${path} is ${bytes.length} bytes, over ${MAX_BYTES}` };
    }
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return { ok: false, error: `${path} does not exist` };
    if (error instanceof TypeError) return { ok: false, error: `${path} is not UTF-8 text` };
    return { ok: false, error: `${path} cannot be read (${code ?? (error as Error).message})` };
  }
  let parsed: unknown;
  try {
    parsed = parseYaml(text, { maxAliasCount: 100, uniqueKeys: true }) ?? {};
  } catch (error) {
    const first = (error as Error).message.split('\n')[0];
    return { ok: false, error: `${path} is not valid YAML or JSON: ${first}` };
  }
  const result = sourcesFileSchema.safeParse(parsed);
  if (!result.success) {
    const problems = result.error.issues.slice(0, 5).map((issue) => {
      const where = issue.path
        .map((part, i) =>
          typeof part === 'number' ? `[${part}]` : i === 0 ? part : `.${String(part)}`,
        )
        .join('');
      return `${where || '(the file)'}: ${issue.message}`;
    });
    const more =
      result.error.issues.length > 5 ? ` (and ${result.error.issues.length - 5} more)` : '';
    return { ok: false, error: `${path}: ${problems.join('; ')}${more}` };
  }
  return { ok: true, sources: result.data.sources };
}
