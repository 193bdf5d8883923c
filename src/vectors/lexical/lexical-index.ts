// Longer than most files: the in-memory index is one data structure (postings in slabs, the
// records, the dictionary) whose parts change together. The folder and tag sets, and what
// filters made of them, are document-groups.ts's.
import { setImmediate } from 'node:timers/promises';
import type { LexicalRecord } from './lexical-record';
import { packPosting, passageCount, passageIndex, PostingStore } from './posting-store';
import { readDocTerms, writeDocTerms } from './doc-terms';
import { type Bm25Averages, FIELDS, idf, passageShare, termShare } from './bm25';
import type { LexicalIndexState } from './index-state';
import { topSlots } from './top-slots';
import { admits, type DocumentFilter } from './document-filter';
import { DocumentGroups } from './document-groups';

export { admits, filterKey, type DocumentFilter } from './document-filter';

/**
 * The lexical index in memory: an inverted index over {@link IndexedLexicalDocument}s and the
 * exact top-k of one BM25 formula over it (docs/search.md):
 *
 *   score(d) = Σ_t w_t · (bm25f(t, d) + λ · bm25(t, best passage of t in d))
 *
 * - w_t = idf_t · qw_t, idf = ln(1 + (N − df + 0.5) / (df + 0.5)) over the documents held,
 *   qw the query term's weight (1, less for an expansion);
 * - bm25f: Okapi BM25 (k1 1.2, b 0.75) over the title (weight 2), the headings (2) and the
 *   body (1), each field's length normalised against its average length (BM25F);
 * - the passage part: BM25 of the term in the passage that holds it best, its length
 *   normalised against the average passage length, at weight λ = 0.5 — evidence gathered
 *   in one passage counts more than the same words spread over a document.
 *
 * N, df and every average are those of the documents held now, kept exactly as documents are
 * set and removed. Every document holding a query term is scored (one pass over the terms'
 * postings: at 50 000 documents a question of common words is some 10⁵ postings, about a
 * millisecond), so the answer is the exact top-k; a filter is applied while scoring, so a
 * folder or tag filter still gets `limit` results when most matches are outside it.
 */
export interface IndexedLexicalDocument extends LexicalRecord {
  readonly documentId: string;
  readonly revision: number;
  readonly tags: readonly string[];
  /**
   * How many times its anchor field was written (`anchor_stamp`): with the revision, what tells
   * a copy of the index that the stored record changed. 0 when never.
   */
  readonly anchorStamp?: number;
}

export interface WeightedTerm {
  readonly term: string;
  /** 1 for a term of the query, less for an expansion. */
  readonly weight: number;
}

export interface LexicalMatch {
  readonly documentId: string;
  readonly score: number;
  /** The passage holding the largest share of the query's weight. */
  readonly passage: number;
}

/**
 * A filter admitting at most this share of the documents is ranked by visiting the admitted
 * documents only (each term's posting found by bisection); a wider one while scanning the
 * postings.
 */
const FEW_ADMITTED = 1 / 4;
/** Documents restored per turn of the event loop (some milliseconds). */
const RESTORED_PER_TURN = 5000;

export { BM25_B, BM25_K1, FIELD_WEIGHTS, PASSAGE_WEIGHT } from './bm25';

/** A term's count in the title, headings and body together, from its packed fields. */
export function totalCount(fields: number): number {
  return (fields & 0xff) + ((fields >>> 8) & 0xff) + (fields >>> 16);
}

/** Growable numeric columns of the document slots. */
function grow<T extends Int32Array | Float64Array | Uint8Array>(array: T, length: number): T {
  if (length <= array.length) return array;
  const grown = new (array.constructor as new (n: number) => T)(Math.max(length, array.length * 2));
  grown.set(array);
  return grown;
}

export class LexicalIndex {
  private readonly termIds = new Map<string, number>();
  private termNames: string[] = [];
  /** Every term's postings (posting-store.ts), by term id. */
  private store = new PostingStore();
  private readonly slots = new Map<string, number>();
  /** Documents whose anchor field was written, and how many times (few: a map, not a column). */
  private readonly anchorStamps = new Map<string, number>();
  /** The ids under each folder and with each tag, and what filters made of them (kept). */
  private readonly groups = new DocumentGroups();
  /** Changes with every document set or removed: what the groups' kept answers were built at. */
  private version = 0;

  /** Changes with every document set or removed. */
  get changes(): number {
    return this.version;
  }
  private ids: Array<string | undefined> = [];
  private tags: Array<readonly string[] | undefined> = [];
  /**
   * Each document's term ids, ascending, and its count of each (title, headings and body
   * together, capped at 255): what removing it takes away, and what the semantic model reads.
   * Encoded as varints (doc-terms below): some 2–3 bytes a term instead of 6.
   */
  private docTerms: Array<Uint8Array | undefined> = [];
  /** Every slot's passage lengths back to back, from `passageStart[slot]`. */
  private passageLengths: Int32Array = new Int32Array(64);
  private passageStart: Int32Array = new Int32Array(16);
  private passageCounts: Int32Array = new Int32Array(16);
  private passageEnd = 0;
  private revisions: Int32Array = new Int32Array(16);
  private alive: Uint8Array = new Uint8Array(16);
  /** Title, headings and body lengths of each slot, back to back. */
  private lengths: Float64Array = new Float64Array(16 * FIELDS);
  private slotCount = 0;
  private liveCount = 0;
  private readonly lengthSums = [0, 0, 0, 0];
  private passageLengthSum = 0;
  private passageCount = 0;
  private postingCount = 0;

  get documentCount(): number {
    return this.liveCount;
  }

  get postings(): number {
    return this.postingCount;
  }

  get termCount(): number {
    return this.termNames.length;
  }

  /** The mean lengths of the fields and passages held, that BM25 normalises by. */
  get averages(): Bm25Averages {
    const n = Math.max(this.liveCount, 1);
    const [title, headings, body, anchor] = this.lengthSums.map((sum) => Math.max(sum / n, 1e-9));
    const passage = Math.max(this.passageLengthSum / Math.max(this.passageCount, 1), 1e-9);
    return { title, headings, body, anchor, passage };
  }

  versionOf(documentId: string): number | undefined {
    const slot = this.slots.get(documentId);
    return slot === undefined ? undefined : this.revisions[slot];
  }

  /**
   * The anchor stamp of a held document (see {@link IndexedLexicalDocument}); 0 when never
   * written, or not known (an index restored from a snapshot: a later change reads it again).
   */
  anchorStampOf(documentId: string): number {
    return this.anchorStamps.get(documentId) ?? 0;
  }

  /** Documents (live ones) holding `term`. */
  frequency(term: string): number {
    const id = this.termIds.get(term);
    return id === undefined ? 0 : this.store.live(id);
  }

  /** Bytes of the postings' slabs. */
  get postingBytes(): number {
    return this.store.bytes;
  }

  /** Terms held that contain `part` (not equal to it), the most frequent first. */
  termsContaining(part: string, limit: number): string[] {
    const found: Array<[string, number]> = [];
    this.termNames.forEach((term, id) => {
      if (term !== part && term.includes(part) && this.store.live(id) > 0) {
        found.push([term, this.store.live(id)]);
      }
    });
    return found
      .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
      .slice(0, limit)
      .map(([term]) => term);
  }

  /** The documents held, with their tags. */
  *documents(): Generator<{ documentId: string; tags: readonly string[] }> {
    for (const [documentId, slot] of this.slots) yield { documentId, tags: this.tags[slot]! };
  }

  tagsOf(documentId: string): readonly string[] | undefined {
    const slot = this.slots.get(documentId);
    return slot === undefined ? undefined : this.tags[slot];
  }

  /** A held document's terms and how often it says each (title, headings and body together). */
  termCountsOf(documentId: string): Map<string, number> | undefined {
    const slot = this.slots.get(documentId);
    if (slot === undefined) return undefined;
    const found = new Map<string, number>();
    readDocTerms(this.docTerms[slot]!, (id, count) => found.set(this.termNames[id], count));
    return found;
  }

  /**
   * Calls `each` with every term id of a held document (ascending) and its count, as
   * {@link termCountsOf} gives them by name; false when the document is not held.
   */
  termIdsOf(documentId: string, each: (term: number, count: number) => void): boolean {
    const slot = this.slots.get(documentId);
    if (slot === undefined) return false;
    readDocTerms(this.docTerms[slot]!, each);
    return true;
  }

  /**
   * Which of `terms` a held document holds: one pass over its term ids against the few asked,
   * where {@link termCountsOf} would name every term it has (a search asks this of its first
   * document).
   */
  heldTerms(documentId: string, terms: readonly string[]): Set<string> {
    const asked = new Map<number, string>();
    for (const term of terms) {
      const id = this.termIds.get(term);
      if (id !== undefined) asked.set(id, term);
    }
    const held = new Set<string>();
    if (asked.size === 0) return held;
    this.termIdsOf(documentId, (id) => {
      const term = asked.get(id);
      if (term !== undefined) held.add(term);
    });
    return held;
  }

  termName(term: number): string {
    return this.termNames[term];
  }

  /** What the index holds, without copying it: valid until the index next changes. */
  state(): LexicalIndexState {
    const slots = this.slotCount;
    return {
      terms: this.termNames,
      store: this.store.state(),
      ids: this.ids.slice(0, slots),
      tags: this.tags.slice(0, slots),
      docTerms: this.docTerms.slice(0, slots),
      passageLengths: this.passageLengths.subarray(0, this.passageEnd),
      passageStart: this.passageStart.subarray(0, slots),
      passageCounts: this.passageCounts.subarray(0, slots),
      revisions: this.revisions.subarray(0, slots),
      alive: this.alive.subarray(0, slots),
      lengths: this.lengths.subarray(0, slots * FIELDS),
    };
  }

  /**
   * An index holding `state`'s arrays themselves (not shared with another); its counts and
   * sums are computed again from them (the lengths are whole numbers: the sums are exact, as
   * when the documents were set one by one). Rejects when the parts do not fit together.
   * Gives the event loop a turn every {@link RESTORED_PER_TURN} documents: a restart at
   * 250 000 documents answers its liveness probe meanwhile.
   */
  static async restore(state: LexicalIndexState): Promise<LexicalIndex> {
    const slots = state.ids.length;
    const sized = [state.tags, state.docTerms, state.passageStart, state.passageCounts];
    if (
      [...sized, state.revisions, state.alive].some((column) => column.length !== slots) ||
      state.lengths.length !== slots * FIELDS ||
      state.store.head.length !== state.terms.length
    ) {
      throw new Error('an index of inconsistent sizes');
    }
    const index = new LexicalIndex();
    index.store = PostingStore.restore(state.store);
    state.terms.forEach((term, id) => index.termIds.set(term, id));
    index.termNames = [...state.terms];
    index.ids = [...state.ids];
    index.tags = [...state.tags];
    index.docTerms = [...state.docTerms];
    index.passageLengths = state.passageLengths;
    index.passageStart = state.passageStart;
    index.passageCounts = state.passageCounts;
    index.passageEnd = state.passageLengths.length;
    index.revisions = state.revisions;
    index.alive = state.alive;
    index.lengths = state.lengths;
    index.slotCount = slots;
    for (let slot = 0; slot < slots; slot++) {
      if (slot % RESTORED_PER_TURN === RESTORED_PER_TURN - 1) await setImmediate();
      const documentId = state.ids[slot];
      if (state.alive[slot] === 0) continue;
      const tags = state.tags[slot];
      const terms = state.docTerms[slot];
      const start = state.passageStart[slot];
      const count = state.passageCounts[slot];
      if (documentId === undefined || !tags || !terms || start + count > index.passageEnd) {
        throw new Error(`slot ${slot} of the index is incomplete`);
      }
      index.slots.set(documentId, slot);
      index.groups.group(documentId, tags, true);
      index.liveCount++;
      for (let f = 0; f < FIELDS; f++) index.lengthSums[f] += state.lengths[slot * FIELDS + f];
      for (let p = start; p < start + count; p++) index.passageLengthSum += state.passageLengths[p];
      index.passageCount += count;
      readDocTerms(terms, () => index.postingCount++);
    }
    return index;
  }

  /**
   * Adds a document, or replaces the one of the same id; true when only what the links say of
   * it changed (its postings rewritten where they are: see {@link revise}).
   */
  set(document: IndexedLexicalDocument): boolean {
    if (this.revise(document)) return true;
    this.remove(document.documentId);
    const slot = this.slotCount++;
    this.revisions = grow(this.revisions, this.slotCount);
    this.passageStart = grow(this.passageStart, this.slotCount);
    this.passageCounts = grow(this.passageCounts, this.slotCount);
    this.passageLengths = grow(
      this.passageLengths,
      this.passageEnd + document.passageLengths.length,
    );
    this.passageStart[slot] = this.passageEnd;
    this.passageCounts[slot] = document.passageLengths.length;
    this.passageLengths.set(document.passageLengths, this.passageEnd);
    this.passageEnd += document.passageLengths.length;
    this.alive = grow(this.alive, this.slotCount);
    this.lengths = grow(this.lengths, this.slotCount * FIELDS);
    this.slots.set(document.documentId, slot);
    this.version++;
    this.groups.group(document.documentId, document.tags, true);
    this.ids[slot] = document.documentId;
    this.tags[slot] = document.tags;
    this.revisions[slot] = document.revision;
    this.alive[slot] = 1;
    if (document.anchorStamp) this.anchorStamps.set(document.documentId, document.anchorStamp);
    const ids = new Array<number>(document.terms.length);
    const counts = new Array<number>(document.terms.length);
    document.terms.forEach((term, i) => {
      counts[i] = Math.min(0xff, totalCount(document.fields[i]));
      ids[i] = this.termIdOf(term);
      this.store.add(ids[i], slot, packPosting(document.fields[i], document.passages[i]));
    });
    this.docTerms[slot] = writeDocTerms(ids, counts);
    for (let f = 0; f < FIELDS; f++) {
      this.lengths[slot * FIELDS + f] = document.lengths[f];
      this.lengthSums[f] += document.lengths[f];
    }
    for (const length of document.passageLengths) this.passageLengthSum += length;
    this.passageCount += document.passageLengths.length;
    this.postingCount += ids.length;
    this.liveCount++;
    return false;
  }

  /** The id of `term`, a new one when no document held it yet. */
  private termIdOf(term: string): number {
    let id = this.termIds.get(term);
    if (id === undefined) {
      id = this.store.addTerm();
      this.termIds.set(term, id);
      this.termNames.push(term);
    }
    return id;
  }

  /**
   * Takes in a document held at the same revision whose record differs only in what the
   * links say of it (its anchor field: the same tags, title, headings, body and passages, and
   * the same count of each term there) by rewriting its postings where they are, and
   * appending those of terms only links say that it did not hold, when no later document
   * holds them; false, changing nothing, otherwise. Replacing it would give it a new slot and
   * leave its postings dead until their lists are compacted, where a catch-up of the anchor
   * fields rewrites most linked documents once (docs/performance.md, "Anchor fields").
   */
  private revise(document: IndexedLexicalDocument): boolean {
    const slot = this.slots.get(document.documentId);
    if (slot === undefined || this.revisions[slot] !== document.revision) return false;
    const tags = this.tags[slot]!;
    if (tags.length !== document.tags.length || tags.some((tag, i) => tag !== document.tags[i]))
      return false;
    for (let f = 0; f < FIELDS - 1; f++) {
      if (this.lengths[slot * FIELDS + f] !== document.lengths[f]) return false;
    }
    const start = this.passageStart[slot];
    if (this.passageCounts[slot] !== document.passageLengths.length) return false;
    for (let p = 0; p < document.passageLengths.length; p++) {
      if (this.passageLengths[start + p] !== document.passageLengths[p]) return false;
    }
    const held = new Map<number, number>();
    readDocTerms(this.docTerms[slot]!, (id, count) => held.set(id, count));
    let kept = 0;
    let added = false;
    for (let i = 0; i < document.terms.length; i++) {
      const count = Math.min(0xff, totalCount(document.fields[i]));
      const id = this.termIds.get(document.terms[i]);
      if (id !== undefined && held.has(id)) {
        if (held.get(id) !== count) return false;
        kept++;
      } else if (count !== 0 || (id !== undefined && this.store.lastSlot(id) > slot)) {
        return false;
      } else {
        added = true;
      }
    }
    // A term it held is gone (one only links said, no longer said).
    if (kept !== held.size) return false;
    const ids = new Array<number>(document.terms.length);
    const counts = new Array<number>(document.terms.length);
    document.terms.forEach((term, i) => {
      const packed = packPosting(document.fields[i], document.passages[i]);
      ids[i] = this.termIdOf(term);
      counts[i] = held.get(ids[i]) ?? 0;
      if (!held.has(ids[i])) {
        this.store.add(ids[i], slot, packed);
        this.postingCount++;
      } else this.store.replace(ids[i], slot, packed);
    });
    if (added) this.docTerms[slot] = writeDocTerms(ids, counts);
    const anchor = slot * FIELDS + FIELDS - 1;
    this.lengthSums[FIELDS - 1] += document.lengths[FIELDS - 1] - this.lengths[anchor];
    this.lengths[anchor] = document.lengths[FIELDS - 1];
    if (document.anchorStamp) this.anchorStamps.set(document.documentId, document.anchorStamp);
    else this.anchorStamps.delete(document.documentId);
    this.version++;
    return true;
  }

  remove(documentId: string): void {
    const slot = this.slots.get(documentId);
    if (slot === undefined) return;
    this.slots.delete(documentId);
    this.anchorStamps.delete(documentId);
    this.version++;
    this.groups.group(documentId, this.tags[slot]!, false);
    this.alive[slot] = 0;
    this.liveCount--;
    for (let f = 0; f < FIELDS; f++) this.lengthSums[f] -= this.lengths[slot * FIELDS + f];
    const start = this.passageStart[slot];
    for (let p = 0; p < this.passageCounts[slot]; p++) {
      this.passageLengthSum -= this.passageLengths[start + p];
    }
    this.passageCount -= this.passageCounts[slot];
    const store = this.store;
    const alive = this.alive;
    let terms = 0;
    readDocTerms(this.docTerms[slot]!, (id) => {
      terms++;
      store.markDead(id);
      const dead = store.dead(id);
      if (dead > 8 && dead * 4 > store.size(id)) store.compact(id, alive);
    });
    this.postingCount -= terms;
    this.ids[slot] = undefined;
    this.tags[slot] = undefined;
    this.docTerms[slot] = undefined;
    // Slots are not reused: once most are empty, the lists are renumbered in one pass.
    if (this.slotCount > 1024 && this.slotCount > 2 * this.liveCount) this.renumber();
  }

  /**
   * The ids `filter` admits when they are few (at most `share` of the documents, by default
   * {@link FEW_ADMITTED}), read from the folder and tag sets; `undefined` when there are more.
   */
  admitted(filter: DocumentFilter, share = FEW_ADMITTED): readonly string[] | undefined {
    return this.groups.remembered(filter, share, this.version, this.liveCount).ids;
  }

  /**
   * The best `limit` documents for the terms, best first (ties by id), among those `filter`
   * admits, each with its best passage.
   */
  search(terms: readonly WeightedTerm[], limit: number, filter?: DocumentFilter): LexicalMatch[] {
    const n = this.liveCount;
    if (n === 0 || limit <= 0) return [];
    const averages = this.averages;
    const avgPassage = averages.passage;
    const scores = new Float64Array(this.slotCount);
    const touched = new Int32Array(this.slotCount);
    let count = 0;
    const { lengths, passageLengths, passageStart } = this;
    // Read once: an imported constant is a property read at each use, and this is per posting.
    const stride = FIELDS;
    const weighted = this.weigh(terms, n);
    /** Adds one posting's share (the term's weight `w`) to its document's score. */
    const add = (slot: number, packed: number, w: number) => {
      const plen = passageLengths[passageStart[slot] + passageIndex(packed)];
      if (scores[slot] === 0) touched[count++] = slot;
      scores[slot] += w * termShare(packed, lengths, slot * stride, plen, averages);
    };
    const store = this.store;

    const few =
      filter && this.groups.remembered(filter, FEW_ADMITTED, this.version, this.liveCount);
    if (few?.ids !== undefined) {
      // Few documents admitted: each one's posting of each term, found by bisection.
      few.slots ??= Int32Array.from(few.ids, (id) => this.slots.get(id)!).sort();
      const slots = few.slots;
      for (const { term, w } of weighted) {
        for (const slot of slots) {
          const packed = store.find(term, slot);
          if (packed >= 0) add(slot, packed, w);
        }
      }
    } else {
      const alive = this.alive;
      const { folders, ...others } = filter ?? {};
      const narrowed = others.folder !== undefined || (others.tags?.length ?? 0) > 0;
      const accept = narrowed ? admits(others) : undefined;
      /** With a filter: 0 not seen yet, 1 admitted, 2 refused. */
      let state: Uint8Array | undefined;
      if (folders !== undefined) {
        // Readable folders: the documents outside them refused before anything is scored.
        state = this.groups
          .outside(folders, this.version, this.slotCount, (id) => this.slots.get(id)!)
          .slice();
      } else if (accept !== undefined) {
        state = new Uint8Array(this.slotCount);
      }
      const ids = this.ids;
      const tags = this.tags;
      for (const { term, w } of weighted) {
        store.forEachBlock(term, (data, from, to) => {
          for (let i = from; i < to; i += 2) {
            const slot = data[i];
            if (alive[slot] === 0) continue;
            if (state !== undefined) {
              let seen = state[slot];
              if (seen === 0) {
                seen = accept === undefined || accept(ids[slot]!, tags[slot]!) ? 1 : 2;
                state[slot] = seen;
              }
              if (seen === 2) continue;
            }
            add(slot, data[i + 1], w);
          }
        });
      }
    }
    return topSlots(touched.subarray(0, count), scores, this.ids, limit).map((slot) => ({
      documentId: this.ids[slot]!,
      score: Math.round(scores[slot] * 1e9) / 1e9,
      passage: this.bestPassage(slot, weighted, avgPassage),
    }));
  }

  /**
   * The passage of a held document that holds most of the terms' weight (0 when it holds
   * none of them): what a result found another way shows.
   */
  passageFor(documentId: string, terms: readonly WeightedTerm[]): number {
    const slot = this.slots.get(documentId);
    if (slot === undefined || this.liveCount === 0) return 0;
    return this.bestPassage(slot, this.weigh(terms, this.liveCount), this.averages.passage);
  }

  /** The query's terms the index holds, with their ids and weights (w = idf · weight). */
  private weigh(terms: readonly WeightedTerm[], n: number): Array<{ term: number; w: number }> {
    return terms.flatMap(({ term, weight }) => {
      const id = this.termIds.get(term);
      const df = id === undefined ? 0 : this.store.live(id);
      return id === undefined || df === 0 ? [] : [{ term: id, w: idf(n, df) * weight }];
    });
  }

  /**
   * The passage of a document holding the largest share of the query's weight: each term
   * votes for its own best passage with its passage score.
   */
  private bestPassage(
    slot: number,
    weighted: ReadonlyArray<{ term: number; w: number }>,
    avgPassage: number,
  ): number {
    const votes = new Map<number, number>();
    for (const { term, w } of weighted) {
      const packed = this.store.find(term, slot);
      if (packed < 0) continue;
      const p = passageIndex(packed);
      const ptf = passageCount(packed);
      const plen = this.passageLengths[this.passageStart[slot] + p];
      const share = w * passageShare(ptf, plen, avgPassage);
      votes.set(p, (votes.get(p) ?? 0) + share);
    }
    let best = 0;
    let most = -1;
    for (const [p, share] of votes) {
      if (share > most || (share === most && p < best)) [best, most] = [p, share];
    }
    return best;
  }

  /** Kept for callers that trim after a load: the store has no room grown ahead to give back. */
  trim(): void {}

  /** Drops the empty slots: every term's postings are compacted and their slots renumbered. */
  private renumber(): void {
    const renumber = new Int32Array(this.slotCount);
    let next = 0;
    for (let slot = 0; slot < this.slotCount; slot++) if (this.alive[slot]) renumber[slot] = next++;
    for (let term = 0; term < this.termNames.length; term++) {
      this.store.compact(term, this.alive, renumber);
    }
    const keep = <T>(column: T[]): T[] => column.filter((_, slot) => this.alive[slot] === 1);
    this.ids = keep(this.ids.slice(0, this.slotCount));
    this.tags = keep(this.tags.slice(0, this.slotCount));
    this.docTerms = keep(this.docTerms.slice(0, this.slotCount));
    const revisions = new Int32Array(Math.max(16, next));
    const lengths = new Float64Array(Math.max(16 * FIELDS, next * FIELDS));
    const passageStart = new Int32Array(Math.max(16, next));
    const passageCounts = new Int32Array(Math.max(16, next));
    const passageLengths = new Int32Array(Math.max(64, this.passageCount));
    let passageEnd = 0;
    for (let slot = 0; slot < this.slotCount; slot++) {
      if (!this.alive[slot]) continue;
      const to = renumber[slot];
      revisions[to] = this.revisions[slot];
      lengths.set(this.lengths.subarray(slot * FIELDS, (slot + 1) * FIELDS), to * FIELDS);
      const from = this.passageStart[slot];
      passageLengths.set(
        this.passageLengths.subarray(from, from + this.passageCounts[slot]),
        passageEnd,
      );
      passageStart[to] = passageEnd;
      passageCounts[to] = this.passageCounts[slot];
      passageEnd += this.passageCounts[slot];
    }
    this.revisions = revisions;
    this.lengths = lengths;
    this.passageStart = passageStart;
    this.passageCounts = passageCounts;
    this.passageLengths = passageLengths;
    this.passageEnd = passageEnd;
    this.alive = new Uint8Array(Math.max(16, next)).fill(1, 0, next);
    this.slotCount = next;
    this.slots.clear();
    this.ids.forEach((id, slot) => this.slots.set(id!, slot));
  }
}
