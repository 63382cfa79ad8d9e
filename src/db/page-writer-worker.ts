// The main thread's handle on the page-writer thread: write() resolves when the page is committed.
import { Worker } from 'node:worker_threads';
import type { PageInput, PageResult, WindowConclusion } from './page-writer.js';
import type { WindowToRecord, WriterRequest, WriterResponse, WriterStart, WriterThreadData } from './page-writer-thread.js';
import type { WalCheckpoint } from './wal-checkpoint.js';
import { epochMs } from './commit-queue.js';

export interface PageSink {
  write(input: PageInput): Promise<PageResult>;
  /** Records a new window on the writer's connection, before the pages sent after it. */
  addWindow(window: WindowToRecord): Promise<void>;
  /** A window's removal candidates settled: marks, writes and completes (or restarts) it in one transaction. */
  conclude(conclusion: WindowConclusion): Promise<PageResult>;
  /** Folds the WAL into the file on the writer's connection, after the pages sent before; never waits for a reader. */
  checkpoint(): Promise<WalCheckpoint>;
  close(): Promise<void>;
}

export class PageWriterWorker implements PageSink {
  readonly #worker: Worker;
  readonly #pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  #nextId = 1;
  #failure: Error | undefined;
  /**
   * Resolves once the thread has opened its connection and is ready for pages; rejects with why
   * it could not. Nothing need wait for it: the thread starts while the first pages are fetched,
   * their writes queue at its port, and they fail with this reason if it could not start.
   */
  readonly ready: Promise<WriterStart>;

  /**
   * `maxPageBytes`: the largest response the sync accepts; the thread's heap must hold a few.
   * `autoCheckpoint`: false when a replicator does the checkpoints.
   */
  constructor(dbPath: string, maxPageBytes: number, autoCheckpoint = true) {
    this.ready = new Promise((resolve, reject) => this.#pending.set(0, { resolve: (start) => resolve(start as WriterStart), reject }));
    this.ready.catch(() => undefined);
    this.#worker = new Worker(new URL('./page-writer-thread.js', import.meta.url), {
      workerData: { dbPath, autoCheckpoint } satisfies WriterThreadData,
      // The thread holds at most a few pages: keep its heap small (16 MB holds pages of 4 MiB,
      // the default limit; measured), larger only where larger pages are allowed.
      resourceLimits: { maxOldGenerationSizeMb: Math.max(16, Math.ceil((4 * maxPageBytes) / 2 ** 20)), maxYoungGenerationSizeMb: 2 },
    });
    this.#worker.on('message', (response: WriterResponse) => {
      const pending = this.#pending.get(response.id);
      if (!pending) return;
      this.#pending.delete(response.id);
      if (response.error) pending.reject(Object.assign(new Error(response.error.message), { code: response.error.code }));
      else pending.resolve(response.result);
    });
    const fail = (error: Error): void => {
      this.#failure ??= error;
      for (const pending of this.#pending.values()) pending.reject(error);
      this.#pending.clear();
    };
    this.#worker.on('error', fail);
    this.#worker.on('exit', (code) => fail(new Error(`the page-writer thread exited (code ${code})`)));
  }

  write(input: PageInput): Promise<PageResult> {
    // Posted at once, even while the thread is still starting: the port queues it serialized, off
    // this thread's heap, and delivers it in order once the thread listens. Held here until ready
    // instead, the first pages of four windows (4 MB each with large records, besides the ones
    // prefetched) ran the CLI's 48 MB heap out during a slow start (45 MB live after a full GC).
    return this.#send({ id: this.#nextId++, input, sentAt: epochMs() }) as Promise<PageResult>;
  }

  addWindow(window: WindowToRecord): Promise<void> {
    return this.#send({ id: this.#nextId++, window }) as Promise<void>;
  }

  conclude(conclusion: WindowConclusion): Promise<PageResult> {
    return this.#send({ id: this.#nextId++, conclusion }) as Promise<PageResult>;
  }

  checkpoint(): Promise<WalCheckpoint> {
    const id = this.#nextId++;
    return this.ready.then(() => this.#send({ id, checkpoint: true }) as Promise<WalCheckpoint>);
  }

  /** Lets the page being written commit, closes the thread's connection, and ends the thread. */
  async close(): Promise<void> {
    if (this.#failure) return;
    await this.#send({ id: this.#nextId++, close: true }).catch(() => undefined);
    await this.#worker.terminate();
  }

  #send(request: WriterRequest): Promise<unknown> {
    if (this.#failure) return Promise.reject(this.#failure);
    return new Promise((resolve, reject) => {
      this.#pending.set(request.id, { resolve, reject });
      this.#worker.postMessage(request);
    });
  }
}
