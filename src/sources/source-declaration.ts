import { z } from 'zod';
import { httpUrl } from '../common/http-url';

/**
 * A source's declaration, as `SOURCES_FILE` (YAML or JSON) and `POST /sources` give it:
 *
 *     sources:
 *       - id: handbook
 *         kind: git
 *         url: https://git.example.com/acme/handbook.git
 *         ref: main
 *         path: docs
 *         mount: handbook
 *         include: ["**\/*.md"]
 *         every: 15m
 *
 * Validated strictly: an unknown field is an error, not ignored.
 */

/** `30s`, `15m`, `6h`, `1d`: a schedule's interval in milliseconds. */
export function durationMs(text: string): number | null {
  const match = /^(\d+)(s|m|h|d)$/.exec(text);
  if (!match) return null;
  const unit = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[
    match[2] as 's' | 'm' | 'h' | 'd'
  ];
  return Number(match[1]) * unit;
}

/** The shortest interval a schedule may have (a source is not polled harder than this). */
export const MIN_EVERY_MS = 60_000;

const every = z
  .string()
  .refine((text) => durationMs(text) !== null, 'a duration such as 30m, 6h or 1d')
  .refine((text) => (durationMs(text) ?? 0) >= MIN_EVERY_MS, 'at least 1m');

/** A source's id: lowercase letters, digits and dashes, at most 63. */
export const SOURCE_ID = /^[a-z0-9][a-z0-9-]{0,62}$/;

const id = z.string().regex(SOURCE_ID, 'lowercase letters, digits and dashes, at most 63');

/** A folder of the knowledge base: segments without `.`/`..`, no leading or trailing `/`. */
const mount = z
  .string()
  .min(1)
  .max(512)
  .refine(
    (text) =>
      text.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..') &&
      !/[\u0000-\u001f\u007f-\u009f\\]/.test(text),
    'a folder such as "handbook" or "vendor/api": segments without "." or "..", no leading or trailing "/"',
  );

const globs = z.array(z.string().min(1).max(512)).max(100);

const common = {
  id,
  mount,
  include: globs.optional(),
  exclude: globs.optional(),
  every: every.optional(),
  /** The share of the source's documents a run may delete without a confirmation (0–1). */
  max_delete: z.number().min(0).max(1).optional(),
  /** `false`: neither scheduled nor watched (a sync asked for still runs). */
  enabled: z.boolean().optional(),
};

/** A secret by reference: the name of an environment variable or the path of a file. */
const secret = z
  .object({
    env: z.string().min(1).max(256).optional(),
    file: z.string().min(1).max(4096).optional(),
  })
  .strict()
  .refine((ref) => (ref.env === undefined) !== (ref.file === undefined), 'either env or file');

export const folderSourceSchema = z
  .object({ ...common, kind: z.literal('folder'), path: z.string().min(1).max(4096) })
  .strict();

/**
 * A declaration as it is shown: a password in its URL, and over http(s) a user name (refused
 * since, but kept in a declaration stored before), replaced by `***`.
 */
export function shown<T extends { kind: string; url?: string }>(declaration: T): T {
  if (declaration.url === undefined) return declaration;
  let url: URL;
  try {
    url = new URL(declaration.url);
  } catch {
    return declaration; // user@host:path: no password to hold
  }
  // Over http(s) a user name may be a token (GitHub takes one there): masked too.
  const maskUser = /^https?:$/.test(url.protocol) && url.username !== '';
  if (url.password === '' && !maskUser) return declaration;
  if (url.password !== '') url.password = '***';
  if (maskUser) url.username = '***';
  return { ...declaration, url: url.toString() };
}

/** Whether a URL (a user@host:path one has none) holds a password. */
function holdsPassword(text: string): boolean {
  try {
    return new URL(text).password !== '';
  } catch {
    return false;
  }
}

export const gitSourceSchema = z
  .object({
    ...common,
    kind: z.literal('git'),
    url: z
      .string()
      .min(1)
      .max(2048)
      .refine(
        (text) => /^(https?|ssh|file):\/\//.test(text) || /^[\w.-]+@[\w.-]+:/.test(text),
        'an https://, ssh://, file:// or user@host:path URL',
      )
      .refine(
        (text) => !holdsPassword(text),
        'the URL holds a password: give it by reference instead (token: { env } or { file })',
      )
      .refine(
        (text) => !/^https?:/i.test(text) || httpUrl(text)?.username === '',
        'the URL holds a user name (perhaps a token): give it as username, and a token by reference',
      ),
    ref: z.string().min(1).max(256).optional(),
    /** A folder inside the repository. */
    path: z.string().min(1).max(1024).optional(),
    /** For https: a token (as the password of `username`, default `x-access-token`). */
    token: secret.optional(),
    username: z.string().min(1).max(256).optional(),
    /** For ssh: a private key file (its path, or an env variable naming the key's text). */
    ssh_key: secret.optional(),
  })
  .strict();

export const webSourceSchema = z
  .object({
    ...common,
    kind: z.literal('web'),
    /** The start URL, and the scope: only URLs under it are read. */
    url: z
      .string()
      .url()
      .max(2048)
      .refine((text) => httpUrl(text) !== undefined, 'an http:// or https:// URL')
      .refine((text) => {
        const url = httpUrl(text);
        return url?.username === '' && url.password === '';
      }, 'the URL holds a user or a password: a site is read without credentials'),
    max_pages: z.number().int().min(1).max(100_000).optional(),
    max_depth: z.number().int().min(0).max(50).optional(),
  })
  .strict();

export const sourceDeclarationSchema = z.discriminatedUnion('kind', [
  folderSourceSchema,
  gitSourceSchema,
  webSourceSchema,
]);

export type FolderSourceDeclaration = z.infer<typeof folderSourceSchema>;
export type GitSourceDeclaration = z.infer<typeof gitSourceSchema>;
export type WebSourceDeclaration = z.infer<typeof webSourceSchema>;
export type SourceDeclaration = z.infer<typeof sourceDeclarationSchema>;

/** A whole `SOURCES_FILE`. */
export const sourcesFileSchema = z
  .object({ sources: z.array(sourceDeclarationSchema).max(1000) })
  .strict()
  .superRefine((file, context) => {
    const ids = new Set<string>();
    const mounts: string[] = [];
    file.sources.forEach((source, index) => {
      if (ids.has(source.id)) {
        context.addIssue({
          code: 'custom',
          path: ['sources', index, 'id'],
          message: `"${source.id}" is declared twice`,
        });
      }
      ids.add(source.id);
      const overlap = mounts.find(
        (other) =>
          other === source.mount ||
          other.startsWith(`${source.mount}/`) ||
          source.mount.startsWith(`${other}/`),
      );
      if (overlap !== undefined) {
        context.addIssue({
          code: 'custom',
          path: ['sources', index, 'mount'],
          message: `"${source.mount}" overlaps the mount "${overlap}" of another source`,
        });
      }
      mounts.push(source.mount);
    });
  });

/** Defaults of the optional fields. */
export const SOURCE_DEFAULTS = {
  every: { folder: '1h', git: '15m', web: '6h' },
  max_delete: 0.25,
  web: { max_pages: 500, max_depth: 10 },
} as const;
