// The read side of the daemon's export index (written by export-index.ts; its tables: schema.ts):
// the host list and counts the host formats render, the zone's serial and its history of changes.
// Used on the connection that writes the index (the refresh job, between runs) and on read-only
// connections of the serving thread (zone transfers, feeds), each inside a read transaction of its
// own: a transfer reads one version of the zone whatever the refresh job commits meanwhile.
import type { Database, Statement } from '../../db/sqlite.js';
import { type AllowedHosts, type HostSelection, type HostsLeftOut, noneLeftOut } from '../host-selection.js';
import { type HostList, treeKey, withoutListedParentOf } from '../host-set.js';
import { MAX_HOST } from '../../lib/rpz-zone.js';
import { type OwnerRecord, type ZoneNames, zoneNamesOf } from '../formats/zone-names.js';
import { ALLOWED_KIND, HOST_KIND, type IndexState, OTHER_TYPE_KIND, type ZoneName, type ZoneStep } from './schema.js';

export class IndexView implements HostList {
  readonly #db: Database;
  #hostListed: Statement | undefined;

  constructor(db: Database) {
    this.#db = db;
    db.function('tree_key', { deterministic: true }, (host) => treeKey(String(host)));
  }

  state(): IndexState {
    const row = this.#db.prepare('SELECT change_seq, hosts_version, serial, allowlist FROM index_state').raw().get() as [number, number, number, string | null] | undefined;
    if (row === undefined) throw new Error('the export index holds no state yet');
    return { changeSeq: row[0], hostsVersion: row[1], serial: row[2], allowlist: row[3] };
  }

  get size(): number {
    return this.#db.prepare('SELECT count(*) FROM hosts').pluck().get() as number;
  }

  countLongerThan(length: number): number {
    return this.#db.prepare('SELECT count(*) FROM hosts WHERE length(host) > ?').pluck().get(length) as number;
  }

  has(host: string): boolean {
    this.#hostListed ??= this.#db.prepare('SELECT 1 FROM hosts WHERE host = ?');
    return this.#hostListed.get(host) !== undefined;
  }

  sorted(maxLength = Number.MAX_SAFE_INTEGER): Iterable<string> {
    return this.#db.prepare('SELECT host FROM hosts WHERE length(host) <= ? ORDER BY host').pluck().iterate(maxLength) as IterableIterator<string>;
  }

  withoutListedParent(): Iterable<string> {
    return withoutListedParentOf(this.#db.prepare('SELECT host, tree_key(host) AS key FROM hosts ORDER BY key').raw().iterate() as IterableIterator<[string, string]>);
  }

  /** The connection is the caller's. */
  close(): void {}

  /** The host formats' view of this version: the hosts and what was left out. */
  selection(): HostSelection {
    const leftOut = noneLeftOut();
    let hostThreats = 0;
    let otherTypes = 0;
    let allowed = 0;
    for (const [kind, threats] of this.#db.prepare('SELECT kind, threats FROM counts').raw().iterate() as IterableIterator<[string, number]>) {
      if (kind === HOST_KIND) hostThreats = threats;
      else if (kind === OTHER_TYPE_KIND) otherTypes = threats;
      else if (kind === ALLOWED_KIND) allowed = threats;
      else leftOut[kind as keyof HostsLeftOut] = threats;
    }
    return { hosts: this, hostCount: this.size, hostThreats, leftOut, otherTypes, allowlist: this.#allowedHosts(allowed) };
  }

  /** The names of the zone (what `export --format rpz` lists): blocked hosts and passthru names, one record an owner (zone-names.ts). */
  zoneNames(): ZoneNames {
    return zoneNamesOf(this, this.passthruHosts());
  }

  /** What this version holds at an owner name. */
  recordAt(host: string): OwnerRecord {
    if (this.#db.prepare('SELECT 1 FROM passthru WHERE host = ?').get(host) !== undefined) return 'passthru';
    return host.length <= MAX_HOST && this.has(host) ? 'block' : undefined;
  }

  /** The zone's passthru names, sorted: hosts the allowlist allows as a whole. */
  passthruHosts(): string[] {
    return this.#db.prepare('SELECT host FROM passthru ORDER BY host').pluck().all() as string[];
  }

  #allowedHosts(threats: number): AllowedHosts | undefined {
    const row = this.#db.prepare('SELECT allowlist, passthru_not_listed FROM index_state').raw().get() as [string | null, number];
    return row[0] === null ? undefined : { threats, passthru: this.passthruHosts(), notListed: row[1] };
  }

  /**
   * The steps from `serial` to the current one, in order, when the history still holds them all;
   * undefined when it does not (too old, from before a restart, or a serial never served).
   */
  zoneStepsSince(serial: number): ZoneStep[] | undefined {
    const current = this.state().serial;
    const previousOf = this.#db.prepare('SELECT previous FROM zone_versions WHERE serial = ?').pluck();
    const chain: number[] = [];
    for (let at = current; at !== serial; ) {
      const previous = previousOf.get(at) as number | undefined;
      if (previous === undefined) return undefined;
      chain.push(at);
      at = previous;
    }
    const changes = this.#db.prepare('SELECT host, passthru FROM zone_changes WHERE serial = ? AND added = ? ORDER BY passthru, host').raw();
    const names = (at: number, added: number): ZoneName[] => (changes.all(at, added) as Array<[string, number]>).map(([host, passthru]) => ({ host, passthru: passthru === 1 }));
    return chain.reverse().map((at) => ({ previous: previousOf.get(at) as number, serial: at, removed: names(at, 0), added: names(at, 1) }));
  }
}
