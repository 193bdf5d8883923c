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
 * Vectors of one length back to back in WebAssembly memory, and the dot product of each with
 * a query computed with 128-bit SIMD (four float32 lanes at a time): the exact scan of the
 * semantic side, some ten times faster than the same loop in JavaScript (0.3 ms against 3 ms
 * for 30 000 vectors of 64 dimensions here), so it runs on the request's own thread.
 *
 * The module is one function, assembled below from its opcodes (no toolchain is needed to
 * build it, and nothing is loaded at run time):
 *
 *   (func $dots (param $rows i32) (param $count i32) (param $stride i32) (param $query i32)
 *                (param $out i32)
 *     ;; for each of `count` rows from `rows`, `stride` bytes apart (a multiple of 16):
 *     ;;   out[row] = Σ f32x4.mul(row[j..j+4], query[j..j+4]), lanes added at the end
 *   )
 *
 * Where WebAssembly SIMD is not available, the same products are computed in JavaScript.
 */
export class VectorTable {
  /** Floats per row: the dimensions, rounded up to a multiple of four (zeros after). */
  readonly stride: number;
  private readonly memory: WebAssembly.Memory | undefined;
  private readonly dots: DotsFunction | undefined;
  /** The rows, when JavaScript computes the products (or a view of the WebAssembly memory). */
  private floats: Float32Array;
  private rowCapacity = 0;

  /** `simd: false` computes in JavaScript even where WebAssembly SIMD is available. */
  constructor(
    readonly dimensions: number,
    options: { simd?: boolean } = {},
  ) {
    this.stride = Math.ceil(dimensions / 4) * 4;
    const module = options.simd !== false && this.stride <= MAX_QUERY_FLOATS ? dotsModule() : null;
    if (module) {
      this.memory = new WebAssembly.Memory({ initial: 1 });
      const instance = new WebAssembly.Instance(module, { env: { memory: this.memory } });
      this.dots = instance.exports.dots as DotsFunction;
    }
    this.floats = new Float32Array(this.memory ? this.memory.buffer : new ArrayBuffer(0));
  }

  /** Whether the products are computed with WebAssembly SIMD. */
  get simd(): boolean {
    return this.dots !== undefined;
  }

  /** Rows the table holds room for. */
  get capacity(): number {
    return this.rowCapacity;
  }

  /** Writes row `row` (growing the table when needed). */
  set(row: number, vector: Float32Array): void {
    if (row >= this.rowCapacity) this.grow(Math.max(64, (row + 1) * 2));
    const at = this.rowStart(row);
    this.floats.set(vector.subarray(0, this.dimensions), at);
  }

  /** Row `row` as held (a view, valid until the table next grows); zeros if never written. */
  row(row: number): Float32Array {
    if (row >= this.rowCapacity) return new Float32Array(this.dimensions);
    const at = this.rowStart(row);
    return this.floats.subarray(at, at + this.dimensions);
  }

  /**
   * Calls `each(row, score)` with the dot product of `query` and every row below `rows`, in
   * row order.
   */
  scores(query: Float32Array, rows: number, each: (row: number, score: number) => void): void {
    rows = Math.min(rows, this.rowCapacity);
    if (this.dots === undefined) {
      const v = this.floats;
      const s = this.stride;
      for (let row = 0; row < rows; row++) {
        let sum = 0;
        for (let j = 0, at = row * s; j < this.dimensions; j++, at++) sum += query[j] * v[at];
        each(row, sum);
      }
      return;
    }
    const floats = this.floats;
    floats.fill(0, QUERY_AT / 4, QUERY_AT / 4 + this.stride);
    floats.set(query.subarray(0, this.dimensions), QUERY_AT / 4);
    for (let first = 0; first < rows; first += CHUNK_ROWS) {
      const count = Math.min(CHUNK_ROWS, rows - first);
      this.dots(ROWS_AT + first * this.stride * 4, count, this.stride * 4, QUERY_AT, OUT_AT);
      for (let i = 0; i < count; i++) each(first + i, floats[OUT_AT / 4 + i]);
    }
  }

  private rowStart(row: number): number {
    return (this.memory ? ROWS_AT / 4 : 0) + row * this.stride;
  }

  private grow(rows: number): void {
    if (this.memory) {
      const bytes = ROWS_AT + rows * this.stride * 4;
      const pages = Math.ceil(bytes / PAGE_BYTES) - this.memory.buffer.byteLength / PAGE_BYTES;
      if (pages > 0) this.memory.grow(pages);
      this.floats = new Float32Array(this.memory.buffer);
    } else {
      const grown = new Float32Array(rows * this.stride);
      grown.set(this.floats);
      this.floats = grown;
    }
    this.rowCapacity = rows;
  }
}

const {
  pageBytes: PAGE_BYTES,
  queryAt: QUERY_AT,
  outAt: OUT_AT,
  chunkRows: CHUNK_ROWS,
  rowsAt: ROWS_AT,
} = DOTS_LAYOUT;
const MAX_QUERY_FLOATS = DOTS_LAYOUT.maxQueryBytes / 4;

let dots: WebAssembly.Module | null | undefined;

/** The compiled module, or null where this runtime has no WebAssembly SIMD. */
function dotsModule(): WebAssembly.Module | null {
  if (dots === undefined) dots = compiled(dotsModuleBytes());
  return dots;
}

/** The binary of the module described above (WebAssembly 1.0 with the SIMD proposal). */
export function dotsModuleBytes(): Uint8Array {
  // Parameters 0–4: rows, count, stride, query, out; locals 5: row, 6: byte in row, 7: sums.
  const [rows, count, stride, query, out, row, j, sums] = [0, 1, 2, 3, 4, 5, 6, 7];
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
    op.get, rows, op.get, j, op.i32Add, ...simd.load,
    op.get, query, op.get, j, op.i32Add, ...simd.load,
    ...simd.f32x4Mul, ...simd.f32x4Add, op.set, sums,
    op.get, j, op.i32Const, 16, op.i32Add, op.tee, j, op.get, stride, op.i32LtU, op.brIf, 0,
    op.end,
    op.get, out, op.get, row, op.i32Const, 2, op.i32Shl, op.i32Add,
    op.get, sums, ...simd.f32x4Lane(0), op.get, sums, ...simd.f32x4Lane(1), op.f32Add,
    op.get, sums, ...simd.f32x4Lane(2), op.f32Add, op.get, sums, ...simd.f32x4Lane(3), op.f32Add,
    op.f32Store, 2, 0,
    op.get, rows, op.get, stride, op.i32Add, op.set, rows,
    op.get, row, op.i32Const, 1, op.i32Add, op.set, row,
    op.br, 0,
    op.end,
    op.end,
    op.end,
  ];
  return oneFunctionModule('dots', code);
}
