// The main thread's handle on the writer thread: starts it, and turns each kind of write
// (protocol.ts) into a message whose answer resolves a promise. Every write of a process goes
// through one of these.
import { dirname, resolve } from 'node:path';
import { Worker } from 'node:worker_threads';
import type { LookupFields } from '../../url/lookup-fields.js';
import { epochMs } from './commit-queue.js';
import type { PageInput, PageResult } from './page-writer.js';
import { type CallInput, type CallResult, START_ID, type WriterCallKind, type WriterClosed, type WriterRequest, type WriterResponse, type WriterStart, type WriterThreadData } from './protocol.js';
import type { CarriedConclusion, WindowConclusion } from './window-end.js';
import { placeTemporaryFilesBeside } from './temporary-files.js';

export interface WriterClientOptions {
  readonly dbPath: string;
  /** The largest response the sync accepts: the thread's heap must hold a few pages of it. */
  readonly maxPageBytes: number;
  /** False when a replicator does the checkpoints. */
  readonly autoCheckpoint: boolean;
  /** The start's clock (THREAT_MIRROR_NOW). */
  readonly now: string;
}

/** A page as the sync hands it over: the client derives its lookup columns. */
export type PageToWrite = Omit<PageInput, 'lookups'>;
/** A window's conclusion as the sync hands it over. */
export type ConclusionToWrite = Omit<WindowConclusion, 'lookups'>;
/** A conclusion of carried removal checks as the sync hands it over. */
export type CarriedConclusionToWrite = Omit<CarriedConclusion, 'lookups'>;

/** The calls a caller sends as they are; pages and conclusions go through writePage, concludeWindow and concludeCarried. */
export type PlainCall = Exclude<WriterCallKind, 'page' | 'conclusion' | 'carriedConclusion'>;

type Derive = (type: string, content: string) => LookupFields;

export class WriterClient {
  readonly #options: WriterClientOptions;
  /** The running thread; undefined while suspended (the next call starts another). */
  #worker: Worker | undefined;
  /** A suspension under way: calls made meanwhile wait for it, then start the next thread. */
  #suspending: Promise<void> | undefined;
  /** The last stamp of the threads before, handed to the next one (write-stamps.ts). */
  #lastStampMs = 0;
  readonly #startedAt = performance.now();
  readonly #pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  #nextId = START_ID + 1;
  #failure: Error | undefined;
  #closed = false;
  /**
   * The lookup columns' derivation, loaded at the first page rather than at start-up: the Public
   * Suffix List's ~15 ms of compiling then overlaps the requests in flight.
   */
  #derive: Derive | undefined;
  #deriving: Promise<Derive> | undefined;
  /**
   * Resolves once the thread has opened (and migrated) the file and is ready for calls; rejects
   * with why it could not. Calls sent before wait at its port, and fail with this reason if it
   * could not start.
   */
  readonly ready: Promise<WriterStart>;
  /** Resolves with why, if the thread fails or ends before close(): no write can be made after that. */
  readonly failed: Promise<Error>;
  #reportFailure: ((error: Error) => void) | undefined;

  constructor(options: WriterClientOptions) {
    this.#options = options;
    this.ready = new Promise((resolve, reject) => this.#pending.set(START_ID, { resolve: (start) => resolve(start as WriterStart), reject }));
    this.ready.catch(() => undefined);
    this.failed = new Promise((resolve) => (this.#reportFailure = resolve));
    placeTemporaryFilesBeside(dirname(resolve(options.dbPath)));
    this.#worker = this.#spawn(options.now);
  }

  /** One write, answered once it is committed. */
  call<K extends PlainCall>(kind: K, input: CallInput<K>): Promise<CallResult<K>> {
    return this.#send(kind, input) as Promise<CallResult<K>>;
  }

  /**
   * One page and its window's cursor, answered once committed. The lookup columns are derived here,
   * on the main thread, which waits on the network, rather than by the writer thread, the bottleneck
   * when the service answers fast: a 1,000,000-threat backfill at no latency, median ~20.1 s against
   * ~21.0 s over four alternating pairs (measured; docs/performance.md). Posted at once, even while
   * the thread is still starting: the port queues it serialized, off this thread's heap, and
   * delivers it in order once the thread listens.
   */
  async writePage(page: PageToWrite): Promise<PageResult> {
    // Pages handed over while it loads wait for it in the order they came; later ones do not wait.
    const derive = this.#derive ?? (await this.#loadDerive());
    return this.#send('page', { ...page, lookups: page.threats.map((threat) => derive(threat.type, threat.content)) }) as Promise<PageResult>;
  }

  /** What the sync found out about a window's removal candidates, committed at once. */
  async concludeWindow(conclusion: ConclusionToWrite): Promise<PageResult> {
    const derive = this.#derive ?? (await this.#loadDerive());
    return this.#send('conclusion', { ...conclusion, lookups: conclusion.found.map((threat) => derive(threat.type, threat.content)) }) as Promise<PageResult>;
  }

  /** What the sync found out about a window's carried removal checks, committed at once. */
  async concludeCarried(conclusion: CarriedConclusionToWrite): Promise<PageResult> {
    const derive = this.#derive ?? (await this.#loadDerive());
    return this.#send('carriedConclusion', { ...conclusion, lookups: conclusion.found.map((threat) => derive(threat.type, threat.content)) }) as Promise<PageResult>;
  }

  /**
   * Ends the thread between a daemon's runs, after the calls sent before (its isolate, its
   * connection and that connection's page cache are most of the idle daemon's memory:
   * docs/performance.md). The next call starts another thread, which takes calls in order as
   * before; resume() starts it ahead of the first. The file stays in WAL mode: the other threads'
   * read-only connections keep the -wal and -shm files open meanwhile.
   */
  async suspend(): Promise<void> {
    const worker = this.#worker;
    if (worker === undefined || this.#closed || this.#failure) return this.#suspending;
    const closing = this.#send('close', undefined) as Promise<WriterClosed>;
    this.#worker = undefined;
    this.#suspending = closing
      .then(async (closed) => {
        this.#lastStampMs = closed.lastStampMs;
        await worker.terminate();
      })
      .catch((error: unknown) => this.#fail(error instanceof Error ? error : new Error(String(error))))
      .finally(() => (this.#suspending = undefined));
    return this.#suspending;
  }

  /** Whether no thread runs (suspended, or ending): the next call starts one. */
  get suspended(): boolean {
    return this.#worker === undefined && !this.#closed;
  }

  /** Starts the thread if it is suspended, ahead of the first call that would. */
  resume(): void {
    if (this.#worker === undefined && !this.#closed && !this.#failure) void this.#whenRunning().catch(() => undefined);
  }

  /** Lets the pages sent before commit, closes the thread's connection, and ends the thread. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // A suspended writer is started once more to close: its last close leaves the file in rollback mode (writer-connection.ts).
    if (this.#failure === undefined) await this.#send('close', undefined).catch(() => undefined);
    await this.#worker?.terminate();
  }

  async #loadDerive(): Promise<Derive> {
    this.#derive = await (this.#deriving ??= import('../../url/lookup-fields.js').then((module) => module.deriveLookupFields));
    return this.#derive;
  }

  #send(kind: WriterRequest['kind'], input: unknown): Promise<unknown> {
    if (this.#failure) return Promise.reject(this.#failure);
    if (this.#worker === undefined) return this.#whenRunning().then(() => this.#send(kind, input));
    const worker = this.#worker;
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.postMessage({ id, kind, input, sentAt: epochMs() } as WriterRequest);
    });
  }

  /** Once a suspension is over, the next thread (started by the first caller). */
  async #whenRunning(): Promise<void> {
    while (this.#suspending) await this.#suspending;
    if (this.#failure) throw this.#failure;
    if (this.#worker !== undefined) return;
    const now = new Date(Date.parse(this.#options.now) + (performance.now() - this.#startedAt)).toISOString();
    this.#pending.set(START_ID, { resolve: () => undefined, reject: (error) => this.#fail(error) });
    this.#worker = this.#spawn(now);
  }

  #spawn(now: string): Worker {
    const { dbPath, autoCheckpoint, maxPageBytes } = this.#options;
    const worker = new Worker(new URL('./writer-thread.js', import.meta.url), {
      workerData: { dbPath, autoCheckpoint, now, stampsAfterMs: this.#lastStampMs } satisfies WriterThreadData,
      // The thread holds at most a few pages: keep its heap small (16 MB holds pages of 4 MiB,
      // the default limit; measured), larger only where larger pages are allowed.
      resourceLimits: { maxOldGenerationSizeMb: Math.max(16, Math.ceil((4 * maxPageBytes) / 2 ** 20)), maxYoungGenerationSizeMb: 2 },
    });
    worker.on('message', (response: WriterResponse) => {
      const pending = this.#pending.get(response.id);
      if (!pending) return;
      this.#pending.delete(response.id);
      if (response.error) pending.reject(Object.assign(new Error(response.error.message), { code: response.error.code }));
      else pending.resolve(response.result);
    });
    // A suspended thread's end is expected: only the running one's counts.
    const fail = (error: Error): void => {
      if (worker === this.#worker) this.#fail(error);
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the writer thread exited (code ${code})`)));
    return worker;
  }

  #fail(error: Error): void {
    this.#failure ??= error;
    // Taken out first: a restarted thread's start is pending with #fail itself as its reject, which
    // called #fail again over the same calls, without end (a stack overflow that hid the cause).
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const call of pending) call.reject(error);
    if (!this.#closed) this.#reportFailure?.(error);
  }
}
