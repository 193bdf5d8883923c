// The documents of the search-at-scale measurements (scenarios/70-search-scale.mjs, and the
// embedding model's at models/at-scale.mjs): the retrieval corpus's sections (real markdown),
// each copy mixed with a paragraph of another section and placed under a folder of its own,
// so that terms do not all become exactly N times as frequent: `scale/c0042/pkg/pino/docs/api.md`.

const MIN_BYTES = 2048;
const MAX_BYTES = 6144;

/** The `n`th document: a corpus section, a paragraph of another, 2–6 KB, in a folder of its copy. */
export function scaleDocument(corpus, n) {
  const section = corpus[n % corpus.length];
  const copy = Math.floor(n / corpus.length);
  const other = corpus[(n * 7919 + copy * 104729) % corpus.length];
  const paragraphs = other.body.split(/\n\s*\n/).filter((p) => p.trim().length > 80);
  let body = section.body;
  if (paragraphs.length > 0) body += `\n\n${paragraphs[(n + copy) % paragraphs.length]}`;
  for (let k = 1; Buffer.byteLength(body) < MIN_BYTES && k < corpus.length; k++) {
    body += `\n\n${corpus[(n + k * 31) % corpus.length].body}`;
  }
  if (Buffer.byteLength(body) > MAX_BYTES) body = cutAt(body, MAX_BYTES);
  return {
    document_id: `scale/c${String(copy).padStart(4, '0')}/${section.document_id}`,
    title: section.title,
    body,
  };
}

/** The request that writes the `n`th document through REST, with `headers` (the API key). */
export function writeRequest(corpus, n, headers) {
  return {
    method: 'POST',
    path: '/documents',
    headers: { ...headers, 'Content-Type': 'application/json', Prefer: 'return=minimal' },
    body: scaleDocument(corpus, n),
  };
}

/** `text` cut to at most `bytes` UTF-8 bytes, at the last line break before. */
function cutAt(text, bytes) {
  const cut = Buffer.from(text)
    .subarray(0, bytes)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
  const line = cut.lastIndexOf('\n');
  return line > bytes / 2 ? cut.slice(0, line) : cut;
}
