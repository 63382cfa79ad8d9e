// The deduplicated, sorted host list, kept in a private scratch SQLite database (a temporary file
// SQLite deletes on close) instead of the JavaScript heap: the CLI and the daemon run with a
// 48 MB heap, and 400,000 hosts in a Set already exhaust it (measured).
import { Database, type Statement } from '../db/sqlite.js';

/** Inserts gathered per transaction. */
const BATCH = 2_000;

export class HostSet {
  readonly #db: Database;
  readonly #insert: Statement;
  #pending: string[] = [];

  constructor() {
    // '': a temporary database; its pages spill to a file SQLite removes, not to the heap.
    this.#db = new Database('');
    this.#db.pragma('journal_mode = OFF');
    this.#db.pragma('synchronous = OFF');
    // tree_key: labels reversed and joined with \u0001, a character below every host character,
    // so that a host's subdomains sort right after it (see withoutListedParent).
    this.#db.exec('CREATE TABLE hosts (host TEXT PRIMARY KEY, tree_key TEXT NOT NULL) WITHOUT ROWID; CREATE INDEX hosts_tree ON hosts (tree_key)');
    this.#insert = this.#db.prepare('INSERT OR IGNORE INTO hosts (host, tree_key) VALUES (?, ?)');
  }

  add(host: string): void {
    this.#pending.push(host);
    if (this.#pending.length >= BATCH) this.#flush();
  }

  get size(): number {
    this.#flush();
    return this.#db.prepare('SELECT count(*) FROM hosts').pluck().get() as number;
  }

  countLongerThan(length: number): number {
    this.#flush();
    return this.#db.prepare('SELECT count(*) FROM hosts WHERE length(host) > ?').pluck().get(length) as number;
  }

  /** Every host once, by byte order (the BINARY collation: code unit order for ASCII). */
  *sorted(maxLength = Number.MAX_SAFE_INTEGER): Generator<string> {
    this.#flush();
    yield* this.#db.prepare('SELECT host FROM hosts WHERE length(host) <= ? ORDER BY host').pluck().iterate(maxLength) as IterableIterator<string>;
  }

  /**
   * The hosts none of whose parents is listed, parents first: ordered by reversed labels, every
   * subdomain of a kept host comes right after it, so one remembered key decides.
   */
  *withoutListedParent(): Generator<string> {
    this.#flush();
    let kept: string | undefined;
    const rows = this.#db.prepare('SELECT host, tree_key FROM hosts ORDER BY tree_key').iterate() as IterableIterator<{ host: string; tree_key: string }>;
    for (const row of rows) {
      if (kept !== undefined && row.tree_key.startsWith(`${kept}\u0001`)) continue;
      kept = row.tree_key;
      yield row.host;
    }
  }

  close(): void {
    this.#db.close();
  }

  #flush(): void {
    if (this.#pending.length === 0) return;
    const hosts = this.#pending;
    this.#pending = [];
    this.#db.transaction(() => {
      for (const host of hosts) this.#insert.run(host, host.split('.').reverse().join('\u0001'));
    })();
  }
}
