/**
 * The rows of PostgreSQL's binary COPY output (`COPY (...) TO STDOUT (FORMAT binary)`), read
 * as the chunks arrive: each row's fields as bytes of their own, `null` for NULL. Binary COPY
 * is how large `bytea` values are read as they are stored: a query answers them in text, as
 * hexadecimal (twice the bytes, then a string of them to decode on the event loop), and the
 * driver has no binary mode for rows.
 *
 * The format: an 11-byte signature, a 32-bit flags word and a header extension (its length
 * then its bytes); then each row as a 16-bit field count (-1 ends the data) and each field as
 * a 32-bit length (-1 for NULL) and its bytes; every number big-endian.
 */
export async function* binaryCopyRows(
  chunks: AsyncIterable<Buffer>,
): AsyncGenerator<Array<Buffer | null>> {
  const input = new ChunkReader(chunks[Symbol.asyncIterator]());
  const header = await input.take(SIGNATURE.length + 8);
  if (!header.subarray(0, SIGNATURE.length).equals(SIGNATURE)) {
    throw new Error('not the output of a binary COPY');
  }
  await input.take(header.readUInt32BE(SIGNATURE.length + 4));
  for (;;) {
    const fields = (await input.take(2)).readInt16BE(0);
    if (fields === -1) return;
    const row: Array<Buffer | null> = [];
    for (let i = 0; i < fields; i++) {
      const length = (await input.take(4)).readInt32BE(0);
      row.push(length === -1 ? null : await input.take(length));
    }
    yield row;
  }
}

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** Bytes taken from a stream of chunks, each taking into memory of its own. */
class ChunkReader {
  private chunk: Buffer = Buffer.alloc(0);
  private at = 0;

  constructor(private readonly chunks: AsyncIterator<Buffer>) {}

  async take(length: number): Promise<Buffer> {
    const taken = Buffer.allocUnsafeSlow(length);
    let filled = 0;
    while (filled < length) {
      if (this.at === this.chunk.length) {
        const next = await this.chunks.next();
        if (next.done) throw new Error('the COPY output ended inside a row');
        this.chunk = next.value;
        this.at = 0;
      }
      const count = Math.min(length - filled, this.chunk.length - this.at);
      this.chunk.copy(taken, filled, this.at, this.at + count);
      filled += count;
      this.at += count;
    }
    return taken;
  }
}
