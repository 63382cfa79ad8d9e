// The deduplicated, sorted host list, kept in a private scratch SQLite database (a temporary file
// SQLite deletes on close) instead of the JavaScript heap: the CLI and the daemon run with a
// 48 MB heap, and 400,000 hosts in a Set already exhaust it (measured).
//
// Hosts are appended to an unindexed table as they come and sorted once, on the first read: at
// 400,000 hosts that is ~0.6 s, where inserting each into a unique index (and a second index for
// the tree order) took ~1.7 s (measured on the 1M-threat benchmark mirror, docs/performance.md).
import { Database, type Statement } from '../db/sqlite.js';
import { withSmallPageCache } from '../db/page-cache.js';

/** Inserts gathered per transaction. */
const BATCH = 2_000;

/** What the host formats read of a host list (HostSet, or a version of the daemon's export index). */
export interface HostList {
  readonly size: number;
  countLongerThan(length: number): number;
  /** Whether the list holds this host. */
  has(host: string): boolean;
  /** Every host once, by byte order, up to a length. */
  sorted(maxLength?: number): Iterable<string>;
  /** The hosts none of whose parents is listed, parents first. */
  withoutListedParent(): Iterable<string>;
  /** Releases what the list holds outside the heap. */
  close(): void;
}

/** A host's labels reversed and joined with \u0001, a character below every host character, so that a host's subdomains sort right after it. */
export function treeKey(host: string): string {
  return host.split('.').reverse().join('\u0001');
}

/**
 * Reads `SELECT host, tree_key(host) … ORDER BY 2` rows and keeps the hosts none of whose parents
 * was kept before: ordered by reversed labels, every subdomain of a kept host comes right after
 * it, so one remembered key decides.
 */
export function* withoutListedParentOf(rows: Iterable<[string, string]>): Generator<string> {
  let kept: string | undefined;
  for (const [host, key] of rows) {
    if (kept !== undefined && key.startsWith(`${kept}\u0001`)) continue;
    kept = key;
    yield host;
  }
}

export class HostSet implements HostList {
  readonly #db: Database;
  #insert: Statement;
  #hostListed: Statement | undefined;
  #pending: string[] = [];
  #sortedOnce = false;

  constructor() {
    // '': a temporary database; its pages spill to a file SQLite removes, not to the heap.
    this.#db = new Database('');
    this.#db.pragma('journal_mode = OFF');
    this.#db.pragma('synchronous = OFF');
    // The sort by reversed labels spills to the file beyond it instead of holding ~16 MB more.
    withSmallPageCache(this.#db);
    this.#db.function('tree_key', { deterministic: true }, (host) => treeKey(String(host)));
    this.#db.exec('CREATE TABLE added (host TEXT NOT NULL)');
    this.#insert = this.#db.prepare('INSERT INTO added (host) VALUES (?)');
  }

  add(host: string): void {
    this.#pending.push(host);
    if (this.#pending.length >= BATCH) this.#flush();
  }

  get size(): number {
    this.#sort();
    return this.#db.prepare('SELECT count(*) FROM hosts').pluck().get() as number;
  }

  countLongerThan(length: number): number {
    this.#sort();
    return this.#db.prepare('SELECT count(*) FROM hosts WHERE length(host) > ?').pluck().get(length) as number;
  }

  has(host: string): boolean {
    this.#sort();
    this.#hostListed ??= this.#db.prepare('SELECT 1 FROM hosts WHERE host = ?');
    return this.#hostListed.get(host) !== undefined;
  }

  /** Every host once, by byte order (the BINARY collation: code unit order for ASCII). */
  *sorted(maxLength = Number.MAX_SAFE_INTEGER): Generator<string> {
    this.#sort();
    yield* this.#db.prepare('SELECT host FROM hosts WHERE length(host) <= ? ORDER BY host').pluck().iterate(maxLength) as IterableIterator<string>;
  }

  withoutListedParent(): Generator<string> {
    this.#sort();
    return withoutListedParentOf(this.#db.prepare('SELECT host, tree_key(host) AS key FROM hosts ORDER BY key').raw().iterate() as IterableIterator<[string, string]>);
  }

  close(): void {
    this.#db.close();
  }

  #flush(): void {
    if (this.#pending.length === 0) return;
    const hosts = this.#pending;
    this.#pending = [];
    this.#db.transaction(() => {
      for (const host of hosts) this.#insert.run(host);
    })();
  }

  /** Once: the appended hosts, deduplicated, into a table ordered by host; later adds go straight there. */
  #sort(): void {
    this.#flush();
    if (this.#sortedOnce) return;
    this.#sortedOnce = true;
    this.#db.exec('CREATE TABLE hosts (host TEXT PRIMARY KEY) WITHOUT ROWID; INSERT INTO hosts SELECT DISTINCT host FROM added ORDER BY host; DROP TABLE added');
    this.#insert = this.#db.prepare('INSERT OR IGNORE INTO hosts (host) VALUES (?)');
  }
}
