// How linked the retrieval benchmark's corpora are: for each corpus, the links its documents
// hold (the server's own extraction and resolution rules, from dist/), how many name another
// document of the corpus, and how many documents they point at. Anchor text (the texts of
// the links pointing at a document) can only move a ranking where documents are linked to, so
// this says whether a corpus can measure it at all (docs/search.md, "Anchor text"): the first
// two hardly link; the linked corpus (linked-corpus.mjs) was made to.
//
//   npm run build && node bench/retrieval/corpus-links.mjs
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { resolveLink } from './anchor-lab.mjs';
import { buildCorpus } from './corpus.mjs';
import { buildLinkedCorpus } from './linked-corpus.mjs';
import { buildSecondCorpus } from './second-corpus.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const { extractLinks } = await import(join(root, 'dist/src/documents/links/markdown-links.js'));
const { targetOf, titleKey } = await import(join(root, 'dist/src/documents/links/link-targets.js'));

function measure(name, corpus, querySets) {
  const ids = new Set(corpus.map((d) => d.document_id));
  const titles = new Map();
  for (const d of corpus) {
    const key = titleKey(d.title);
    titles.set(key, [...(titles.get(key) ?? []), d.document_id]);
  }
  // Files the corpus split into sections: a link to one names no document any more.
  const splitFiles = new Set(
    corpus
      .filter((d) => d.source.section !== null)
      .map((d) => `${d.source.package}/${d.source.file}`),
  );
  let links = 0;
  let toDocuments = 0;
  let resolved = 0;
  let toSplit = 0;
  const inbound = new Map();
  for (const d of corpus) {
    for (const link of extractLinks(d.body)) {
      links++;
      const target = targetOf(link, d.document_id);
      if (target === null) continue;
      toDocuments++;
      const id = resolveLink(target, d.document_id, ids, titles);
      if (id === null || id === d.document_id) {
        const path = target.rule === 'path' ? target.suffix : target.id;
        if (
          [...splitFiles].some((f) => f.toLowerCase().endsWith(path.replace(/\.md$/, '') + '.md'))
        )
          toSplit++;
        continue;
      }
      resolved++;
      inbound.set(id, (inbound.get(id) ?? 0) + 1);
    }
  }
  console.log(
    `${name}: ${corpus.length} documents, ${links} links, ${toDocuments} naming a document ` +
      `(the rest external or same-page), ${resolved} resolving to another document of the ` +
      `corpus, pointing at ${inbound.size} documents; ${toSplit} name a file the corpus split ` +
      `into sections`,
  );
  for (const [file, queries] of querySets) {
    const touched = queries.filter((q) => Object.keys(q.relevant).some((id) => inbound.has(id)));
    console.log(
      `  ${file}: ${touched.length} of ${queries.length} queries have a relevant document that is linked to`,
    );
  }
}

const here = dirname(fileURLToPath(import.meta.url));
const queries = (file) => {
  const parsed = JSON.parse(readFileSync(join(here, file), 'utf8'));
  return [file, Array.isArray(parsed) ? parsed : parsed.queries];
};
const warn = () => undefined;
measure('first corpus', await buildCorpus(root, { warn }), [
  queries('queries.json'),
  queries('held-back.json'),
]);
measure('second corpus', await buildSecondCorpus(root, { warn }), [
  queries('second-held-back.json'),
]);
measure('linked corpus', await buildLinkedCorpus(root, { warn }), [queries('linked-queries.json')]);
