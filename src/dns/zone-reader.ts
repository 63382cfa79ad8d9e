// The response policy zone as the DNS primary serves it: read from the daemon's export index on
// read-only connections (the daemon's refresh job writes it). Its records are those `export --format rpz`
// writes, with absolute names: the SOA, the NS, and for each host `host CNAME .` and
// `*.host CNAME .` (NXDOMAIN for the host and every name under it), then for each host the
// allowlist lets through `host CNAME rpz-passthru.` and its wildcard.
import type { Answer } from 'dns-packet';
import { Database } from '../db/sqlite.js';
import { IndexView } from '../export/index/index-view.js';
import type { ZoneName, ZoneStep } from '../export/index/schema.js';
import { RPZ_TTL, SOA_MNAME, SOA_RNAME, type ZoneTimers } from '../lib/rpz-zone.js';
import { openReadOnly } from '../db/open-database.js';
import { stepsKeepOneRecordPerOwner } from '../export/formats/zone-names.js';

export interface ZoneSettings {
  /** The zone's name, lower case, no trailing dot (THREAT_MIRROR_RPZ_ZONE). */
  readonly zone: string;
  readonly timers: ZoneTimers;
}

/** One version of the zone, read inside a read transaction of its own; close() ends it. */
export class ZoneVersion {
  readonly serial: number;
  readonly #db: Database;
  readonly #view: IndexView;
  readonly #settings: ZoneSettings;

  constructor(indexPath: string, settings: ZoneSettings) {
    this.#db = openIndexReadOnly(indexPath);
    this.#settings = settings;
    try {
      this.#db.exec('BEGIN');
      this.#view = new IndexView(this.#db);
      this.serial = this.#view.state().serial;
    } catch (error) {
      this.#db.close();
      throw error;
    }
  }

  soa(serial = this.serial): Answer {
    return soaRecord(this.#settings, serial);
  }

  /** Every record of this version, SOA first and last, as an AXFR carries them (RFC 5936). */
  *full(): Generator<Answer> {
    const { zone } = this.#settings;
    yield this.soa();
    yield { type: 'NS', name: zone, ttl: RPZ_TTL, class: 'IN', data: SOA_MNAME };
    const names = this.#view.zoneNames();
    for (const host of names.blocked) yield* this.#records({ host, passthru: false });
    for (const host of names.passthru) yield* this.#records({ host, passthru: true });
    yield this.soa();
  }

  /**
   * The steps from `serial` here, or undefined when the history no longer holds them, or when
   * they would put two records at one owner (zone-names.ts): the full zone is sent instead.
   */
  stepsSince(serial: number): ZoneStep[] | undefined {
    const steps = this.#view.zoneStepsSince(serial);
    return steps === undefined || !stepsKeepOneRecordPerOwner(steps, (host) => this.#view.recordAt(host)) ? undefined : steps;
  }

  /** An incremental transfer (RFC 1995): the new SOA, each step's deletions then additions, the new SOA. */
  *incremental(steps: readonly ZoneStep[]): Generator<Answer> {
    yield this.soa();
    for (const step of steps) {
      yield this.soa(step.previous);
      for (const name of step.removed) yield* this.#records(name);
      yield this.soa(step.serial);
      for (const name of step.added) yield* this.#records(name);
    }
    yield this.soa();
  }

  close(): void {
    if (this.#db.open) this.#db.close();
  }

  /** A blocked host: NXDOMAIN (`CNAME .`); a host let through: `CNAME rpz-passthru.`; each for the host and every name under it. */
  *#records({ host, passthru }: ZoneName): Generator<Answer> {
    const { zone } = this.#settings;
    const data = passthru ? 'rpz-passthru' : '.';
    yield { type: 'CNAME', name: `${host}.${zone}`, ttl: RPZ_TTL, class: 'IN', data };
    yield { type: 'CNAME', name: `*.${host}.${zone}`, ttl: RPZ_TTL, class: 'IN', data };
  }
}

export function soaRecord({ zone, timers }: ZoneSettings, serial: number): Answer {
  return {
    type: 'SOA',
    name: zone,
    ttl: RPZ_TTL,
    class: 'IN',
    data: { mname: SOA_MNAME, rname: SOA_RNAME, serial, refresh: timers.refresh, retry: timers.retry, expire: timers.expire, minimum: timers.minimum },
  };
}

/** The current serial, once the main thread has said the index is built (by the refresh job); undefined before. */
export class ZoneReader {
  readonly settings: ZoneSettings;
  readonly #indexPath: string;
  #db: Database | undefined;

  constructor(indexPath: string, settings: ZoneSettings) {
    this.#indexPath = indexPath;
    this.settings = settings;
  }

  /** Called when the index's first version is committed (the main thread says so after the refresh job). */
  markReady(): void {
    this.#db ??= openIndexReadOnly(this.#indexPath);
  }

  serial(): number | undefined {
    return this.#db?.prepare('SELECT serial FROM index_state').pluck().get() as number | undefined;
  }

  get ready(): boolean {
    return this.#db !== undefined;
  }

  openVersion(): ZoneVersion {
    return new ZoneVersion(this.#indexPath, this.settings);
  }

  close(): void {
    this.#db?.close();
    this.#db = undefined;
  }
}

function openIndexReadOnly(path: string): Database {
  return openReadOnly(path, { busyTimeoutMs: 5000, smallPageCache: true });
}
