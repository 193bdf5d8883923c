// The third retrieval corpus, the linked one: fastify's documentation (docs/Reference,
// docs/Guides and its README, MIT, as the package pinned by package-lock.json ships it, a
// devDependency for this corpus alone), whose pages link to one another as a team's knowledge
// base does ("see [the onRequest hook](./Hooks.md#onrequest)"). The two other corpora hardly
// link (corpus-links.mjs), so anchor text (docs/search.md) can only be measured here. Its
// queries (linked-queries.json) were written by reading these pages, not from any result.
//
// Built by corpus.mjs's builder (the same selection of files, splitting into sections, titles
// and licence check) with ids under `linked/fastify/...`, then with every link between the
// package's pages mapped to the section now holding its target: splitting makes a file a
// folder of sections, and a link to `./Server.md#factory-logger` would name no document. The
// target section is the one holding that fragment (a heading's GitHub slug or an explicit
// `<a id="...">`, compared without case), the file's first section when the link has no
// fragment or the fragment is not found; a fragment-only link (`#onrequest`) to another
// section of the same file is mapped the same way. The link is rewritten as a relative path
// from the linking section to the target section (`../Hooks/03-onrequest.md#onrequest`),
// which the server resolves as an id; its text is left as written. Links outside fenced code
// blocks only; links to files the corpus leaves out, and external URLs, are left as they are.
//
// Left out: SPONSORS.md (a list of sponsors), GOVERNANCE.md (a pointer elsewhere) and a test
// fixture's README (test/bundler/README.md).
//
//   node bench/retrieval/linked-corpus.mjs [--stats] [--list]
import { dirname, join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  PACKAGES as FIRST_PACKAGES,
  PERMISSIVE,
  buildCorpus,
  corpusFingerprint,
  printCorpusStats,
} from './corpus.mjs';
import { SECOND_PACKAGES } from './second-corpus.mjs';

export const LINKED_PREFIX = 'linked';

/** Packages whose documentation makes the linked corpus. */
export const LINKED_PACKAGES = ['fastify'];

const LINKED_EXCLUDE = {
  fastify: ['SPONSORS.md', 'GOVERNANCE.md', 'test/bundler/README.md'],
};

/**
 * @param {string} rootDir the project root (holds package-lock.json and node_modules/)
 * @param {{ warn?: (message: string) => void }} [options]
 */
export async function buildLinkedCorpus(rootDir, { warn } = {}) {
  const overlap = LINKED_PACKAGES.filter(
    (name) => FIRST_PACKAGES.includes(name) || SECOND_PACKAGES.includes(name),
  );
  if (overlap.length > 0)
    throw new Error(`linked corpus: ${overlap.join(', ')} also in another corpus`);
  const documents = await buildCorpus(rootDir, {
    ...(warn ? { warn } : {}),
    packages: LINKED_PACKAGES,
    idPrefix: LINKED_PREFIX,
    exclude: LINKED_EXCLUDE,
    licences: PERMISSIVE,
    // fastify's reference pages put each option and method under a level-4 or level-5 heading: a
    // section per method, where level 3 left 30-40 KB sections of dozens of them.
    deepest: 5,
  });
  return mapLinksToSections(documents);
}

/** sha256 (hex) of the linked corpus: a tag, then every id and body in id order. */
export function linkedCorpusFingerprint(corpus) {
  return corpusFingerprint(corpus, 'linked-corpus');
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces made hyphens. */
function slugOf(heading) {
  return heading
    .replace(/<[^>]*>/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The fragments a section's text can be linked to: its headings' anchors and explicit ids. */
function anchorsOf(text) {
  const anchors = new Set();
  let fence = null;
  for (const line of text.split('\n')) {
    const f = /^\s{0,3}(```+|~~~+)/.exec(line);
    if (f) {
      if (fence === null) fence = f[1][0];
      else if (f[1][0] === fence) fence = null;
      continue;
    }
    if (fence !== null) continue;
    const heading = /^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) anchors.add(slugOf(heading[1]));
    for (const m of line.matchAll(/<a\s+(?:id|name)\s*=\s*["']([^"']+)["']/gi))
      anchors.add(m[1].toLowerCase());
  }
  return anchors;
}

/** Rewrites each document's links between the package's files to the sections holding them. */
function mapLinksToSections(documents) {
  // By `package/file`: its documents in order, each with its anchors.
  const files = new Map();
  for (const d of documents) {
    const key = `${d.source.package}/${d.source.file}`;
    const list = files.get(key) ?? [];
    list.push({ id: d.document_id, anchors: anchorsOf(d.body) });
    files.set(key, list);
  }
  const sectionOf = (key, fragment) => {
    const list = files.get(key);
    if (!list) return null;
    const wanted = fragment?.toLowerCase();
    return (wanted && list.find((s) => s.anchors.has(wanted))) || list[0];
  };
  return documents.map((d) => {
    const fileDir = posix.dirname(d.source.file);
    const from = posix.dirname(d.document_id);
    const rewrite = (target) => {
      const m = /^([^#?\s]*\.md)?(?:#(.*))?$/i.exec(target);
      if (!m || /^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('/')) return target;
      const [, path, fragment] = m;
      if (path === undefined && fragment === undefined) return target;
      const file = path === undefined ? d.source.file : posix.normalize(posix.join(fileDir, path));
      const section = sectionOf(`${d.source.package}/${file}`, fragment);
      if (section === null || section.id === d.document_id) return target;
      const relativePath = posix.relative(from, section.id);
      const written = relativePath.startsWith('.') ? relativePath : `./${relativePath}`;
      return fragment === undefined ? written : `${written}#${fragment}`;
    };
    let fence = null;
    const body = d.body
      .split('\n')
      .map((line) => {
        const f = /^\s{0,3}(```+|~~~+)/.exec(line);
        if (f) {
          if (fence === null) fence = f[1][0];
          else if (f[1][0] === fence) fence = null;
          return line;
        }
        if (fence !== null) return line;
        const reference = /^(\s{0,3}\[[^\]]+\]:\s*)(\S+)(.*)$/.exec(line);
        if (reference) return `${reference[1]}${rewrite(reference[2])}${reference[3]}`;
        return line.replace(
          /(\]\()(<?)([^)\s>]+)(>?)((?:\s+"[^"]*")?\))/g,
          (_, open, lt, target, gt, close) => `${open}${lt}${rewrite(target)}${gt}${close}`,
        );
      })
      .join('\n');
    return { ...d, body };
  });
}

// CLI: node bench/retrieval/linked-corpus.mjs --stats [--list]
if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
  printCorpusStats(await buildLinkedCorpus(root), process.argv, linkedCorpusFingerprint);
}
