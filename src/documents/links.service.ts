import { Injectable } from '@nestjs/common';
import { DomainError, ErrorCode, invalidArgument } from '../common/domain-error';
import type { Access, Readable } from './access';
import { prefixUpperBound, validateDocumentId, validatePrefix } from './document-id';
import { LinkResolver, readLinks, type Linking, type ReadLink } from './link-resolver';
import { LinksRepository, type LinkingDocument } from './links.repository';
import type {
  Backlink,
  Backlinks,
  BrokenLinks,
  DocumentLinks,
  Link,
  LinkSummary,
  Neighbour,
  Neighbourhood,
} from './links.schemas';
import { passageAround } from './links/link-passage';
import { documentKeys, keysOf } from './links/link-targets';

export const BACKLINKS_DEFAULT_LIMIT = 20;
export const BACKLINKS_MAX_LIMIT = 100;
export const BROKEN_DEFAULT_LIMIT = 100;
export const BROKEN_MAX_LIMIT = 500;
/** Documents with links read for one page of broken links at most. */
const BROKEN_DOCUMENTS_PER_PAGE = 200;
export const NEIGHBOURHOOD_MAX_DEPTH = 3;
export const NEIGHBOURHOOD_DEFAULT_LIMIT = 25;
export const NEIGHBOURHOOD_MAX_LIMIT = 100;
/** How many links and backlinks get_document names. */
const SUMMARY_FIRST = 5;

/**
 * Links between documents, read (docs/documents.md, "Links between documents"): a document's
 * links, its backlinks, a folder's broken links, a neighbourhood. Every answer is what the
 * caller may read: a document outside its grants is never named or counted (a link to it
 * reads as broken, as a link to a document that does not exist), and a walk never passes
 * through one.
 */
@Injectable()
export class LinksService {
  constructor(
    private readonly repository: LinksRepository,
    private readonly resolver: LinkResolver,
  ) {}

  /** The links of a document, in body order, each with the document it resolves to. */
  async links(documentId: string, access: Access): Promise<DocumentLinks> {
    const document = await this.readable(documentId, access);
    const links = await this.resolved(document, access);
    return {
      document_id: document.document_id,
      links,
      count: links.length,
      broken: links.filter((link) => link.document_id === null).length,
    };
  }

  /** The documents linking to one, a page at a time in byte order of their ids. */
  async backlinks(
    documentId: string,
    query: { limit?: number; cursor?: string },
    access: Access,
  ): Promise<Backlinks> {
    const limit = checkedLimit(query.limit, BACKLINKS_DEFAULT_LIMIT, BACKLINKS_MAX_LIMIT);
    const after = query.cursor === undefined ? null : decodeCursor(query.cursor);
    validateDocumentId(documentId);
    const readable = access.readablePatterns() ?? null;
    const found = await this.resolver.linkingOf(documentId, readable);
    if (found === undefined) throw notFound(documentId, access);
    const { linking } = found;
    const { ids, count } = await this.resolver.sources(linking, after, limit + 1, readable);
    const page = ids.slice(0, limit);
    const backlinks = await this.describeBacklinks(page, linking, readable);
    return {
      document_id: documentId,
      backlinks,
      count,
      next_cursor: ids.length > limit ? encodeCursor(page[page.length - 1]) : null,
    };
  }

  /**
   * The broken links of the documents under `prefix` (any text, as listings take it), a page
   * of documents at a time: the links of up to 200 documents that have links, and at most
   * `limit` broken ones (a document's broken links are never split across pages).
   */
  async broken(
    query: { prefix?: string; limit?: number; cursor?: string },
    access: Access,
  ): Promise<BrokenLinks> {
    const prefix = validatePrefix(query.prefix);
    const limit = checkedLimit(query.limit, BROKEN_DEFAULT_LIMIT, BROKEN_MAX_LIMIT);
    const after = query.cursor === undefined ? null : decodeCursor(query.cursor);
    const scope = access.scopeUnder(prefix);
    if (scope === undefined) return { prefix, items: [], documents_read: 0, next_cursor: null };
    const documents = await this.repository.linkingUnder(
      scope.prefix,
      scope.prefix === '' ? null : prefixUpperBound(scope.prefix),
      after,
      BROKEN_DOCUMENTS_PER_PAGE,
      scope.readable,
    );
    const read = documents.map((document) => ({ document, links: readLinks(document) }));
    // The documents read are the scope's; what their links resolve to, anything readable.
    const resolved = await this.resolveEach(read, access.readablePatterns() ?? null);
    const items: BrokenLinks['items'] = [];
    let included = 0;
    for (const [k, { document, links }] of read.entries()) {
      const broken = links.filter((_, j) => resolved[k][j] === null);
      if (items.length > 0 && items.length + broken.length > limit) break;
      included++;
      for (const { link } of broken) {
        items.push({
          document_id: document.document_id,
          title: document.title,
          kind: link.kind,
          target: link.target,
          fragment: link.fragment,
          label: link.label,
          passage: passageAround(document.body, link.start, link.end),
          start: link.start,
          end: link.end,
        });
      }
    }
    const more = included < read.length || documents.length === BROKEN_DOCUMENTS_PER_PAGE;
    return {
      prefix,
      items,
      documents_read: included,
      next_cursor:
        more && included > 0 ? encodeCursor(read[included - 1].document.document_id) : null,
    };
  }

  /**
   * A document, what it links to and what links to it, walked to `depth` (1–3) links away,
   * nearest first, at most `limit` documents: each with its title and the passage of the link
   * it was reached by.
   */
  async neighbourhood(
    documentId: string,
    query: { depth?: number; limit?: number },
    access: Access,
  ): Promise<Neighbourhood> {
    const depth = query.depth ?? 1;
    if (!Number.isInteger(depth) || depth < 1 || depth > NEIGHBOURHOOD_MAX_DEPTH) {
      throw invalidArgument('depth', `must be an integer from 1 to ${NEIGHBOURHOOD_MAX_DEPTH}`);
    }
    const limit = checkedLimit(query.limit, NEIGHBOURHOOD_DEFAULT_LIMIT, NEIGHBOURHOOD_MAX_LIMIT);
    const root = await this.readable(documentId, access);
    const readable = access.readablePatterns() ?? null;
    const neighbours: Neighbour[] = [];
    const seen = new Set([root.document_id]);
    const edges = new Map<string, { from: string; to: string }>();
    const edge = (from: string, to: string) => edges.set(`${from}\u0000${to}`, { from, to });
    let frontier: LinkingDocument[] = [root];
    let truncated = false;
    for (let level = 1; level <= depth && frontier.length > 0 && !truncated; level++) {
      const next: string[] = [];
      const add = (neighbour: Neighbour) => {
        if (seen.has(neighbour.document_id)) return;
        if (neighbours.length >= limit) {
          truncated = true;
          return;
        }
        seen.add(neighbour.document_id);
        neighbours.push(neighbour);
        next.push(neighbour.document_id);
      };
      const read = frontier.map((document) => ({ document, links: readLinks(document) }));
      const resolved = await this.resolveEach(read, readable);
      for (const [k, { document, links }] of read.entries()) {
        links.forEach(({ link }, j) => {
          const target = resolved[k][j];
          if (target === null || target.document_id === document.document_id) return;
          edge(document.document_id, target.document_id);
          add({
            ...target,
            depth: level,
            direction: 'links_to',
            from: document.document_id,
            label: link.label,
            passage: passageAround(document.body, link.start, link.end),
          });
        });
      }
      for (const document of frontier) {
        if (truncated) break;
        const linking = await this.resolver.linking(document.document_id, document.title, readable);
        const { ids } = await this.resolver.sources(linking, null, limit + 1, readable);
        for (const backlink of await this.describeBacklinks(ids, linking, readable)) {
          edge(backlink.document_id, document.document_id);
          add({
            document_id: backlink.document_id,
            title: backlink.title,
            depth: level,
            direction: 'linked_from',
            from: document.document_id,
            label: backlink.label,
            passage: backlink.passage,
          });
        }
      }
      frontier = level < depth ? await this.repository.bodies(next, readable) : [];
      frontier.sort((a, b) => next.indexOf(a.document_id) - next.indexOf(b.document_id));
    }
    const kept = new Set([root.document_id, ...neighbours.map((n) => n.document_id)]);
    return {
      document_id: root.document_id,
      title: root.title,
      depth,
      neighbours,
      edges: [...edges.values()].filter((e) => kept.has(e.from) && kept.has(e.to)),
      truncated,
    };
  }

  /** What get_document says of the links of `document` (already read): counts and the first. */
  async summary(
    document: { document_id: string; title: string; body: string },
    access: Access,
  ): Promise<LinkSummary> {
    const readable = access.readablePatterns() ?? null;
    const links = await this.resolved(document, access);
    const any = await this.repository.anyLinking(
      documentKeys(document.document_id, document.title).all,
      document.document_id,
      readable,
    );
    let count = 0;
    let backlinks: Backlink[] = [];
    if (any) {
      const linking = await this.resolver.linking(document.document_id, document.title, readable);
      const found = await this.resolver.sources(linking, null, SUMMARY_FIRST, readable);
      count = found.count;
      backlinks = await this.describeBacklinks(found.ids, linking, readable);
    }
    const linksTo = new Map<string, LinkSummary['links_to'][number]>();
    for (const link of links) {
      if (link.document_id === null || linksTo.has(link.document_id)) continue;
      if (linksTo.size < SUMMARY_FIRST) {
        linksTo.set(link.document_id, {
          document_id: link.document_id,
          title: link.title!,
          label: link.label,
        });
      }
    }
    return {
      links: links.length,
      broken: links.filter((link) => link.document_id === null).length,
      backlinks: count,
      links_to: [...linksTo.values()],
      linked_from: backlinks.map(({ document_id, title, passage }) => ({
        document_id,
        title,
        passage,
      })),
    };
  }

  /** The document, if alive and readable; NOT_FOUND otherwise, as any read answers. */
  private async readable(documentId: string, access: Access): Promise<LinkingDocument> {
    validateDocumentId(documentId);
    const [document] = await this.repository.bodies(
      [documentId],
      access.readablePatterns() ?? null,
    );
    if (document === undefined) throw notFound(documentId, access);
    return document;
  }

  /** The links of `document`, resolved. */
  private async resolved(document: LinkingDocument, access: Access): Promise<Link[]> {
    const links = readLinks(document);
    const [targets] = await this.resolveEach(
      [{ document, links }],
      access.readablePatterns() ?? null,
    );
    return links.map(({ link }, i) => ({
      kind: link.kind,
      target: link.target,
      fragment: link.fragment,
      label: link.label,
      document_id: targets[i]?.document_id ?? null,
      title: targets[i]?.title ?? null,
      start: link.start,
      end: link.end,
      target_start: link.targetStart,
      target_end: link.targetEnd,
    }));
  }

  /** For each document, what each of its links resolves to (`null`: broken), in one batch. */
  private async resolveEach(
    read: ReadonlyArray<{ document: LinkingDocument; links: readonly ReadLink[] }>,
    readable: Readable,
  ) {
    const asked = read.flatMap(({ document, links }) =>
      links.flatMap(({ target }) =>
        target === null ? [] : [{ source: document.document_id, target }],
      ),
    );
    const answers = await this.resolver.resolveAll(asked, readable);
    let next = 0;
    return read.map(({ links }) =>
      links.map(({ target }) => (target === null ? null : answers[next++])),
    );
  }

  /** Each linking document with its links to the document: how many, the first's text and passage. */
  private async describeBacklinks(
    sources: readonly string[],
    linking: Linking,
    readable: Readable,
  ): Promise<Backlink[]> {
    const bodies = new Map(
      (await this.repository.bodies(sources, readable)).map((d) => [d.document_id, d]),
    );
    const backlinks: Backlink[] = [];
    for (const id of sources) {
      const source = bodies.get(id);
      if (source === undefined) continue;
      const pointing = readLinks(source).filter(
        ({ target }) =>
          target !== null && keysOf(target).some((key) => linking.resolvesFrom(id, key)),
      );
      // A path key and a title key of one wikilink may both hold: the path decides first.
      const first = pointing[0];
      if (first === undefined) continue;
      backlinks.push({
        document_id: source.document_id,
        title: source.title,
        links: pointing.length,
        label: first.link.label,
        passage: passageAround(source.body, first.link.start, first.link.end),
      });
    }
    return backlinks;
  }
}

/** NOT_FOUND, as any read answers an absent document and one the caller may not read. */
function notFound(documentId: string, access: Access): DomainError {
  if (!access.mayRead(documentId)) access.refused();
  return new DomainError(ErrorCode.NOT_FOUND, `document ${documentId} does not exist`, {
    document_id: documentId,
  });
}

function checkedLimit(limit: number | undefined, fallback: number, max: number): number {
  const value = limit ?? fallback;
  if (!Number.isInteger(value) || value < 1 || value > max) {
    throw invalidArgument('limit', `must be an integer from 1 to ${max}`);
  }
  return value;
}

/** A page's position: the last document id given, opaque to clients. */
function encodeCursor(id: string): string {
  return Buffer.from(id, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, 'base64url').toString('utf8');
  if (cursor === '' || encodeCursor(id) !== cursor) {
    throw invalidArgument('cursor', 'is not a cursor this server gave');
  }
  return id;
}
