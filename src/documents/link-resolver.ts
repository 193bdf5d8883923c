import { Injectable } from '@nestjs/common';
import type { Readable } from './access';
import { prefixUpperBound } from './document-id';
import { LinksRepository, type LinkedDocument, type RangeProbe } from './links.repository';
import {
  backlinkKeys,
  backlinkLookup,
  compareBytes,
  nearest,
  type BacklinkKeys,
  type Candidates,
} from './links/link-resolution';
import { endsWithPath, nameOf, targetOf, twinOf, type LinkTarget } from './links/link-targets';
import { extractLinks, type FoundLink } from './links/markdown-links';

/** A link to resolve: what it asks for, and the document it is written in. */
export interface Asked {
  readonly source: string;
  readonly target: LinkTarget;
}

/** The documents that link to one document, and through which of its keys. */
export interface Linking {
  readonly documentId: string;
  readonly keys: BacklinkKeys;
  /** Whether a link holding `key`, written in `source`, resolves to the document. */
  resolvesFrom(source: string, key: string): boolean;
}

/**
 * Resolves links against the documents alive now that the caller may read (docs/documents.md,
 * "Links between documents"): a document outside the caller's grants is absent here, so a link
 * to it reads as broken, and a path some other readable document ends with resolves there.
 * The rules are link-resolution.ts's; this class asks the database for what they need, a few
 * batched statements whatever the number of links.
 */
@Injectable()
export class LinkResolver {
  constructor(private readonly repository: LinksRepository) {}

  /** The document each link resolves to (`null`: broken), with its title, in order. */
  async resolveAll(
    asked: readonly Asked[],
    readable: Readable,
  ): Promise<Array<LinkedDocument | null>> {
    const result = new Array<LinkedDocument | null>(asked.length).fill(null);
    const ids = new Set<string>();
    for (const { target } of asked) {
      if (target.rule === 'id') ids.add(target.id).add(twinOf(target.id));
    }
    const alive = new Map(
      (await this.repository.alive([...ids], readable)).map((d) => [d.document_id, d]),
    );
    const byPath: number[] = [];
    asked.forEach(({ target }, i) => {
      if (target.rule === 'id') {
        result[i] = alive.get(target.id) ?? alive.get(twinOf(target.id)) ?? null;
      } else byPath.push(i);
    });
    const unmatched = await this.nearestUnder(
      'name',
      byPath.map((i) => ({
        i,
        source: asked[i].source,
        key: nameOf(pathOf(asked[i].target)),
        accepts: (id: string) => endsWithPath(id, pathOf(asked[i].target)),
      })),
      result,
      readable,
    );
    await this.nearestUnder(
      'title',
      unmatched.flatMap((i) => {
        const { target } = asked[i];
        return target.rule === 'path' && target.title !== null
          ? [{ i, source: asked[i].source, key: target.title, accepts: () => true }]
          : [];
      }),
      result,
      readable,
    );
    return result;
  }

  /**
   * Which documents may link to `documentId` (titled `title`), by which keys, and from where
   * each key's links resolve to it (link-resolution.ts, backlinkKeys), among the documents
   * the caller may read.
   */
  async linking(documentId: string, title: string, readable: Readable): Promise<Linking> {
    const found = await this.repository.candidates(backlinkLookup(documentId, title), readable);
    return this.linkingAmong(documentId, title, found);
  }

  /**
   * {@link linking} of a document known by its id alone, with its title; `undefined` when it
   * is absent or the caller may not read it. One statement.
   */
  async linkingOf(
    documentId: string,
    readable: Readable,
  ): Promise<{ title: string; linking: Linking } | undefined> {
    const found = await this.repository.candidatesOf(
      documentId,
      twinOf(documentId),
      nameOf(documentId),
      readable,
    );
    const self = found.find((d) => d.by === 'self');
    if (self === undefined) return undefined;
    return { title: self.key, linking: this.linkingAmong(documentId, self.key, found) };
  }

  private linkingAmong(
    documentId: string,
    title: string,
    found: ReadonlyArray<{ by: string; key: string; document_id: string }>,
  ): Linking {
    const candidates: Candidates = {
      ids: new Set(found.filter((d) => d.by === 'id').map((d) => d.document_id)),
      byName: keyed(found.filter((d) => d.by === 'name')),
      byTitle: keyed(found.filter((d) => d.by === 'title')),
    };
    const keys = backlinkKeys(documentId, title, candidates);
    const always = new Set(keys.always);
    const rivals = new Map(keys.nearest.map(({ key, rivals: r }) => [key, r]));
    return {
      documentId,
      keys,
      resolvesFrom: (source, key) =>
        always.has(key) || (rivals.has(key) && nearest(source, rivals.get(key)!) === documentId),
    };
  }

  /**
   * The documents linking to `documentId` (never itself), after `after`, `want` of them, and
   * how many there are in all. The keys whose links resolve to it from anywhere are one GIN
   * query; the others ask, for each document holding them, whether it is nearer to
   * `documentId` than to the other documents of the same path or title.
   */
  async sources(
    linking: Linking,
    after: string | null,
    want: number,
    readable: Readable,
  ): Promise<{ ids: string[]; count: number }> {
    const { documentId, keys } = linking;
    const { always, nearest } = keys;
    if (nearest.length === 0) {
      return this.repository.linkingPage(always, documentId, after, want, readable);
    }
    const rows = await this.repository.linkingWithKeys(
      [...always, ...nearest.map((n) => n.key)],
      documentId,
      readable,
    );
    const all = rows
      .filter(({ source_id, matched }) =>
        matched.some((key) => linking.resolvesFrom(source_id, key)),
      )
      .map((row) => row.source_id);
    const start = after === null ? 0 : all.findIndex((id) => compareBytes(id, after) > 0);
    return { ids: start === -1 ? [] : all.slice(start, start + want), count: all.length };
  }

  /**
   * For each wanted link, the nearest document of its name (or title) that it accepts: looked
   * for in its document's folder, then in each folder above, one batched statement a level.
   * Sets `result[i]`; returns the `i` of those none was found for.
   */
  private async nearestUnder(
    by: 'name' | 'title',
    wanted: ReadonlyArray<{
      i: number;
      source: string;
      key: string;
      accepts: (id: string) => boolean;
    }>,
    result: Array<LinkedDocument | null>,
    readable: Readable,
  ): Promise<number[]> {
    const unmatched: number[] = [];
    let pending = wanted.map((w) => ({ ...w, level: w.source.split('/').length - 1 }));
    while (pending.length > 0) {
      const probes = new Map<string, RangeProbe>();
      const probeOf = (w: (typeof pending)[number]): string => {
        const prefix = w.level === 0 ? '' : `${w.source.split('/').slice(0, w.level).join('/')}/`;
        const id = `${w.key}\u0000${prefix}`;
        if (!probes.has(id)) {
          probes.set(id, {
            key: w.key,
            lo: prefix,
            hi: prefix === '' ? null : prefixUpperBound(prefix),
          });
        }
        return id;
      };
      const asked = pending.map(probeOf);
      const order = [...probes.keys()];
      const rows =
        by === 'name'
          ? await this.repository.named([...probes.values()], readable)
          : await this.repository.titled([...probes.values()], readable);
      const found = groupBy(rows, (row) => order[row.i]);
      const next: typeof pending = [];
      pending.forEach((w, k) => {
        const matches = (found.get(asked[k]) ?? []).filter((id) => w.accepts(id));
        if (matches.length > 0) {
          // All share exactly `level` folders with the source (deeper ones were looked for
          // first): the shortest id, then the first in byte order.
          const best = matches.reduce((a, b) =>
            b.length < a.length || (b.length === a.length && compareBytes(b, a) < 0) ? b : a,
          );
          const row = rows.find((r) => r.document_id === best)!;
          result[w.i] = { document_id: row.document_id, title: row.title };
        } else if (w.level > 0) next.push({ ...w, level: w.level - 1 });
        else unmatched.push(w.i);
      });
      pending = next;
    }
    return unmatched;
  }
}

/** A link of a body with what it asks for (`null`: it names no document, an external URL). */
export interface ReadLink {
  readonly link: FoundLink;
  readonly target: LinkTarget | null;
}

/** The links of a document's body, each with what it asks for. */
export function readLinks(document: { document_id: string; body: string }): ReadLink[] {
  return extractLinks(document.body).map((link) => ({
    link,
    target: targetOf(link, document.document_id),
  }));
}

/** Ids grouped by the key they were found by. */
function keyed(rows: ReadonlyArray<{ key: string; document_id: string }>): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const { key, document_id } of rows)
    groups.set(key, [...(groups.get(key) ?? []), document_id]);
  return groups;
}

function pathOf(target: LinkTarget): string {
  return target.rule === 'path' ? target.suffix : target.id;
}

function groupBy<T extends LinkedDocument>(
  rows: readonly T[],
  keyOf: (row: T) => string,
): Map<string, string[]> {
  const groups = new Map<string, string[]>();
  for (const row of rows) {
    const key = keyOf(row);
    const list = groups.get(key);
    if (list === undefined) groups.set(key, [row.document_id]);
    else list.push(row.document_id);
  }
  return groups;
}
