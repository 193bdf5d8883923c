import {
  compiled,
  I32,
  oneFunctionModule,
  op,
  simd,
  V128,
  vector,
  DOTS_LAYOUT,
  type DotsFunction,
} from '../../common/wasm-module';

/**
 * Unit vectors quantized to one signed byte a dimension (each vector with its own scale: its
 * largest component is ±127), back to back in WebAssembly memory, and their dot products with
 * a query quantized alike, computed with 128-bit SIMD: sixteen dimensions at a time, widened
 * to 16 bits and multiplied-and-added into 32-bit lanes (`i32x4.dot_i16x8_s`), exact in
 * integers. A vector takes a quarter of its float32 bytes; a score is within some 1 % of the
 * exact cosine, which the store then computes for the best candidates (docs/search.md).
 *
 * The module is one function, assembled from its opcodes (common/wasm-module.ts):
 *
 *   (func $dots8 (param $rows i32) (param $count i32) (param $stride i32) (param $query i32)
 *                 (param $out i32)
 *     ;; for each of `count` rows from `rows`, `stride` bytes apart (a multiple of 16):
 *     ;;   out[row] = Σ i32x4.dot_i16x8_s(widen(row[j..j+16]), widen(query[j..j+16])), lanes added
 *   )
 *
 * Where WebAssembly SIMD is not available, the same sums are computed in JavaScript.
 */
export class Int8Rows {
  /** Bytes per row: the dimensions, rounded up to a multiple of 16 (zeros after). */
  readonly stride: number;
  private readonly memory: WebAssembly.Memory | undefined;
  private readonly dots: DotsFunction | undefined;
  private bytes: Int8Array;
  private outs: Int32Array;
  private scales = new Float32Array(0);
  private rowCapacity = 0;

  /** `simd: false` computes in JavaScript even where WebAssembly SIMD is available. */
  constructor(
    readonly dimensions: number,
    options: { simd?: boolean } = {},
  ) {
    this.stride = Math.ceil(dimensions / 16) * 16;
    const module = options.simd !== false && this.stride <= MAX_QUERY_BYTES ? dotsModule() : null;
    if (module) {
      this.memory = new WebAssembly.Memory({ initial: 1 });
      const instance = new WebAssembly.Instance(module, { env: { memory: this.memory } });
      this.dots = instance.exports.dots8 as DotsFunction;
    }
    this.bytes = new Int8Array(this.memory ? this.memory.buffer : new ArrayBuffer(0));
    this.outs = new Int32Array(this.memory ? this.memory.buffer : new ArrayBuffer(0));
  }

  /** Whether the products are computed with WebAssembly SIMD. */
  get simd(): boolean {
    return this.dots !== undefined;
  }

  /** Bytes the rows take (their room included). */
  get byteLength(): number {
    return this.rowCapacity * (this.stride + 4);
  }

  /** Writes `vector` (of unit length) quantized as row `row`, growing the rows when needed. */
  set(row: number, vector: Float32Array): void {
    if (row >= this.rowCapacity) this.grow(Math.max(1024, Math.ceil((row + 1) * 1.5)));
    const at = this.rowStart(row);
    const scale = quantize(vector, this.dimensions, this.bytes, at);
    this.scales[row] = scale;
  }

  /**
   * Calls `each(row, score)` with the approximate dot product of `query` and every row below
   * `rows`, in row order.
   */
  scores(query: Float32Array, rows: number, each: (row: number, score: number) => void): void {
    rows = Math.min(rows, this.rowCapacity);
    const q = new Int8Array(this.stride);
    const queryScale = quantize(query, this.dimensions, q, 0);
    if (this.dots === undefined) {
      for (let row = 0; row < rows; row++)
        each(row, this.dotAt(q, row) * queryScale * this.scales[row]);
      return;
    }
    this.bytes.set(q, QUERY_AT);
    for (let first = 0; first < rows; first += CHUNK_ROWS) {
      const count = Math.min(CHUNK_ROWS, rows - first);
      this.dots(this.rowStart(first), count, this.stride, QUERY_AT, OUT_AT);
      const outs = this.outs;
      const scales = this.scales;
      for (let i = 0; i < count; i++) {
        each(first + i, outs[OUT_AT / 4 + i] * queryScale * scales[first + i]);
      }
    }
  }

  /** The approximate dot product of `query` and one row (for a filter's few rows). */
  score(query: Float32Array, row: number): number {
    const q = new Int8Array(this.stride);
    const queryScale = quantize(query, this.dimensions, q, 0);
    return this.dotAt(q, row) * queryScale * this.scales[row];
  }

  private dotAt(q: Int8Array, row: number): number {
    const at = this.rowStart(row);
    const bytes = this.bytes;
    let sum = 0;
    for (let d = 0; d < this.dimensions; d++) sum += q[d] * bytes[at + d];
    return sum;
  }

  private rowStart(row: number): number {
    return (this.memory ? ROWS_AT : 0) + row * this.stride;
  }

  private grow(rows: number): void {
    if (this.memory) {
      const bytes = ROWS_AT + rows * this.stride;
      const pages = Math.ceil(bytes / PAGE_BYTES) - this.memory.buffer.byteLength / PAGE_BYTES;
      if (pages > 0) this.memory.grow(pages);
      this.bytes = new Int8Array(this.memory.buffer);
      this.outs = new Int32Array(this.memory.buffer);
    } else {
      const grown = new Int8Array(rows * this.stride);
      grown.set(this.bytes);
      this.bytes = grown;
    }
    const scales = new Float32Array(rows);
    scales.set(this.scales);
    this.scales = scales;
    this.rowCapacity = rows;
  }
}

/** Writes `vector` as signed bytes at `into[at]` (its largest component ±127); returns the scale. */
function quantize(vector: Float32Array, dimensions: number, into: Int8Array, at: number): number {
  let largest = 0;
  for (let d = 0; d < dimensions; d++) largest = Math.max(largest, Math.abs(vector[d]));
  const scale = largest > 0 ? largest / 127 : 0;
  for (let d = 0; d < dimensions; d++) {
    into[at + d] = scale > 0 ? Math.round(vector[d] / scale) : 0;
  }
  return scale;
}

const {
  pageBytes: PAGE_BYTES,
  queryAt: QUERY_AT,
  outAt: OUT_AT,
  chunkRows: CHUNK_ROWS,
  rowsAt: ROWS_AT,
} = DOTS_LAYOUT;
const MAX_QUERY_BYTES = DOTS_LAYOUT.maxQueryBytes;

let module8: WebAssembly.Module | null | undefined;

function dotsModule(): WebAssembly.Module | null {
  if (module8 === undefined) module8 = compiled(dots8Bytes());
  return module8;
}

/** The binary of the module described above (WebAssembly 1.0 with the SIMD proposal). */
export function dots8Bytes(): Uint8Array {
  // Parameters 0–4: rows, count, stride, query, out; locals 5: row, 6: byte in row, 7: sums.
  const [rows, count, stride, query, out, row, j, sums] = [0, 1, 2, 3, 4, 5, 6, 7];
  const widenedProduct = (widen: readonly number[]) => [
    op.get,
    rows,
    op.get,
    j,
    op.i32Add,
    ...simd.load,
    ...widen,
    op.get,
    query,
    op.get,
    j,
    op.i32Add,
    ...simd.load,
    ...widen,
    ...simd.i32x4DotI16x8,
    ...simd.i32x4Add,
  ];
  // prettier-ignore
  const code = [
    ...vector([[2, I32], [1, V128]]),
    op.block, op.emptyType,
    op.loop, op.emptyType,
    op.get, row, op.get, count, op.i32GeU, op.brIf, 1,
    ...simd.zero, op.set, sums,
    op.i32Const, 0, op.set, j,
    op.loop, op.emptyType,
    op.get, sums,
    ...widenedProduct(simd.i16x8ExtendLowI8x16),
    ...widenedProduct(simd.i16x8ExtendHighI8x16),
    op.set, sums,
    op.get, j, op.i32Const, 16, op.i32Add, op.tee, j, op.get, stride, op.i32LtU, op.brIf, 0,
    op.end,
    op.get, out, op.get, row, op.i32Const, 2, op.i32Shl, op.i32Add,
    op.get, sums, ...simd.i32x4Lane(0), op.get, sums, ...simd.i32x4Lane(1), op.i32Add,
    op.get, sums, ...simd.i32x4Lane(2), op.i32Add, op.get, sums, ...simd.i32x4Lane(3), op.i32Add,
    op.i32Store, 2, 0,
    op.get, rows, op.get, stride, op.i32Add, op.set, rows,
    op.get, row, op.i32Const, 1, op.i32Add, op.set, row,
    op.br, 0,
    op.end,
    op.end,
    op.end,
  ];
  return oneFunctionModule('dots8', code);
}
