// Follows THREAT_MIRROR_ALLOWLIST while the daemon runs: a new version of the file is read, checked
// and handed on within a second or two; a bad one (a malformed line, a file gone or unreadable) is
// reported and the last good list stays in use.
//
// Polled, not watched: a stat a second (it follows symbolic links, so the atomic swap of a
// Kubernetes ConfigMap's `..data` link shows as a new inode, as does a rename over the file; a
// write in place as a new size, mtime or ctime) works on every filesystem, network and overlay
// mounts included, where inotify may stay silent, and costs nothing measurable. The file is read
// only when the stat differs from the last read's, and again at the next look while its mtime is
// within RACY_MS of the read (git's "racily clean" rule): a write in place of the same size within
// the filesystem's timestamp granularity is still seen.
import { statSync } from 'node:fs';
import { errorMessage } from '../lib/errors.js';
import type { Clock } from '../lib/days.js';
import { type Allowlist, AllowlistError } from './allowlist-entries.js';
import { type FileIdentity, identityOf, type ReadAllowlist, readAllowlist, sameIdentity } from './allowlist-file.js';

/** Between two looks at the file: a change is in use within about this (and the refresh after it). */
export const POLL_MS = 1_000;
const RACY_MS = 2_000;

/** What the daemon follows: the list in use, since when, and what is wrong with the file now, if anything. */
export interface AllowlistState {
  readonly file: string;
  readonly list: Allowlist;
  /** When `list` came into use (at start, or when the file changed to it). */
  readonly appliedAt: Date;
  /** The file as it is now cannot be used: why, and since when. The previous list stays in use. */
  readonly problem: { readonly message: string; readonly since: Date } | undefined;
}

export interface AllowlistEvents {
  /** A new version is in use. */
  applied(list: Allowlist): void;
  /** The file cannot be used (called once per distinct problem); the previous list stays. */
  failed(error: AllowlistError, state: AllowlistState): void;
  /** The file can be used again, as the list in use (it was put back as it was). */
  recovered(state: AllowlistState): void;
}

export class AllowlistWatcher {
  readonly #clock: Clock;
  readonly #events: AllowlistEvents;
  #state: AllowlistState;
  /** The file as last read (or found unusable); undefined when it could not even be stat'ed. */
  #identity: FileIdentity | undefined;
  #racy: boolean;
  #timer: NodeJS.Timeout | undefined;

  /** `initial`: the file as read at start (config.ts), already checked. */
  constructor(initial: ReadAllowlist, clock: Clock, events: AllowlistEvents) {
    this.#clock = clock;
    this.#events = events;
    this.#state = { file: initial.list.file, list: initial.list, appliedAt: clock(), problem: undefined };
    this.#identity = initial.identity;
    this.#racy = this.#isRacy(initial.identity);
  }

  get state(): AllowlistState {
    return this.#state;
  }

  start(intervalMs = POLL_MS): void {
    this.#timer ??= setInterval(() => this.check(), intervalMs);
    this.#timer.unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** One look at the file; never throws. */
  check(): void {
    const { file } = this.#state;
    let identity: FileIdentity;
    try {
      identity = identityOf(statSync(file, { bigint: true }));
    } catch (error) {
      this.#identity = undefined;
      return this.#fail(new AllowlistError(file, undefined, `cannot read it: ${errorMessage(error)}`));
    }
    if (this.#identity !== undefined && sameIdentity(identity, this.#identity) && !this.#racy) return;
    let read: ReadAllowlist;
    try {
      read = readAllowlist(file);
    } catch (error) {
      this.#identity = identity;
      this.#racy = this.#isRacy(identity);
      return this.#fail(error instanceof AllowlistError ? error : new AllowlistError(file, undefined, errorMessage(error)));
    }
    this.#identity = read.identity;
    this.#racy = this.#isRacy(read.identity);
    const hadProblem = this.#state.problem !== undefined;
    if (read.list.version === this.#state.list.version) {
      this.#state = { ...this.#state, problem: undefined };
      if (hadProblem) this.#events.recovered(this.#state);
      return;
    }
    this.#state = { file, list: read.list, appliedAt: this.#clock(), problem: undefined };
    this.#events.applied(read.list);
  }

  #fail(error: AllowlistError): void {
    const known = this.#state.problem;
    if (known?.message === error.message) return;
    this.#state = { ...this.#state, problem: { message: error.message, since: known?.since ?? this.#clock() } };
    this.#events.failed(error, this.#state);
  }

  /** Modified so recently that a write of the same size could follow within the same timestamp. */
  #isRacy(identity: FileIdentity): boolean {
    return Date.now() - Number(identity.mtimeNs / 1_000_000n) < RACY_MS;
  }
}
