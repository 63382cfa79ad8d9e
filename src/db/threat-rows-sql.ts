// The multi-row statements the page writer writes threats with, prepared once per size of
// statement (100, 10 and 1 rows: a full page is one call), and the splitting of rows into them.
import type { Threat } from '../records.js';

const THREAT_COLUMNS = `id, content, type, blocked_at, first_seen_at, updated_at, change_seq,
  host, registrable_domain, address_namespace, address_chain, address, email, email_domain, url_expression`;

export function insertSql(rows: number): string {
  return `INSERT INTO threats (${THREAT_COLUMNS}) VALUES ${placeholders(rows, 15)}`;
}

/** Writes only what changed, and returns what it wrote. */
export function upsertSql(rows: number): string {
  return `INSERT INTO threats (${THREAT_COLUMNS})
         VALUES ${placeholders(rows, 15)}
         ON CONFLICT (id) DO UPDATE SET content = excluded.content, type = excluded.type, blocked_at = excluded.blocked_at,
           updated_at = excluded.updated_at, change_seq = excluded.change_seq, host = excluded.host,
           registrable_domain = excluded.registrable_domain, address_namespace = excluded.address_namespace,
           address_chain = excluded.address_chain, address = excluded.address, email = excluded.email, email_domain = excluded.email_domain,
           url_expression = excluded.url_expression
         WHERE threats.content IS NOT excluded.content OR threats.type IS NOT excluded.type OR threats.blocked_at IS NOT excluded.blocked_at
         RETURNING id, first_seen_at`;
}

/** New links, and removed ones restored; `returning`: which of them (the others were current already). */
export function linkSql(rows: number, returning: boolean): string {
  return `INSERT INTO organization_threats (organization, threat_id, first_seen_at) VALUES ${placeholders(rows, 3)}
         ON CONFLICT DO UPDATE SET removed_at = NULL WHERE removed_at IS NOT NULL${returning ? ' RETURNING threat_id' : ''}`;
}

const CHUNK_SIZES = [100, 10, 1] as const;

/** Splits rows into runs of 100, 10 and 1, the sizes the statements are prepared for. */
export function* chunks<T>(rows: readonly T[]): Generator<readonly T[]> {
  let offset = 0;
  for (const size of CHUNK_SIZES) {
    while (rows.length - offset >= size) {
      yield rows.slice(offset, offset + size);
      offset += size;
    }
  }
}

function placeholders(rows: number, columns: number): string {
  const row = `(${Array.from({ length: columns }, () => '?').join(', ')})`;
  return Array.from({ length: rows }, () => row).join(', ');
}

/** A page that repeats an id keeps the last copy: one statement may not upsert the same row twice. */
export function uniqueById(threats: readonly Threat[]): readonly Threat[] {
  const ids = new Set<number>();
  let duplicate = false;
  for (const threat of threats) {
    if (ids.has(threat.id)) duplicate = true;
    ids.add(threat.id);
  }
  if (!duplicate) return threats;
  return [...new Map(threats.map((threat) => [threat.id, threat])).values()];
}
