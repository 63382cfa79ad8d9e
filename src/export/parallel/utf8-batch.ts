// Strings encoded into one reused buffer as they come. Gathering a block's strings and joining
// them kept thousands alive through young-generation collections: rendering 1M JSONL rows that way
// took 12-17 s of CPU where encoding each line straight into a buffer took the same ~8 s as
// rendering without keeping anything (measured under load, docs/performance.md).

export class Utf8Batch {
  #buffer: Buffer;
  #length = 0;

  constructor(capacity: number) {
    this.#buffer = Buffer.allocUnsafeSlow(capacity);
  }

  /** Bytes gathered so far. */
  get length(): number {
    return this.#length;
  }

  add(text: string): void {
    // A UTF-16 unit is at most 3 bytes of UTF-8 (a surrogate pair, two units, is 4).
    const room = text.length * 3;
    if (this.#length + room > this.#buffer.length) this.#grow(this.#length + room);
    this.#length += this.#buffer.write(text, this.#length, 'utf8');
  }

  /** The bytes gathered, still the batch's: valid until the next add() or clear(). */
  bytes(): Buffer {
    return this.#buffer.subarray(0, this.#length);
  }

  clear(): void {
    this.#length = 0;
  }

  #grow(needed: number): void {
    const larger = Buffer.allocUnsafeSlow(Math.max(needed, 2 * this.#buffer.length));
    this.#buffer.copy(larger, 0, 0, this.#length);
    this.#buffer = larger;
  }
}
