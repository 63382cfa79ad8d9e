// What the HTTP thread tells the main thread of the /v1/* requests it answered, for /metrics:
// gathered on the thread and sent as one message a second (not one per request: at 500 lookups a
// second the main thread would otherwise take 500 messages beside the sync's work).

/** Requests answered since the last batch: how many by HTTP status, and each one's seconds. */
export interface LookupBatch {
  readonly codes: Readonly<Record<string, number>>;
  readonly seconds: readonly number[];
}

/** A batch is sent early once it holds this many durations, so a flood cannot grow it without bound. */
const MAX_BATCH = 5_000;
const SEND_EVERY_MS = 1_000;

export class LookupStats {
  readonly #send: (batch: LookupBatch) => void;
  #codes: Record<string, number> = {};
  #seconds: number[] = [];
  readonly #timer: NodeJS.Timeout;

  constructor(send: (batch: LookupBatch) => void) {
    this.#send = send;
    this.#timer = setInterval(() => this.flush(), SEND_EVERY_MS);
    this.#timer.unref();
  }

  answered(status: number, seconds: number): void {
    this.#codes[status] = (this.#codes[status] ?? 0) + 1;
    this.#seconds.push(seconds);
    if (this.#seconds.length >= MAX_BATCH) this.flush();
  }

  /** Sends what was gathered, if anything. */
  flush(): void {
    if (this.#seconds.length === 0) return;
    this.#send({ codes: this.#codes, seconds: this.#seconds });
    this.#codes = {};
    this.#seconds = [];
  }

  stop(): void {
    clearInterval(this.#timer);
    this.flush();
  }
}
