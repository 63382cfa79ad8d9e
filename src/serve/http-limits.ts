// What the serving thread takes on at once. Its heap is capped (serving-client.ts), and a lookup
// of 1,000 long values holds several times its body in it while it is parsed, looked up and
// answered: 40 such requests at once ran the heap out and took the daemon down. So lookups are
// admitted against a budget of requests and body bytes in flight, and whatever is beyond it is
// answered 503 with Retry-After at once, without being held; connections (in all and per address)
// and the time a client may take to send its headers and body are bounded too (slowloris). The
// DNS primary's TCP bytes count in the same budget (dns/tcp-session.ts).
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** Lookups in flight at once: small GETs interleave with large POSTs (lookups yield between slices). */
export const MAX_LOOKUPS_IN_FLIGHT = 16;
/**
 * Request body bytes held at once, from the first byte read until the answer is sent: one lookup
 * of the largest size (4 MiB) and smaller ones beside it. Measured with 4 MiB requests of 1,000
 * URLs matching nothing: ten at once exhausted the thread's 32 MB heap, six did not. One at a time
 * leaves room for one whose answer lists the most it may (MAX_LISTED_CONTENT_CHARS).
 */
export const MAX_BODY_BYTES_IN_FLIGHT = 6 * 1024 * 1024;
/** Seconds a refused client is asked to wait (Retry-After): a large lookup is answered in well under that. */
export const RETRY_AFTER_SECONDS = 1;

/** Connections open at once; beyond this the server drops new ones until some close. */
export const MAX_CONNECTIONS = 256;
/** ...and from one address: one client cannot take every place (the probes come from another). */
export const MAX_CONNECTIONS_PER_ADDRESS = 128;
/** A client has this long to send its request headers... */
export const HEADERS_TIMEOUT_MS = 5_000;
/** ...and this long for the whole request, body included (4 MiB at ~150 KB/s). */
export const REQUEST_TIMEOUT_MS = 30_000;
/** A connection with nothing sent either way for this long is closed (a client that stops reading). */
export const IDLE_TIMEOUT_MS = 30_000;
/** How often the server checks the two timeouts above (Node's default, 30 s, let a slow client stay 60-90 s). */
export const TIMEOUT_CHECK_INTERVAL_MS = 1_000;

/** Closes, as it is accepted, a connection from an address that already holds `cap` of the server's. */
export function capConnectionsPerAddress(server: Server, cap: number = MAX_CONNECTIONS_PER_ADDRESS): void {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const held = open.get(address) ?? 0;
    if (held >= cap) {
      socket.destroy();
      return;
    }
    open.set(address, held + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
  });
}

/** One admitted request's claim on the budget; release() is safe to call more than once. */
export interface Admission {
  /** Claims `bytes` more of the body; false (and nothing claimed) when they do not fit. */
  claim(bytes: number): boolean;
  release(): void;
}

/**
 * The budget of requests and bytes in flight on the serving thread: lookups' and feeds' requests
 * and bodies, and the DNS primary's TCP bytes (queries read ahead, answers not yet flushed), which
 * it holds with take() and give() (dns/tcp-session.ts): DNS work and lookups share one heap.
 */
export class InFlightBudget {
  #requests = 0;
  #bytes = 0;
  /** Called once the bytes are back under the limit (DNS connections that stopped reading). */
  #waiting: Array<() => void> = [];

  constructor(
    readonly maxRequests: number = MAX_LOOKUPS_IN_FLIGHT,
    readonly maxBytes: number = MAX_BODY_BYTES_IN_FLIGHT,
  ) {}

  get requests(): number {
    return this.#requests;
  }

  get bytes(): number {
    return this.#bytes;
  }

  /** Holds `bytes` more, whatever they come to (they are read already); false when that is over the limit. */
  take(bytes: number): boolean {
    this.#bytes += bytes;
    return this.#bytes <= this.maxBytes;
  }

  hasRoom(): boolean {
    return this.#bytes < this.maxBytes;
  }

  give(bytes: number): void {
    this.#bytes -= bytes;
    this.#wakeIfBelow();
  }

  /** Calls `listener` once, as soon as the bytes held are back under the limit. */
  whenBelow(listener: () => void): void {
    this.#waiting.push(listener);
    this.#wakeIfBelow();
  }

  #wakeIfBelow(): void {
    if (this.#bytes >= this.maxBytes || this.#waiting.length === 0) return;
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const listener of waiting) listener();
  }

  /** An admission, or undefined when as many requests as allowed are already in flight. */
  admit(): Admission | undefined {
    if (this.#requests >= this.maxRequests) return undefined;
    this.#requests += 1;
    let claimed = 0;
    let released = false;
    return {
      claim: (bytes) => {
        if (released || this.#bytes + bytes > this.maxBytes) return false;
        this.#bytes += bytes;
        claimed += bytes;
        return true;
      },
      release: () => {
        if (released) return;
        released = true;
        this.#requests -= 1;
        this.#bytes -= claimed;
        this.#wakeIfBelow();
      },
    };
  }
}
