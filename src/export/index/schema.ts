// The export index's schema (THREAT_MIRROR_DB.exports/index.db: a SQLite file of its own, never the
// mirror): its tables, the kinds of its counts, and the shapes its reads return. Its one writer is
// export-index.ts (the refresh job); its reads are index-view.ts.

// allowlist: the THREAT_MIRROR_ALLOWLIST version the index follows (NULL: none configured);
// passthru: the hosts it allows as a whole (the zone's rpz-passthru names), passthru_not_listed
// those it allows that no zone may name. zone_changes.passthru tells a passthru name from a block.
export const INDEX_SCHEMA = `
  CREATE TABLE threat_entries (id INTEGER PRIMARY KEY, kind TEXT NOT NULL, host TEXT);
  CREATE INDEX threat_entries_allowed ON threat_entries (id) WHERE kind = 'allowed';
  CREATE TABLE hosts (host TEXT PRIMARY KEY, threats INTEGER NOT NULL) WITHOUT ROWID;
  CREATE TABLE passthru (host TEXT PRIMARY KEY) WITHOUT ROWID;
  CREATE TABLE counts (kind TEXT PRIMARY KEY, threats INTEGER NOT NULL);
  CREATE TABLE index_state (id INTEGER PRIMARY KEY CHECK (id = 1), change_seq INTEGER NOT NULL, hosts_version INTEGER NOT NULL, serial INTEGER NOT NULL,
    allowlist TEXT, passthru_not_listed INTEGER NOT NULL DEFAULT 0, zone_timers TEXT);
  CREATE TABLE zone_versions (serial INTEGER PRIMARY KEY, previous INTEGER NOT NULL);
  CREATE TABLE zone_changes (serial INTEGER NOT NULL, added INTEGER NOT NULL, host TEXT NOT NULL, passthru INTEGER NOT NULL DEFAULT 0);
  CREATE INDEX zone_changes_serial ON zone_changes (serial, added, host);
`;

/** counts.kind of a threat that gives a host, of one of another type, and of one the allowlist allows; other kinds are HostsLeftOut keys. */
export const HOST_KIND = 'host';
export const OTHER_TYPE_KIND = 'other-type';
export const ALLOWED_KIND = 'allowed';

export interface IndexState {
  /** The mirror's max(change_seq) the index was last brought up to. */
  readonly changeSeq: number;
  /** Moves whenever the set of hosts changes: host-format files and feeds are rewritten then only. */
  readonly hostsVersion: number;
  /** The zone's SOA serial: moves (RFC 1982, strictly) whenever the zone's names change. */
  readonly serial: number;
  /** The THREAT_MIRROR_ALLOWLIST version the index follows; null: none is configured. */
  readonly allowlist: string | null;
}

/** A name of the zone: a host blocked (`CNAME .`) or let through (`CNAME rpz-passthru.`), each with its wildcard. */
export interface ZoneName {
  readonly host: string;
  readonly passthru: boolean;
}

/** One step of the zone's history: what went from `previous` to `serial`. */
export interface ZoneStep {
  readonly previous: number;
  readonly serial: number;
  readonly removed: readonly ZoneName[];
  readonly added: readonly ZoneName[];
}
