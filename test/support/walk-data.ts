// Threats laid out by day with known ids, and what the mirror holds of them, for the tests of
// walks the service's list changes under.
import { addDays } from '../../src/lib/days.js';
import type { Standin, StandinThreat } from '../../src/standin/index.js';
import { withDb } from './mirror-db.js';

type Listed = Pick<StandinThreat, 'id' | 'content' | 'type' | 'blockedAt'>;

/** `count` threats of one day with ids from `firstId` up, one a minute. */
export function threatsOfDay(day: string, firstId: number, count: number, organization = 'acme'): StandinThreat[] {
  return Array.from({ length: count }, (_, index) => ({
    id: firstId + index,
    content: `https://t${firstId + index}.example/login`,
    type: 'URL',
    blockedAt: new Date(Date.parse(`${day}T00:00:00.000Z`) + index * 60_000).toISOString(),
    organization,
  }));
}

/**
 * URL threats of acme on each day from `today` back through `back` days earlier: `countOf(n)` on
 * the day n back, blocked at the day's hours in turn, ids from `firstId` up, `idStep` apart (2
 * leaves room for an id blocked later between two), content `https://HOSTid.example/`.
 */
export function daysBack(today: string, back: number, countOf: (n: number) => number, { firstId, idStep = 1, host }: { firstId: number; idStep?: number; host: string }): StandinThreat[] {
  const threats: StandinThreat[] = [];
  for (let n = 0; n <= back; n += 1) {
    const day = addDays(today, -n);
    for (let index = 0; index < countOf(n); index += 1) {
      const id = firstId + idStep * threats.length;
      threats.push({ id, type: 'URL', organization: 'acme', blockedAt: `${day}T${String(index % 24).padStart(2, '0')}:00:00.000Z`, content: `https://${host}${id}.example/` });
    }
  }
  return threats;
}

export function removedIds(dbPath: string): number[] {
  return withDb(dbPath, (db) => db.prepare("SELECT threat_id FROM organization_threats WHERE organization = 'acme' AND removed_at IS NOT NULL ORDER BY 1").pluck().all() as number[]);
}

/** The mirror's current threats (not removed) as the service lists them: id, content, type, blockedAt. */
export function currentThreats(dbPath: string): Array<Pick<StandinThreat, 'id' | 'content' | 'type' | 'blockedAt'>> {
  return withDb(
    dbPath,
    (db) =>
      db
        .prepare("SELECT t.id, t.content, t.type, t.blocked_at AS blockedAt FROM current_threats c JOIN threats t ON t.id = c.id WHERE c.organization = 'acme' ORDER BY t.id")
        .all() as Array<Pick<StandinThreat, 'id' | 'content' | 'type' | 'blockedAt'>>,
  );
}

/** acme's mirrored days overdue for their re-walk, as sync_status counts them. */
export function overdueDays(dbPath: string): number {
  return withDb(dbPath, (db) => db.prepare("SELECT overdue_days FROM sync_status WHERE organization = 'acme'").pluck().get() as number);
}

/** What the service lists for `key`, as the mirror should hold it. */
export function listed(service: Standin, key: string): Listed[] {
  return service.threatsVisibleTo(key).map(({ id, content, type, blockedAt }) => ({ id, content, type, blockedAt }));
}

/** The windows whose removal checks acme's last reconciliation carried over, as `start..end`: the next run settles them without walking their days. */
export function carriedWindows(dbPath: string): string[] {
  return withDb(dbPath, (db) =>
    db.prepare("SELECT DISTINCT window_start || '..' || window_end FROM removal_checks WHERE organization = 'acme' ORDER BY 1").pluck().all() as string[],
  );
}
