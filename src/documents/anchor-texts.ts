import { Injectable } from '@nestjs/common';
import type { Readable } from './access';
import { escapeLike, folderPrefixOf } from './document-id';
import { LinkResolver, readLinks } from './link-resolver';
import { LinksRepository } from './links.repository';
import { backlinkLookup } from './links/link-resolution';
import { documentKeys } from './links/link-targets';

/** The texts of the links that point at a document, and the documents they are written in. */
export interface AnchorTexts {
  readonly labels: string[];
  readonly sources: string[];
}

/**
 * What the links of the knowledge base say of a document, for its anchor field
 * (docs/search.md, "Anchor text"). Only links written in the document's own folder or below
 * it count: everyone who may read a document may read those (grants are folders), so the
 * field can be part of the index every reader searches; a link from anywhere else would make
 * the document match, for some reader, words that reader may not read. Links resolve as for
 * a reader granted exactly that folder (the documents outside it absent), which for a link
 * from inside it is how everyone resolves it: a document nearer to the link than this one
 * is inside the folder too.
 */
@Injectable()
export class AnchorTextReader {
  constructor(
    private readonly repository: LinksRepository,
    private readonly resolver: LinkResolver,
  ) {}

  /**
   * Which of the documents some link may point at (a link anywhere holds one of the keys
   * they are found by): one query for all, so the others' fields are known empty without
   * reading them.
   */
  async mayBeLinked(
    documents: ReadonlyArray<{ document_id: string; title: string }>,
  ): Promise<Set<string>> {
    // A document may be asked about under two titles (the one it had, the one it has).
    const keys = new Map<string, string[]>();
    for (const d of documents) {
      const own = documentKeys(d.document_id, d.title).all;
      keys.set(d.document_id, [...(keys.get(d.document_id) ?? []), ...own]);
    }
    const held = await this.repository.heldKeys([...new Set([...keys.values()].flat())]);
    return new Set(
      documents
        .filter((d) => keys.get(d.document_id)!.some((key) => held.has(key)))
        .map((d) => d.document_id),
    );
  }

  /**
   * The documents a link meaning `documentId` titled `title` might mean instead, in the
   * folders above it: of its twin id, of its name, of its title (alive, itself left out).
   * Once it came or took a title, a link that gave one of them words may resolve to it now;
   * only those whose folder holds it can be as near to such a link as it is.
   */
  async namesakesOf(documentId: string, title: string): Promise<string[]> {
    const found = await this.repository.namesakesIn(
      backlinkLookup(documentId, title),
      foldersAbove(documentId),
    );
    return found.filter((id) => id !== documentId);
  }

  /**
   * For a document that went or gave up `title`: the documents linking by one of the keys it
   * was found by from the folder (or below) of one of `namesakes`, whose links may now resolve
   * to that namesake and give it words.
   */
  async linkersNear(
    documentId: string,
    title: string,
    namesakes: readonly string[],
  ): Promise<string[]> {
    if (namesakes.length === 0) return [];
    const folders = [...new Set(namesakes.map(folderPrefixOf))].map((f) => `${escapeLike(f)}%`);
    const rows = await this.repository.linkingWithKeys(
      documentKeys(documentId, title).all,
      documentId,
      folders.includes('%') ? null : folders,
    );
    return rows.map((row) => row.source_id);
  }

  /** The texts of the links pointing at `documentId` (titled `title`) from its folder's subtree. */
  async textsOf(documentId: string, title: string): Promise<AnchorTexts> {
    const readable = subtreeOf(documentId);
    const linking = await this.resolver.linking(documentId, title, readable);
    const keys = [...linking.keys.always, ...linking.keys.nearest.map((n) => n.key)];
    const labels: string[] = [];
    const sources: string[] = [];
    if (keys.length === 0) return { labels, sources };
    const wanted = new Set(keys);
    for (const row of await this.repository.linkingRows(keys, documentId, readable)) {
      // A wikilink with a path and a title holds two keys side by side (`~`, then `@`): one
      // link, counted once.
      let countedAt = -1;
      row.keys.forEach((key, i) => {
        const second = key.startsWith('@') && i > 0 && row.keys[i - 1].startsWith('~');
        if (second && countedAt === i - 1) return;
        if (!wanted.has(key) || !linking.resolvesFrom(row.source_id, key)) return;
        labels.push(row.labels[i]);
        countedAt = i;
      });
      if (countedAt >= 0) sources.push(row.source_id);
    }
    return { labels, sources };
  }

  /**
   * The documents whose anchor field the links of `documentId` (alive, its body `body`) add
   * to: those of its folder and the folders above it that the links resolve to, each as
   * {@link textsOf} resolves them.
   */
  async targetsOf(documentId: string, body: string): Promise<string[]> {
    const asked = readLinks({ document_id: documentId, body }).flatMap(({ target }) =>
      target === null ? [] : [{ source: documentId, target }],
    );
    if (asked.length === 0) return [];
    const targets = new Set<string>();
    const above = (id: string) => id !== documentId && documentId.startsWith(folderPrefixOf(id));
    const everywhere = await this.resolver.resolveAll(asked, null);
    everywhere.forEach((found) => {
      if (found !== null && above(found.document_id)) targets.add(found.document_id);
    });
    // A link resolves the same among the documents of a folder above as among all of them
    // (a nearer document is in that folder too), but for a wikilink's title: when its path
    // names only documents outside the folder, a reader of the folder gets the title's.
    const titled = asked.filter(
      ({ target }, i) =>
        target.rule === 'path' &&
        target.title !== null &&
        !(everywhere[i] !== null && above(everywhere[i]!.document_id)),
    );
    if (titled.length === 0) return [...targets];
    for (const parent of foldersAbove(documentId)) {
      const folder = `${parent}/`;
      for (const found of await this.resolver.resolveAll(titled, [`${escapeLike(folder)}%`])) {
        if (
          found !== null &&
          above(found.document_id) &&
          folderPrefixOf(found.document_id) === folder
        )
          targets.add(found.document_id);
      }
    }
    return [...targets];
  }
}

/** The readable condition of a reader granted exactly the folder of `documentId`. */
function subtreeOf(documentId: string): Readable {
  const folder = folderPrefixOf(documentId);
  return folder === '' ? null : [`${escapeLike(folder)}%`];
}

/** The folders holding `documentId`, outermost first, as parent ids (`a/b/c.md` → `a`, `a/b`). */
function foldersAbove(documentId: string): string[] {
  const parts = documentId.split('/').slice(0, -1);
  return parts.map((_, depth) => parts.slice(0, depth + 1).join('/'));
}
