import type { LexicalIndexState } from './index-state';
import { SLAB_BYTES, type PostingStoreState } from './posting-store';

/**
 * The lexical index written in the form it is held in, so that a restart reads it back whole
 * rather than building it again from every document's record (docs/performance.md, "Restart
 * to ready": at 250 000 documents the build took a minute of CPU, mostly putting 55 million
 * postings one by one into their chains and each document's terms into the dictionary).
 *
 * A snapshot is a list of sections (the dictionary, each column of the document slots, the
 * postings' per-term arrays, the docs' term ids, the slabs) cut into parts of at most
 * {@link PART_BYTES}, written and read one part at a time: neither side ever holds a second
 * copy of the whole index. Numbers are written in the machine's byte order (little-endian on
 * every platform Node supports); {@link SNAPSHOT_FORMAT} changes with the layout, and a
 * snapshot of another format is not read.
 */
export const SNAPSHOT_FORMAT = 3;

/** Bytes of a part at most: one slab of postings. */
export const PART_BYTES = SLAB_BYTES;

type Column = Int32Array | Uint32Array | Uint8Array | Float64Array | Float32Array;
type ColumnType = new (length: number) => Column;

/** The numeric sections, in the order they are written. */
const COLUMNS = {
  passageLengths: Int32Array,
  passageStart: Int32Array,
  passageCounts: Int32Array,
  revisions: Int32Array,
  alive: Uint8Array,
  lengths: Float64Array,
  head: Uint32Array,
  tail: Uint32Array,
  sizes: Int32Array,
  deadCounts: Int32Array,
  free: Uint32Array,
  docTermLengths: Int32Array,
} satisfies Record<string, ColumnType>;
type ColumnName = keyof typeof COLUMNS;
const TEXTS = ['terms', 'ids', 'tags'] as const;
type TextName = (typeof TEXTS)[number];
type SectionName = TextName | ColumnName | 'docTerms' | 'slabs' | 'vectors';

/**
 * The documents' vectors under a semantic model, by slot of the index (zeros for a removed
 * document's): a restart under the same model reads them rather than computing them again.
 */
export interface SnapshotVectors {
  readonly modelId: string;
  readonly dimensions: number;
  /** The vector of a slot's document (a view, or a copy: not kept by the caller). */
  row(slot: number): Float32Array;
}

/** Where each section lies: its bytes and parts, in the order written. */
export interface SnapshotLayout {
  readonly format: number;
  readonly sections: ReadonlyArray<{ name: SectionName; bytes: number; parts: number }>;
  /** Words used in the last slab, and free blocks of each size class. */
  readonly used: number;
  readonly free: readonly number[];
  /** The model whose vectors the `vectors` section holds, if it holds any. */
  readonly semantic?: { readonly modelId: string; readonly dimensions: number };
}

/** A snapshot to write: its layout, then its parts in order, made one at a time. */
export interface SnapshotWriting {
  readonly layout: SnapshotLayout;
  parts(): Generator<Buffer>;
}

/**
 * The parts of `state` (and of the documents' semantic vectors, when given), made lazily:
 * slabs and columns are views, not copies.
 */
export function writeSnapshot(
  state: LexicalIndexState,
  vectors?: SnapshotVectors,
): SnapshotWriting {
  const { store } = state;
  const texts: Record<TextName, Buffer> = {
    terms: Buffer.from(state.terms.join('\n')),
    // A removed document's slot is an empty line (an id is never empty).
    ids: Buffer.from(state.ids.map((id) => id ?? '').join('\n')),
    tags: Buffer.from(JSON.stringify(state.tags.map((tags) => tags ?? null))),
  };
  const docTermLengths = Int32Array.from(state.docTerms, (bytes) => bytes?.length ?? 0);
  const columns: Record<ColumnName, Column> = {
    passageLengths: state.passageLengths,
    passageStart: state.passageStart,
    passageCounts: state.passageCounts,
    revisions: state.revisions,
    alive: state.alive,
    lengths: state.lengths,
    head: store.head,
    tail: store.tail,
    sizes: store.sizes,
    deadCounts: store.deadCounts,
    free: Uint32Array.from(store.free.flat()),
    docTermLengths,
  };
  // The documents' term ids in parts cut between documents: a part read back is the memory of
  // the documents it holds (views into it), given back once they are all removed or replaced.
  const docTermParts: Array<[from: number, to: number, bytes: number]> = [];
  for (let slot = 0, from = 0, bytes = 0; slot <= state.docTerms.length; slot++) {
    const length = docTermLengths[slot] ?? 0;
    if (slot === state.docTerms.length || (bytes > 0 && bytes + length > PART_BYTES)) {
      if (bytes > 0) docTermParts.push([from, slot, bytes]);
      from = slot;
      bytes = 0;
    }
    bytes += length;
  }
  const sections: Array<{ name: SectionName; bytes: number; parts: number }> = [
    ...TEXTS.map((name) => ({ name, bytes: texts[name].length, parts: partsOf(texts[name]) })),
    ...(Object.keys(COLUMNS) as ColumnName[]).map((name) => ({
      name,
      bytes: columns[name].byteLength,
      parts: partsOf(columns[name]),
    })),
    {
      name: 'docTerms',
      bytes: docTermParts.reduce((sum, [, , bytes]) => sum + bytes, 0),
      parts: docTermParts.length,
    },
    { name: 'slabs', bytes: store.slabs.length * SLAB_BYTES, parts: store.slabs.length },
  ];
  const rowBytes = (vectors?.dimensions ?? 0) * 4;
  // Whole rows in a part, so that a part read back is rows.
  const rowsPerPart = Math.max(1, Math.floor(PART_BYTES / Math.max(rowBytes, 1)));
  if (vectors) {
    const bytes = state.ids.length * rowBytes;
    sections.push({ name: 'vectors', bytes, parts: Math.ceil(state.ids.length / rowsPerPart) });
  }
  return {
    layout: {
      format: SNAPSHOT_FORMAT,
      sections,
      used: store.used,
      free: store.free.map((blocks) => blocks.length),
      semantic: vectors && { modelId: vectors.modelId, dimensions: vectors.dimensions },
    },
    *parts() {
      for (const name of TEXTS) yield* cut(texts[name]);
      for (const name of Object.keys(COLUMNS) as ColumnName[]) yield* cut(columns[name]);
      for (const [from, to, bytes] of docTermParts) {
        const part = Buffer.allocUnsafe(bytes);
        let at = 0;
        for (let slot = from; slot < to; slot++) {
          const terms = state.docTerms[slot];
          if (terms) part.set(terms, at);
          at += terms?.length ?? 0;
        }
        yield part;
      }
      for (const slab of store.slabs) yield viewOf(slab);
      for (let from = 0; vectors && from < state.ids.length; from += rowsPerPart) {
        const to = Math.min(from + rowsPerPart, state.ids.length);
        const rows = new Float32Array((to - from) * vectors.dimensions);
        for (let slot = from; slot < to; slot++) {
          if (state.alive[slot]) rows.set(vectors.row(slot), (slot - from) * vectors.dimensions);
        }
        yield viewOf(rows);
      }
    },
  };
}

/**
 * Reads a snapshot back from its parts, given in order to {@link accept}; {@link state} then
 * gives the index's state. Throws as soon as a part does not fit the layout.
 */
export class SnapshotReader {
  private readonly sections: SnapshotLayout['sections'];
  private section = 0;
  /** Parts and bytes of the current section read so far. */
  private partsRead = 0;
  private bytesRead = 0;
  private readonly texts: Partial<Record<TextName, Buffer>> = {};
  private readonly columns: Partial<Record<ColumnName, Column>> = {};
  private readonly docTerms: Array<Uint8Array | undefined> = [];
  private readonly slabs: Uint32Array[] = [];
  /** The parts of the vectors' section, as floats. */
  private readonly vectorParts: Float32Array[] = [];

  constructor(private readonly layout: SnapshotLayout) {
    if (layout.format !== SNAPSHOT_FORMAT) throw new Error(`format ${layout.format}`);
    this.sections = layout.sections;
  }

  /** Parts the layout names. */
  get parts(): number {
    return this.sections.reduce((sum, s) => sum + s.parts, 0);
  }

  accept(part: Buffer): void {
    while (this.section < this.sections.length && this.sections[this.section].parts === 0) {
      this.finishSection();
    }
    const section = this.sections[this.section];
    if (section === undefined) throw new Error('a part beyond the layout');
    const { name } = section;
    if (name === 'slabs') {
      if (part.length !== SLAB_BYTES) throw new Error(`a slab of ${part.length} bytes`);
      this.slabs.push(ownedWords(part));
    } else if (name === 'vectors') {
      if (part.length % 4 !== 0) throw new Error('vectors misaligned');
      const floats = ownedWords(part);
      this.vectorParts.push(new Float32Array(floats.buffer, floats.byteOffset, floats.length));
    } else if (name === 'docTerms') {
      this.readDocTerms(part);
    } else if ((TEXTS as readonly string[]).includes(name)) {
      const text = name as TextName;
      this.texts[text] ??= Buffer.allocUnsafe(section.bytes);
      this.copyInto(this.texts[text], part, section.bytes);
    } else {
      const column = name as ColumnName;
      const type = COLUMNS[column];
      if (section.bytes % type.BYTES_PER_ELEMENT !== 0) throw new Error(`${column} misaligned`);
      const target = (this.columns[column] ??= new type(section.bytes / type.BYTES_PER_ELEMENT));
      this.copyInto(new Uint8Array(target.buffer), part, section.bytes);
    }
    if (name === 'slabs' || name === 'docTerms' || name === 'vectors') {
      this.bytesRead += part.length;
    }
    if (++this.partsRead === section.parts) this.finishSection();
  }

  /** The index's state, once every part has been read. */
  state(): LexicalIndexState {
    while (this.section < this.sections.length && this.sections[this.section].parts === 0) {
      this.finishSection();
    }
    if (this.section !== this.sections.length) throw new Error('parts are missing');
    const text = (name: TextName) => this.texts[name]?.toString() ?? '';
    const split = (name: TextName) => (text(name) === '' ? [] : text(name).split('\n'));
    const column = <N extends ColumnName>(name: N) =>
      (this.columns[name] ?? new COLUMNS[name](0)) as InstanceType<(typeof COLUMNS)[N]>;
    const slots = column('docTermLengths').length;
    const ids = slots === 0 ? [] : text('ids').split('\n');
    const tags = JSON.parse(text('tags') || '[]') as Array<string[] | null>;
    if (ids.length !== slots || tags.length !== slots || this.docTerms.length !== slots) {
      throw new Error('slots of inconsistent counts');
    }
    const free: number[][] = [];
    let at = 0;
    for (const count of this.layout.free) {
      free.push(Array.from(column('free').subarray(at, at + count)));
      at += count;
    }
    const store: PostingStoreState = {
      slabs: this.slabs,
      used: this.layout.used,
      free,
      head: column('head'),
      tail: column('tail'),
      sizes: column('sizes'),
      deadCounts: column('deadCounts'),
    };
    return {
      terms: split('terms'),
      store,
      ids: ids.map((id) => (id === '' ? undefined : id)),
      tags: tags.map((held) => held ?? undefined),
      docTerms: this.docTerms,
      passageLengths: column('passageLengths'),
      passageStart: column('passageStart'),
      passageCounts: column('passageCounts'),
      revisions: column('revisions'),
      alive: column('alive'),
      lengths: column('lengths'),
    };
  }

  /**
   * The documents' vectors the snapshot holds, by slot, if it holds any (once every part has
   * been read).
   */
  vectors(): SnapshotVectors | undefined {
    const semantic = this.layout.semantic;
    if (semantic === undefined) return undefined;
    const { modelId, dimensions } = semantic;
    const perPart = this.vectorParts[0]?.length ?? 0;
    const slots = this.docTerms.length;
    if (this.vectorParts.reduce((sum, part) => sum + part.length, 0) !== slots * dimensions) {
      throw new Error('vectors of another number of documents');
    }
    return {
      modelId,
      dimensions,
      row: (slot) => {
        const at = slot * dimensions;
        const part = this.vectorParts[Math.floor(at / perPart)];
        return part.subarray(at % perPart, (at % perPart) + dimensions);
      },
    };
  }

  /** One part of the documents' term ids: views into it, one a document. */
  private readDocTerms(part: Buffer): void {
    const lengths = this.columns.docTermLengths as Int32Array | undefined;
    if (lengths === undefined) throw new Error('term ids before their lengths');
    const owned = ownedBytes(part);
    let at = 0;
    while (at < owned.length) {
      const slot = this.docTerms.length;
      if (slot >= lengths.length) throw new Error('term ids of more documents than slots');
      const length = lengths[slot];
      this.docTerms.push(length === 0 ? undefined : owned.subarray(at, at + length));
      at += length;
    }
    if (at !== owned.length) throw new Error('term ids cut inside a document');
  }

  private copyInto(target: Uint8Array, part: Buffer, bytes: number): void {
    if (this.bytesRead + part.length > bytes) throw new Error('a section longer than its layout');
    target.set(part, this.bytesRead);
    this.bytesRead += part.length;
  }

  private finishSection(): void {
    const section = this.sections[this.section];
    if (this.bytesRead !== section.bytes) {
      throw new Error(`${section.name}: ${this.bytesRead} of ${section.bytes} bytes`);
    }
    if (section.name === 'docTerms') {
      const lengths = this.columns.docTermLengths as Int32Array | undefined;
      // Trailing slots without terms (removed documents) are in no part.
      while (lengths && this.docTerms.length < lengths.length) {
        if (lengths[this.docTerms.length] !== 0) throw new Error('term ids are missing');
        this.docTerms.push(undefined);
      }
    }
    this.section++;
    this.partsRead = 0;
    this.bytesRead = 0;
  }
}

function partsOf(bytes: { byteLength: number }): number {
  return Math.ceil(bytes.byteLength / PART_BYTES);
}

function viewOf(column: Column): Buffer {
  return Buffer.from(column.buffer, column.byteOffset, column.byteLength);
}

function* cut(column: Column | Buffer): Generator<Buffer> {
  const bytes = Buffer.isBuffer(column) ? column : viewOf(column);
  for (let at = 0; at < bytes.length; at += PART_BYTES) {
    yield bytes.subarray(at, Math.min(at + PART_BYTES, bytes.length));
  }
}

/** The part's bytes in memory of their own (not a slice of a larger buffer kept alive by it). */
function ownedBytes(part: Buffer): Uint8Array {
  return part.byteOffset === 0 && part.buffer.byteLength === part.length
    ? part
    : new Uint8Array(part);
}

/** A slab's words: the part's own memory when it is the whole of it, else a copy. */
function ownedWords(part: Buffer): Uint32Array {
  const bytes = ownedBytes(part);
  return new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
}
