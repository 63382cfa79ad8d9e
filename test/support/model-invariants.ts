// What the model-based randomized test (test/random-model.test.ts) checks after each step, against
// the service (the stand-in) and the file as a reader finds it. Each check returns what it found
// broken, in words, for the step log; none stops the run by itself.
import { AllowMatcher } from '../../src/allowlist/allow-matcher.js';
import type { AllowEntry } from '../../src/allowlist/allowlist-entries.js';
import { addDays } from '../../src/lib/days.js';
import { lookupValues, ThreatLookup } from '../../src/lookup/threat-lookup.js';
import { Database } from '../../src/db/sqlite.js';
import { withDb } from './mirror-db.js';
import { INITIAL_DAYS, KEYS, LOOKBACK_DAYS, type ModelWorld, type Organization, ORGANIZATIONS } from './model-world.js';

interface Row {
  readonly id: number;
  readonly content: string;
  readonly type: string;
  readonly blockedAt: string;
}

const key = (row: Row): string => `${row.id}|${row.content}|${row.type}|${row.blockedAt}`;

/** The organizations the file answers for: a retired one (left out of the configuration) is held to retirementProblems alone. */
function answered(db: Database): Organization[] {
  const retired = new Set(db.prepare('SELECT organization FROM organization_scopes WHERE retired_at IS NOT NULL').pluck().all() as string[]);
  return ORGANIZATIONS.filter((organization) => !retired.has(organization));
}

/** Everything a reader of one organization sees, and what the service lists for it in the scope the mirror records. */
interface Views {
  readonly current: Map<number, Row>;
  readonly enforced: Set<number>;
  readonly truth: Map<number, Row>;
  readonly ledgerDays: Set<string>;
  readonly scope: Set<string> | null;
}

function viewsOf(db: Database, world: ModelWorld, organization: Organization): Views {
  const rows = (sql: string): Row[] => db.prepare(sql).all(organization) as Row[];
  const current = new Map(rows('SELECT id, content, type, blocked_at AS blockedAt FROM current_threats WHERE organization = ?').map((row) => [row.id, row]));
  const enforced = new Set(db.prepare('SELECT id FROM enforced_threats WHERE organization = ?').pluck().all(organization) as number[]);
  const recorded = db.prepare('SELECT asset_types FROM organization_scopes WHERE organization = ?').pluck().get(organization) as string | null | undefined;
  const scope = recorded === null || recorded === undefined ? null : new Set(recorded.split(','));
  const truth = new Map(
    world.service
      .threatsVisibleTo(KEYS[organization])
      .filter((threat) => scope === null || scope.has(threat.type))
      .map(({ id, content, type, blockedAt }) => [id, { id, content, type, blockedAt }]),
  );
  const ledgerDays = new Set(db.prepare('SELECT day FROM sync_windows WHERE organization = ?').pluck().all(organization) as string[]);
  return { current, enforced, truth, ledgerDays, scope };
}

/**
 * What the file states falsely now, per organization: a current row the service does not list so
 * (unblocked, moved, changed, another organization's, or of a type out of scope), and a threat the
 * service lists on a day of the ledger that the file does not hold so.
 */
export function falseStatements(world: ModelWorld): Map<string, string> {
  return withDb(world.dbPath, (db) => {
    const found = new Map<string, string>();
    for (const organization of answered(db)) {
      const { current, truth, ledgerDays } = viewsOf(db, world, organization);
      for (const row of current.values()) {
        const listed = truth.get(row.id);
        if (listed === undefined || key(listed) !== key(row)) found.set(`${organization}:${row.id}`, `${organization} holds ${key(row)}, the service lists ${listed ? key(listed) : 'nothing'}`);
      }
      for (const listed of truth.values()) {
        const row = current.get(listed.id);
        if (ledgerDays.has(listed.blockedAt.slice(0, 10)) && (row === undefined || key(row) !== key(listed))) {
          found.set(`${organization}:${listed.id}`, `${organization} lacks ${key(listed)} on a day of its ledger`);
        }
      }
    }
    return found;
  });
}

/** After a successful incremental run: nothing the service lists in scope on the re-scanned days is missing or different. */
export function missingAfterRun(world: ModelWorld): string[] {
  const from = addDays(world.today, -LOOKBACK_DAYS);
  return withDb(world.dbPath, (db) =>
    answered(db).flatMap((organization) => {
      const { current, truth } = viewsOf(db, world, organization);
      return [...truth.values()]
        .filter((listed) => listed.blockedAt.slice(0, 10) >= from)
        .filter((listed) => current.get(listed.id) === undefined || key(current.get(listed.id) as Row) !== key(listed))
        .map((listed) => `${organization}: ${key(listed)} listed on a re-scanned day, not so in the file after a successful run`);
    }),
  );
}

/** The runs after which a false statement must be gone: a reconciliation cycle's (docs/reconciliation.md), and the run that re-scans. */
export function cycleBound(world: ModelWorld, organization: Organization, falseNow: number): number {
  return withDb(world.dbPath, (db) => {
    const pages = db.prepare('SELECT coalesce(sum(max(1, (coalesce(estimated_records, records, 0) + 99) / 100)), 0) FROM sync_windows WHERE organization = ?').pluck().get(organization) as number;
    const carried = db.prepare('SELECT count(*) FROM removal_checks WHERE organization = ?').pluck().get(organization) as number;
    return 2 * Math.ceil((pages + carried + falseNow) / world.config.budget) + 3;
  });
}

/** Succeeded incremental runs of the organization so far (daemon ticks and `--once` alike). */
export function succeededRuns(world: ModelWorld, organization: Organization): number {
  return withDb(world.dbPath, (db) => db.prepare("SELECT count(*) FROM sync_runs WHERE organization = ? AND mode = 'incremental' AND status = 'succeeded' AND stream = 'threats'").pluck().get(organization) as number);
}

/**
 * Every threat row counted once as inserted, by the run that wrote it: rows are never deleted, and
 * a page's counts commit with its rows, killed or not. An update counted as an insert (another
 * process's row carrying this page's stamp: the model's processes share one fixed clock) shows here.
 */
export function insertCountProblems(world: ModelWorld): string[] {
  return withDb(world.dbPath, (db) => {
    const rows = db.prepare('SELECT count(*) FROM threats').pluck().get() as number;
    const counted = db.prepare('SELECT coalesce(sum(threats_inserted), 0) FROM sync_runs').pluck().get() as number;
    return rows === counted ? [] : [`the runs counted ${counted} threats inserted; the file holds ${rows}`];
  });
}

/** The organizations the file holds retired now. */
export function retiredNow(world: ModelWorld): Organization[] {
  return withDb(world.dbPath, (db) => {
    const answering = answered(db);
    return ORGANIZATIONS.filter((organization) => !answering.includes(organization));
  });
}

/**
 * A retired organization has nothing in force and no row in sync_status; after a writer that ran to
 * its end (`writerStarted`), the retired are exactly those the configuration leaves out.
 */
export function retirementProblems(world: ModelWorld, writerStarted: boolean): string[] {
  return withDb(world.dbPath, (db) => {
    const problems: string[] = [];
    const answering = answered(db);
    const retired = ORGANIZATIONS.filter((organization) => !answering.includes(organization));
    for (const organization of retired) {
      const inForce = db.prepare('SELECT count(*) FROM in_force WHERE organization = ?').pluck().get(organization) as number;
      if (inForce > 0) problems.push(`${organization} is retired, yet ${inForce} of its threats are in force`);
      if (db.prepare('SELECT 1 FROM sync_status WHERE organization = ?').get(organization) !== undefined) problems.push(`${organization} is retired, yet sync_status lists it`);
    }
    const leftOut = ORGANIZATIONS.filter((organization) => !world.config.organizations.includes(organization));
    const held = new Set(db.prepare('SELECT organization FROM sync_runs').pluck().all() as string[]);
    const expected = leftOut.filter((organization) => held.has(organization));
    if (writerStarted && retired.join(',') !== expected.join(',')) problems.push(`after a writer configured with ${world.config.organizations.join(',')}, the retired are ${retired.join(',') || 'none'}, not ${expected.join(',') || 'none'}`);
    return problems;
  });
}

/** complete_through never covers a day not walked whole, nor today. */
export function completeThroughProblems(world: ModelWorld): string[] {
  return withDb(world.dbPath, (db) =>
    answered(db).flatMap((organization) => {
      const through = db.prepare('SELECT complete_through FROM sync_checkpoints WHERE organization = ?').pluck().get(organization) as string | null | undefined;
      if (through === null || through === undefined) return [];
      if (through >= world.today) return [`${organization}: complete_through ${through} covers today (${world.today})`];
      const walked = new Set(db.prepare('SELECT day FROM sync_windows WHERE organization = ? AND run_id > 0').pluck().all(organization) as string[]);
      const problems: string[] = [];
      for (let day = world.firstDays[organization]; day <= through; day = addDays(day, 1)) if (!walked.has(day)) problems.push(`${organization}: complete_through ${through} covers ${day}, never walked whole`);
      return problems;
    }),
  );
}

/**
 * Where the history held whole begins (sync_status.history_from) against the start the
 * configuration asks for, per organization that has run; and the pages the days between would
 * cost at most (a day at least one), for the bound on the runs the walk may take (docs/operations.md,
 * "Every run gets further": each run walks at least one page further).
 */
export interface HistoryGap {
  readonly organization: Organization;
  readonly target: string;
  readonly heldFrom: string | null;
  readonly pages: number;
}

export function historyGaps(world: ModelWorld): HistoryGap[] {
  // The walk off: nothing goes toward the start, so no bound holds of it.
  if (world.config.historyBudget === 0) return [];
  const target = [world.config.historyFrom ?? addDays(world.today, -(INITIAL_DAYS - 1)), world.today].sort()[0] as string;
  return withDb(world.dbPath, (db) =>
    answered(db).flatMap((organization) => {
      const status = db.prepare('SELECT complete_through AS completeThrough, history_from AS heldFrom FROM sync_status WHERE organization = ?').get(organization) as
        | { completeThrough: string | null; heldFrom: string | null }
        | undefined;
      if (status?.completeThrough === null || status?.completeThrough === undefined) return [];
      const { heldFrom, completeThrough } = status;
      if (heldFrom !== null && heldFrom <= target) return [];
      const perDay = new Map<string, number>();
      for (const listed of viewsOf(db, world, organization).truth.values()) perDay.set(listed.blockedAt.slice(0, 10), (perDay.get(listed.blockedAt.slice(0, 10)) ?? 0) + 1);
      let pages = 0;
      for (let day = target; day < (heldFrom ?? addDays(completeThrough, 1)); day = addDays(day, 1)) pages += Math.max(1, Math.ceil((perDay.get(day) ?? 0) / 100));
      return [{ organization, target, heldFrom, pages }];
    }),
  );
}

/** The allowlist as the file's table holds it (what enforced_threats reads), judged by the one matcher lookups and exports use. */
function tableMatcher(db: Database): AllowMatcher {
  const entries = db
    .prepare('SELECT line, value, kind, reason, host, path, query, address, address_namespace AS addressNamespace, address_chain AS addressChain, email FROM allowlist ORDER BY line')
    .all() as AllowEntry[];
  return new AllowMatcher(entries);
}

/** enforced_threats is current_threats without what the allowlist allows, and lookup agrees with it. */
export async function enforcementProblems(world: ModelWorld): Promise<string[]> {
  const problems: string[] = [];
  const db = new Database(world.dbPath, { readonly: true, fileMustExist: true });
  try {
    const matcher = tableMatcher(db);
    const facts = db.prepare('SELECT content, url_expression AS urlExpression, address, address_namespace AS addressNamespace, address_chain AS addressChain, email FROM threats WHERE id = ?');
    const lookup = new ThreatLookup(db);
    for (const organization of ORGANIZATIONS) {
      const { current, enforced } = viewsOf(db, world, organization);
      const expected = new Set([...current.keys()].filter((id) => matcher.threat(facts.get(id) as Parameters<AllowMatcher['threat']>[0]) === undefined));
      for (const id of expected) if (!enforced.has(id)) problems.push(`${organization}: ${id} is current and allowed by nothing, yet not in enforced_threats`);
      for (const id of enforced) if (!expected.has(id)) problems.push(`${organization}: ${id} is in enforced_threats, yet not current or allowed`);
      // Every threat the file holds, looked up by its content for this organization.
      const contents = (db.prepare('SELECT id, content FROM threats ORDER BY id').all() as Array<{ id: number; content: string }>);
      const answers = await lookupValues(lookup, contents.map((row) => row.content), { organization, allowlist: matcher });
      answers.results.forEach((result, index) => {
        const { id } = contents[index] as { id: number };
        const blocking = result.matches.filter((match) => match.allowed !== true).map((match) => match.id);
        if (enforced.has(id) && !result.blocked) problems.push(`${organization}: lookup says ${result.value} is not blocked, enforced_threats holds ${id}`);
        for (const match of blocking) if (!enforced.has(match)) problems.push(`${organization}: lookup of ${result.value} blocks by ${match}, not in enforced_threats`);
        if (result.blocked && blocking.length === 0 && result.matches_truncated !== true) problems.push(`${organization}: lookup says ${result.value} is blocked by nothing it lists`);
      });
    }
  } finally {
    db.close();
  }
  return problems;
}

/** The JSONL export (every current threat not allowed, with the organizations that block it) equals enforced_threats. */
export function exportProblems(world: ModelWorld, jsonl: string): string[] {
  const exported = new Map<number, string>();
  for (const line of jsonl.split('\n')) {
    if (line.trim() === '') continue;
    const record = JSON.parse(line) as { id: number; organizations: string[] | string };
    exported.set(record.id, [record.organizations].flat().join(',').split(',').sort().join(','));
  }
  const enforced = withDb(world.dbPath, (db) => {
    const byId = new Map<number, string[]>();
    for (const { organization, id } of db.prepare('SELECT organization, id FROM enforced_threats').all() as Array<{ organization: string; id: number }>) {
      byId.set(id, [...(byId.get(id) ?? []), organization]);
    }
    return new Map([...byId].map(([id, organizations]) => [id, organizations.sort().join(',')]));
  });
  const problems: string[] = [];
  for (const [id, organizations] of enforced) if (exported.get(id) !== organizations) problems.push(`export has ${id} for ${exported.get(id) ?? 'nobody'}, enforced_threats for ${organizations}`);
  for (const id of exported.keys()) if (!enforced.has(id)) problems.push(`export has ${id}, enforced_threats does not`);
  return problems;
}

/** The table allowlist holds the file's lines (after a command that started a writer). */
export function allowlistProblems(world: ModelWorld): string[] {
  const values = withDb(world.dbPath, (db) => db.prepare('SELECT value FROM allowlist ORDER BY line').pluck().all() as string[]);
  return JSON.stringify(values) === JSON.stringify(world.config.allowlist) ? [] : [`table allowlist holds ${JSON.stringify(values)}, the file ${JSON.stringify(world.config.allowlist)}`];
}

/**
 * A reader of the change feed as docs/schema.md tells one to read it: it keeps the last change_seq
 * it saw and copies each threat newer than that, with what every organization sees of it (each
 * link, removed or not, in scope or not). After each step its copy must be the file's: a change
 * that took no new number, or a number given again, leaves the copy behind.
 */
export class FeedReader {
  #last = 0;
  readonly #copy = new Map<number, string>();

  problems(world: ModelWorld): string[] {
    const stateOf = `t.type || ' ' || t.blocked_at || ' ' || t.content || ' ' || coalesce((SELECT group_concat(link, ',') FROM (SELECT organization || '/' || (removed_at IS NULL) || '/' || out_of_scope AS link FROM organization_threats WHERE threat_id = t.id ORDER BY organization)), '')`;
    return withDb(world.dbPath, (db) => {
      const problems: string[] = [];
      const news = db.prepare(`SELECT t.id, t.change_seq, ${stateOf} FROM threats t WHERE t.change_seq > ? ORDER BY t.change_seq`).raw().all(this.#last) as Array<[number, number, string]>;
      for (const [id, seq, state] of news) {
        this.#copy.set(id, state);
        this.#last = seq;
      }
      const file = db.prepare(`SELECT t.id, ${stateOf} FROM threats t`).raw().all() as Array<[number, string]>;
      if (file.length !== this.#copy.size) problems.push(`the change feed's reader holds ${this.#copy.size} threats, the file ${file.length}`);
      for (const [id, state] of file) {
        const copied = this.#copy.get(id);
        if (copied !== state) problems.push(`the change feed's reader holds threat ${id} as "${copied ?? '(nothing)'}", the file as "${state}": a change the feed did not give it`);
      }
      return problems.slice(0, 5);
    });
  }
}
