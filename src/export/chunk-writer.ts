// Writes an export's chunks to a file: strings encoded straight into a few reused buffers, bytes
// copied into them, each buffer hashed (comment chunks left out) and written at its offset while
// the next one fills. Two things this avoids, both measured on a 1M-threat JSONL export
// (docs/performance.md): awaiting each write before rendering on (the process sat idle ~1.2 s of
// ~9 s; STIX ~2.7 s), and a new buffer per batch or block (V8 frees those only at its next full
// collection: 50 MB and more of them waited there, peak RSS 163 MB instead of ~100 MB).
import { createHash } from 'node:crypto';
import type { FileHandle } from 'node:fs/promises';

/** Each buffer's size... */
const BUFFER_BYTES = 128 * 1024;
/** ...and how many: as many writes are under way at once. */
const BUFFERS = 4;
/** A buffer filled this far is written (strings are rows: most fit in what is left). */
const FLUSH_AT = BUFFER_BYTES / 2;

interface Slot {
  readonly buffer: Buffer;
  /** The write of this buffer's last contents, done before it is filled again. */
  written: Promise<void>;
}

export class ChunkWriter {
  /** Bytes written (or under way) so far. */
  bytes = 0;
  readonly #handle: FileHandle;
  /** null: nothing is hashed; a string: chunks starting with it are left out of the hash. */
  readonly #commentPrefix: string | null | undefined;
  readonly #hash = createHash('sha256');
  readonly #slots: Slot[] = Array.from({ length: BUFFERS }, () => ({ buffer: Buffer.allocUnsafeSlow(BUFFER_BYTES), written: Promise.resolve() }));
  #slot = 0;
  /** Bytes filled in the current buffer, and how many of them are hashed already. */
  #filled = 0;
  #hashed = 0;
  #failure: { error: unknown } | undefined;

  constructor(handle: FileHandle, commentPrefix: string | null | undefined) {
    this.#handle = handle;
    this.#commentPrefix = commentPrefix;
  }

  /** Adds the string when the current buffer has room for it and is not due to be written yet; false: use add(). */
  tryAdd(chunk: string): boolean {
    if (this.#filled >= FLUSH_AT || chunk.length * 3 > BUFFER_BYTES - this.#filled) return false;
    this.#put(chunk);
    return true;
  }

  async add(chunk: string): Promise<void> {
    if (this.tryAdd(chunk)) return;
    await this.flush();
    if (chunk.length * 3 <= BUFFER_BYTES) return this.#put(chunk);
    // Longer than a buffer (a very long URL, say): encoded on its own. Comment lines are short.
    if (this.#isComment(chunk)) throw new Error(`a comment line of ${chunk.length} characters`);
    await this.addBytes(Buffer.from(chunk, 'utf8'));
  }

  /** Copies bytes in (the caller may reuse them once this resolves); record formats' blocks have no comment lines. */
  async addBytes(chunk: Uint8Array): Promise<void> {
    for (let at = 0; at < chunk.length; ) {
      const room = BUFFER_BYTES - this.#filled;
      const piece = Math.min(room, chunk.length - at);
      this.#current().set(chunk.subarray(at, at + piece), this.#filled);
      this.#filled += piece;
      at += piece;
      if (this.#filled === BUFFER_BYTES) await this.flush();
    }
  }

  /** Hashes and writes the current buffer, then waits until the next one is free. */
  async flush(): Promise<void> {
    this.#throwIfFailed();
    if (this.#filled === 0) return;
    this.#hashFilled();
    const slot = this.#slots[this.#slot] as Slot;
    const length = this.#filled;
    slot.written = this.#handle.write(slot.buffer, 0, length, this.bytes).then(
      () => undefined,
      (error: unknown) => {
        this.#failure ??= { error };
      },
    );
    this.bytes += length;
    this.#slot = (this.#slot + 1) % BUFFERS;
    this.#filled = 0;
    this.#hashed = 0;
    await (this.#slots[this.#slot] as Slot).written;
    this.#throwIfFailed();
  }

  /** Writes what is left and waits for every write; throws the first that failed. */
  async finish(): Promise<void> {
    await this.flush();
    await Promise.all(this.#slots.map((slot) => slot.written));
    this.#throwIfFailed();
  }

  digest(): string {
    return this.#hash.digest('hex');
  }

  #current(): Buffer {
    return (this.#slots[this.#slot] as Slot).buffer;
  }

  #put(chunk: string): void {
    const comment = this.#isComment(chunk);
    if (comment) this.#hashFilled();
    this.#filled += this.#current().write(chunk, this.#filled, 'utf8');
    if (comment) this.#hashed = this.#filled;
  }

  #isComment(chunk: string): boolean {
    return typeof this.#commentPrefix === 'string' && chunk.startsWith(this.#commentPrefix);
  }

  #hashFilled(): void {
    if (this.#commentPrefix !== null && this.#filled > this.#hashed) this.#hash.update(this.#current().subarray(this.#hashed, this.#filled));
    this.#hashed = this.#filled;
  }

  #throwIfFailed(): void {
    if (this.#failure !== undefined) throw this.#failure.error;
  }
}
