// How the WAL fares beside readers: its size, and how long readers have kept checkpoints from completing.
import { statSync } from 'node:fs';
import { walPathOf } from '../db/database-files.js';
import type { WalCheckpoint } from '../db/writer/wal-checkpoint.js';

export class WalHealth {
  readonly #walPath: string;
  readonly #starvedAfterSeconds: number;
  /** The first checkpoint that did not complete since the last one that did; undefined: none. */
  #starvedSince: Date | undefined;
  readonly checkpoints = { complete: 0, incomplete: 0 };

  constructor(dbPath: string, starvedAfterSeconds: number) {
    this.#walPath = walPathOf(dbPath);
    this.#starvedAfterSeconds = starvedAfterSeconds;
  }

  /** The -wal file's size now (0 when there is none): a stat, never a SQLite lock. */
  walBytes(): number {
    try {
      return statSync(this.#walPath).size;
    } catch {
      return 0;
    }
  }

  record(outcome: WalCheckpoint, at: Date): void {
    if (outcome.complete) {
      this.checkpoints.complete += 1;
      this.#starvedSince = undefined;
    } else {
      this.checkpoints.incomplete += 1;
      this.#starvedSince ??= at;
    }
  }

  /** Seconds since checkpoints stopped completing; 0 while they complete. */
  starvedSeconds(now: Date): number {
    return this.#starvedSince === undefined ? 0 : Math.max(0, (now.getTime() - this.#starvedSince.getTime()) / 1000);
  }

  /** A /readyz reason once starvation has lasted longer than the threshold. */
  reason(now: Date): string | undefined {
    const seconds = this.starvedSeconds(now);
    if (this.#starvedSince === undefined || seconds <= this.#starvedAfterSeconds) return undefined;
    return (
      `WAL checkpoints have not completed for ${Math.round(seconds)} s (threshold THREAT_MIRROR_WAL_STARVED_SECONDS=${this.#starvedAfterSeconds}): ` +
      `a reader has held a read transaction since about ${this.#starvedSince.toISOString()}; the WAL is ${this.walBytes()} bytes and grows until it lets go`
    );
  }
}
