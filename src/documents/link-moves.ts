import { Injectable } from '@nestjs/common';
import { PreparedStatements } from '../database/prepared-statements';
import { contentHash } from './document-fields';
import { DocumentSources } from './document-sources';
import { DocumentsRepository } from './documents.repository';
import { LinkResolver, readLinks, type ReadLink } from './link-resolver';
import { linkRowOf } from './links/link-row';
import { rewritten, targetText, wikilinkPaths, type Rewrite } from './links/link-rewrite';
import { endsWithPath, fold, keysOf, targetOf } from './links/link-targets';

/**
 * The actor of the revisions a move writes in the documents whose links it rewrites (their
 * history and the change feed name it).
 */
export const LINKS_ACTOR = 'system:links';

/** Linking documents a move rewrites at most (each is a new revision, indexed again). */
const MAX_REWRITTEN = 100_000;

type Locked = Awaited<ReturnType<DocumentsRepository['lockAlive']>>[number];

/** A link to write again so that it resolves to `to`, in a document at `source`. */
interface Change {
  readonly source: string;
  readonly read: ReadLink;
  readonly to: string;
}

/**
 * Moves keep links working (docs/documents.md, "Moves keep links working"): in the move's
 * transaction, the links that resolved to the moved document are written again so that they
 * resolve to it under its new id, and the moved document's own links that resolved elsewhere
 * are written again from its new folder. Each rewritten document gets a new revision by
 * {@link LINKS_ACTOR}. Documents a source keeps in sync are left as they are (the source
 * writes them). Resolution here is the whole knowledge base's, whoever moves.
 */
@Injectable()
export class LinkMoves {
  constructor(
    private readonly documents: DocumentsRepository,
    private readonly resolver: LinkResolver,
    private readonly statements: PreparedStatements,
    private readonly sources: DocumentSources,
  ) {}

  /**
   * Runs `move` (which moves `from` to `to` and answers whether it did) in one transaction with
   * the rewriting of the links it would break; `move`'s answer, and whether the moved
   * document's own body was rewritten (then read it again).
   */
  async moving<T extends { kind: string }>(
    from: string,
    to: string,
    move: () => Promise<T>,
  ): Promise<{ outcome: T; rewroteMoved: boolean }> {
    return this.statements.transaction(async () => {
      const [moving] = await this.documents.lockAlive([from]);
      if (moving === undefined) return { outcome: await move(), rewroteMoved: false };
      const owned = await this.sources.provenance([from]);
      const linking = await this.resolver.linking(from, moving.title, null);
      const { ids } = await this.resolver.sources(linking, null, MAX_REWRITTEN, null);
      const ownedSources = await this.sources.provenance(ids);
      const sources = await this.documents.lockAlive(ids.filter((id) => !ownedSources.has(id)));
      const inbound = sources.map((source) => ({
        source,
        links: readLinks(source).filter(
          ({ target }) =>
            target !== null &&
            keysOf(target).some((key) => linking.resolvesFrom(source.document_id, key)),
        ),
      }));
      const own = owned.has(from) ? [] : readLinks(moving);
      const ownBefore = await this.resolveEach(own.map((read) => ({ source: from, read })));

      const outcome = await move();
      if (outcome.kind !== 'moved') return { outcome, rewroteMoved: false };

      // What the links resolve to now, and those to write again.
      const changes: Change[] = [];
      const pairs = inbound.flatMap(({ source, links }) =>
        links.map((read) => ({ source: source.document_id, read })),
      );
      // A link that named the document by its path must still do so: resolving by its title
      // instead (a [[PostgreSQL]] to `PostgreSQL.md`, renamed, titled so) would leave a body
      // naming no file.
      const inboundAfter = await this.resolveEach(
        pairs.map(({ source, read }) => ({ source, read: byPathIfItWas(read, from) })),
      );
      pairs.forEach(({ source, read }, i) => {
        if (inboundAfter[i] !== to) changes.push({ source, read, to });
      });
      const ownAfter = await this.resolveEach(
        own.map(({ link }) => ({ source: to, read: { link, target: targetOf(link, to) } })),
      );
      own.forEach((read, i) => {
        const before = ownBefore[i];
        if (before === null) return;
        const expected = before === from ? to : before;
        if (ownAfter[i] !== expected) changes.push({ source: to, read, to: expected });
      });
      const rewritesBy = await this.rewrites(changes);
      const byId = new Map<string, Locked>([
        ...sources.map((s) => [s.document_id, s] as const),
        [to, { ...moving, document_id: to }],
      ]);
      await this.documents.rewriteBodies(
        [...rewritesBy].map(([id, rewrites]) => {
          const document = byId.get(id)!;
          const body = rewritten(document.body, rewrites);
          return {
            documentId: id,
            body,
            contentHash: contentHash(body),
            revision: document.revision,
            links: linkRowOf(id, body),
          };
        }),
        LINKS_ACTOR,
      );
      return { outcome, rewroteMoved: rewritesBy.has(to) };
    });
  }

  /** The id each link, written in its document, resolves to now (`null`: none), in order. */
  private async resolveEach(
    links: ReadonlyArray<{ source: string; read: ReadLink }>,
  ): Promise<Array<string | null>> {
    const named = links.flatMap(({ source, read }) =>
      read.target === null ? [] : [{ source, target: read.target }],
    );
    const resolved = await this.resolver.resolveAll(named, null);
    let next = 0;
    return links.map(({ read }) =>
      read.target === null ? null : (resolved[next++]?.document_id ?? null),
    );
  }

  /** What to write in each document so that each change's link resolves to its target. */
  private async rewrites(changes: readonly Change[]): Promise<Map<string, Rewrite[]>> {
    // A wikilink takes the shortest path that resolves to the target, of at least as many
    // segments as it was written with (a path stays a path), looked up all at once.
    const wikilinks = changes.filter((change) => change.read.link.kind === 'wikilink');
    const tries = wikilinks.flatMap((change) =>
      wikilinkPaths(change.to, change.read.link.target.split('/').length).map((path) => ({
        change,
        path,
        asked: {
          source: change.source,
          target: { rule: 'path' as const, suffix: fold(path), title: null },
        },
      })),
    );
    const resolved = await this.resolver.resolveAll(
      tries.map((t) => t.asked),
      null,
    );
    const chosen = new Map<Change, string>();
    tries.forEach((t, i) => {
      if (!chosen.has(t.change) && resolved[i]?.document_id === t.change.to) {
        chosen.set(t.change, t.path);
      }
    });
    const byDocument = new Map<string, Rewrite[]>();
    for (const change of changes) {
      const { link } = change.read;
      const text =
        link.kind === 'wikilink'
          ? (chosen.get(change) ?? `/${change.to}`)
          : targetText(link, change.source, change.to);
      const list = byDocument.get(change.source) ?? [];
      list.push({ start: link.targetStart, end: link.targetEnd, text });
      byDocument.set(change.source, list);
    }
    return byDocument;
  }
}

/** The link read by its path alone when `from`'s id ends with that path (it meant it so). */
function byPathIfItWas(read: ReadLink, from: string): ReadLink {
  const { target } = read;
  if (target === null || target.rule !== 'path' || target.title === null) return read;
  return endsWithPath(from, target.suffix) ? { ...read, target: { ...target, title: null } } : read;
}
