/**
 * The few pieces it takes to write a WebAssembly module by hand: the binary format's integers,
 * vectors, sections and names, the opcodes the scans of this code base use, and the module
 * around one exported function. The scans (semantic/vector-table.ts, stores/int8-rows.ts) are
 * one short loop each, written as their opcodes: no toolchain is needed to build them and
 * nothing is loaded at run time.
 */
export const I32 = 0x7f;
export const V128 = 0x7b;

export const op = {
  block: 0x02,
  loop: 0x03,
  end: 0x0b,
  br: 0x0c,
  brIf: 0x0d,
  get: 0x20,
  set: 0x21,
  tee: 0x22,
  i32Store: 0x36,
  f32Store: 0x38,
  i32Const: 0x41,
  i32LtU: 0x49,
  i32GeU: 0x4f,
  i32Add: 0x6a,
  i32Shl: 0x74,
  f32Add: 0x92,
  emptyType: 0x40,
} as const;

/** SIMD instructions: the 0xfd prefix and their number (LEB128). */
export const simd = {
  /** v128.load, aligned to 16 bytes, offset 0. */
  load: [0xfd, 0x00, 4, 0],
  zero: [0xfd, 0x0c, ...new Array<number>(16).fill(0)],
  f32x4Mul: [0xfd, 0xe6, 0x01],
  f32x4Add: [0xfd, 0xe4, 0x01],
  f32x4Lane: (n: number) => [0xfd, 0x1f, n],
  i16x8ExtendLowI8x16: [0xfd, 0x87, 0x01],
  i16x8ExtendHighI8x16: [0xfd, 0x88, 0x01],
  i32x4DotI16x8: [0xfd, 0xba, 0x01],
  i32x4Add: [0xfd, 0xae, 0x01],
  i32x4Lane: (n: number) => [0xfd, 0x1b, n],
} as const;

export function leb128(value: number): number[] {
  const bytes: number[] = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value !== 0) byte |= 0x80;
    bytes.push(byte);
  } while (value !== 0);
  return bytes;
}

export function vector(items: number[][]): number[] {
  return [...leb128(items.length), ...items.flat()];
}

function section(id: number, content: number[]): number[] {
  return [id, ...leb128(content.length), ...content];
}

function name(text: string): number[] {
  const bytes = [...Buffer.from(text, 'utf8')];
  return [...leb128(bytes.length), ...bytes];
}

/**
 * A module importing its memory (`env.memory`) and exporting one function of five i32
 * parameters and no result, whose body is `code` (its locals first).
 */
export function oneFunctionModule(exported: string, code: number[]): Uint8Array {
  return Uint8Array.from([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vector([[0x60, 5, I32, I32, I32, I32, I32, 0]])),
    ...section(2, vector([[...name('env'), ...name('memory'), 0x02, 0x00, 1]])),
    ...section(3, vector([[0]])),
    ...section(7, vector([[...name(exported), 0x00, 0]])),
    ...section(10, vector([[...leb128(code.length), ...code]])),
  ]);
}

/** The compiled module of `bytes`, or null where this runtime has no WebAssembly SIMD. */
export function compiled(bytes: Uint8Array): WebAssembly.Module | null {
  return WebAssembly.validate(bytes) ? new WebAssembly.Module(bytes) : null;
}

/**
 * The memory layout both scans use (vector-table.ts over floats, int8-rows.ts over bytes): the
 * first page holds the query (up to 4 096 bytes) and one chunk's results, the rows start on
 * the second page.
 */
export const DOTS_LAYOUT = {
  pageBytes: 65536,
  queryAt: 0,
  maxQueryBytes: 4096,
  outAt: 4096,
  chunkRows: (65536 - 4096) / 4,
  rowsAt: 65536,
} as const;

/** The exported scan: `count` rows of `stride` bytes from `rows`, against `query`, into `out`. */
export type DotsFunction = (
  rows: number,
  count: number,
  stride: number,
  query: number,
  out: number,
) => void;
