// At the writer's start: when the lookup rules (url/lookup-rules.ts) are newer than those the
// stored rows were derived under, every row is derived again, a batch per transaction that also
// records how far it got (a start killed midway resumes there). Rows whose columns change move in
// the change feed. Without this, a row mirrored before a fix kept the old answer until the
// service sent it changed, which a threat's content never is.
import { LOOKUP_RULES_VERSION } from '../../url/lookup-rules.js';
import { LOOKUP_RULES_KEY, LOOKUP_RULES_PROGRESS_KEY } from '../setting-keys.js';
import type { DeriveLookupFields } from '../sql/threat-rows.js';
import type { WriteStatements } from '../sql/statements.js';

/** Rows per transaction: a few milliseconds each, so a start at a million rows commits every few. */
const BATCH_ROWS = 2_000;

/** What deriving the rows again did: rows read, and those whose columns changed. */
export interface LookupRulesUpgrade {
  readonly rows: number;
  readonly changed: number;
}

export async function upgradeLookupRules(
  { settings, threats }: Pick<WriteStatements, 'settings' | 'threats'>,
  inTransaction: <T>(write: () => T) => T,
  derive: () => Promise<DeriveLookupFields>,
  now: string,
): Promise<LookupRulesUpgrade | undefined> {
  if (Number(settings.value(LOOKUP_RULES_KEY) ?? 0) >= LOOKUP_RULES_VERSION) return undefined;
  const [version, lastDone] = (settings.value(LOOKUP_RULES_PROGRESS_KEY) ?? '').split(':');
  let after = Number(version) === LOOKUP_RULES_VERSION ? Number(lastDone) : Number.MIN_SAFE_INTEGER;
  let rows = 0;
  let changed = 0;
  // An empty mirror (a first start) follows the current rules already; the Public Suffix List is loaded only for rows.
  const fieldsOf = threats.storedAfter(after) ? await derive() : undefined;
  for (let done = fieldsOf === undefined; !done; ) {
    done = inTransaction(() => {
      const batch = threats.rederiveLookups(after, BATCH_ROWS, fieldsOf as DeriveLookupFields);
      if (batch.lastId === undefined) return true;
      after = batch.lastId;
      rows += batch.read;
      changed += batch.changed;
      settings.record(LOOKUP_RULES_PROGRESS_KEY, `${LOOKUP_RULES_VERSION}:${after}`, now);
      return false;
    });
  }
  inTransaction(() => {
    settings.record(LOOKUP_RULES_KEY, String(LOOKUP_RULES_VERSION), now);
    settings.delete(LOOKUP_RULES_PROGRESS_KEY);
  });
  return rows === 0 ? undefined : { rows, changed };
}
