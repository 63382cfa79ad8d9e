// One DNS-over-TCP connection of the primary, within bounds decided before any work is queued
// (RFC 7766 section 6.2: a server must not let one connection hold unbounded resources): messages
// are read ahead of the one being answered up to a few, and no further while the answers are not
// read (reading stops; the client's own writes then stall); every byte held, read or to be sent,
// counts in the serving thread's memory share; a connection that sends no complete query for a
// while, or does not read what it is sent, is closed. One client pipelining queries and never
// reading its answers grew the thread's heap until it ran out (the daemon exited 1).
import type { Socket } from 'node:net';

/** The bytes the serving thread holds for all its work (InFlightBudget): lookups, feeds, DNS. */
export interface MemoryShare {
  /** Holds `bytes` more (they are read already, or must be sent): false when that is over the limit. */
  take(bytes: number): boolean;
  give(bytes: number): void;
  /** Whether the share is under its limit: reading goes on only then. */
  hasRoom(): boolean;
  /** Calls back once, when the share is under its limit again. */
  whenBelow(listener: () => void): void;
}

export interface TcpSessionLimits {
  /** A connection with nothing queued or being answered must send a whole query within this; bytes that trickle do not count. */
  readonly idleMs: number;
  /** The client must read each answer's bytes within this (the socket drains). */
  readonly writeStallMs: number;
  /** Queries read ahead of the one being answered. */
  readonly maxQueued: number;
  /** Queries answered before the connection is ended (undefined: no limit). */
  readonly maxQueries?: number | undefined;
  /** Closed after this long, whatever it does (undefined: no limit). */
  readonly lifetimeMs?: number | undefined;
}

/** Why the primary closed a connection itself (threat_mirror_dns_tcp_closed_total{reason}). */
export type CutOff = 'idle' | 'slow-reader' | 'lifetime';

/** Sends one message (framed); false when the connection is gone. */
export type SendMessage = (message: Buffer) => Promise<boolean>;

/** Answers one query on the connection, in order; a throw ends the connection (the caller's guard answers first). */
export type AnswerMessage = (message: Buffer, send: SendMessage) => Promise<void>;

/** A query read ahead is held as at least this much: its bytes are few, its decoded packet and answer are not. */
const MIN_HELD_PER_QUERY = 512;

export interface TcpSessionParts {
  readonly memory: MemoryShare;
  readonly answer: AnswerMessage;
  /** Told each time the session closes the connection itself, and why. */
  readonly cutOff: (reason: CutOff) => void;
}

export function serveTcpSession(socket: Socket, limits: TcpSessionLimits, parts: TcpSessionParts): void {
  new TcpSession(socket, limits, parts).start();
}

class TcpSession {
  readonly #socket: Socket;
  readonly #limits: TcpSessionLimits;
  readonly #memory: MemoryShare;
  readonly #answer: AnswerMessage;
  readonly #cutOff: (reason: CutOff) => void;
  /** Bytes read and not yet framed into a query. */
  #unframed: Buffer = Buffer.alloc(0);
  readonly #queued: Buffer[] = [];
  #answering = false;
  #answered = 0;
  /** What this connection holds in the memory share now. */
  #held = 0;
  #idle: NodeJS.Timeout | undefined;
  /** Paused until the share has room again (a callback is registered). */
  #waitingForRoom = false;
  #lifetime: NodeJS.Timeout | undefined;
  readonly #output: HeldOutput;

  constructor(socket: Socket, limits: TcpSessionLimits, parts: TcpSessionParts) {
    this.#socket = socket;
    this.#limits = limits;
    this.#memory = parts.memory;
    this.#answer = parts.answer;
    this.#cutOff = parts.cutOff;
    this.#output = new HeldOutput(parts.memory, socket);
  }

  start(): void {
    const socket = this.#socket;
    socket.on('error', () => socket.destroy());
    socket.on('close', () => this.#closed());
    socket.on('data', (chunk: Buffer) => this.#read(chunk));
    if (this.#limits.lifetimeMs !== undefined) this.#lifetime = setTimeout(() => this.#close('lifetime'), this.#limits.lifetimeMs);
    this.#armIdle();
  }

  #read(chunk: Buffer): void {
    // Ended after its last query: what more it sends is not read (the kernel holds it until the connection goes).
    if (this.#socket.writableEnded) return;
    this.#unframed = this.#unframed.length === 0 ? chunk : Buffer.concat([this.#unframed, chunk]);
    this.#frame();
    this.#account();
    this.#throttle();
    void this.#next();
  }

  /** Moves whole messages from the bytes read to the queue, up to its bound; the rest waits unread. */
  #frame(): void {
    let rest = this.#unframed;
    while (rest.length >= 2 && this.#queued.length < this.#limits.maxQueued) {
      const length = rest.readUInt16BE(0);
      if (rest.length < 2 + length) break;
      // A copy: the queue must not keep the whole chunk it came in alive.
      this.#queued.push(Buffer.from(rest.subarray(2, 2 + length)));
      rest = rest.subarray(2 + length);
    }
    if (rest !== this.#unframed) this.#unframed = Buffer.from(rest);
    if (this.#queued.length > 0) this.#disarmIdle();
  }

  /** Reading goes on only while the queue has room and the thread's share is under its limit. */
  #throttle(): void {
    const socket = this.#socket;
    if (socket.destroyed) return;
    if (this.#queued.length >= this.#limits.maxQueued) {
      socket.pause();
      return;
    }
    if (!this.#memory.hasRoom()) {
      socket.pause();
      if (!this.#waitingForRoom) {
        this.#waitingForRoom = true;
        this.#memory.whenBelow(() => {
          this.#waitingForRoom = false;
          this.#throttle();
        });
      }
      return;
    }
    socket.resume();
  }

  /** Answers the queued queries one at a time, in order. */
  async #next(): Promise<void> {
    if (this.#answering || this.#socket.destroyed || this.#socket.writableEnded) return;
    const message = this.#queued.shift();
    if (message === undefined) return this.#armIdle();
    this.#answering = true;
    try {
      await this.#answer(message, (bytes) => this.#send(bytes));
    } catch {
      this.#socket.destroy();
      return;
    } finally {
      this.#answering = false;
    }
    this.#answered += 1;
    if (this.#limits.maxQueries !== undefined && this.#answered >= this.#limits.maxQueries) {
      this.#socket.pause();
      this.#queued.length = 0;
      this.#unframed = Buffer.alloc(0);
      this.#account();
      this.#socket.end();
      return;
    }
    this.#frame();
    this.#account();
    this.#throttle();
    return this.#next();
  }

  #send(message: Buffer): Promise<boolean> {
    return sendTcpMessage(this.#socket, message, this.#output, { ms: this.#limits.writeStallMs, onStall: () => this.#cutOff('slow-reader') });
  }

  /** Holds in the share what the connection holds now: bytes not yet framed, and queued queries. */
  #account(): void {
    const held = this.#socket.destroyed ? 0 : this.#unframed.length + this.#queued.reduce((sum, message) => sum + Math.max(message.length, MIN_HELD_PER_QUERY), 0);
    if (held > this.#held) this.#memory.take(held - this.#held);
    else if (held < this.#held) this.#memory.give(this.#held - held);
    this.#held = held;
  }

  #armIdle(): void {
    if (this.#idle !== undefined || this.#socket.destroyed) return;
    this.#idle = setTimeout(() => this.#close('idle'), this.#limits.idleMs);
  }

  #disarmIdle(): void {
    clearTimeout(this.#idle);
    this.#idle = undefined;
  }

  #close(reason: CutOff): void {
    if (this.#socket.destroyed) return;
    this.#cutOff(reason);
    this.#socket.destroy();
  }

  #closed(): void {
    this.#disarmIdle();
    clearTimeout(this.#lifetime);
    this.#queued.length = 0;
    this.#unframed = Buffer.alloc(0);
    this.#account();
  }
}

/**
 * Writes one message (two-byte length first) and waits for the socket to drain: true once it has,
 * false when the socket is gone or does not drain within `stall.ms` (a client that reads none of
 * it is cut off). Its bytes are held in the share until they have left the process (HeldOutput). The wait's
 * listeners go when it ends: a race of once('drain') and once('close') left a 'close' and an
 * 'error' listener behind at every wait (Node warned of a leak after 10, in the first AXFR of a 1M
 * zone: 754 messages).
 */
export function sendTcpMessage(socket: Socket, message: Buffer, output: HeldOutput, stall: { readonly ms: number; readonly onStall?: () => void }): Promise<boolean> {
  if (socket.destroyed) return Promise.resolve(false);
  const framed = Buffer.allocUnsafe(2 + message.length);
  framed.writeUInt16BE(message.length, 0);
  message.copy(framed, 2);
  output.hold(framed.length);
  if (socket.write(framed, () => output.written(framed.length))) return Promise.resolve(true);
  return new Promise<boolean>((resolve) => {
    const done = (): void => {
      clearTimeout(timer);
      socket.off('drain', done);
      socket.off('close', done);
      resolve(!socket.destroyed);
    };
    const timer = setTimeout(() => {
      stall.onStall?.();
      socket.destroy();
    }, stall.ms);
    socket.on('drain', done);
    socket.on('close', done);
  });
}

/**
 * A connection's answer bytes not yet handed to the kernel, held in the memory share: each write's
 * given back once written, and what is left when the connection closes (a write cut short may
 * never call back). One listener per connection, not one per write.
 */
export class HeldOutput {
  readonly #memory: MemoryShare;
  #bytes = 0;
  #closed = false;

  constructor(memory: MemoryShare, socket: Socket) {
    this.#memory = memory;
    socket.once('close', () => {
      this.#closed = true;
      this.#memory.give(this.#bytes);
      this.#bytes = 0;
    });
  }

  hold(bytes: number): void {
    this.#bytes += bytes;
    this.#memory.take(bytes);
  }

  written(bytes: number): void {
    if (this.#closed) return;
    this.#bytes -= bytes;
    this.#memory.give(bytes);
  }
}
