// A reader in its own process, as a user's service would be: it queries the mirror in a loop
// while a sync writes, and reports every error, and the ids of each snapshot it saw (one per
// number of threats) for the test to judge against the pages the service sent.
// Invariants checked here (fresh file, one organization, every record new): in any snapshot, the
// threats present equal the inserts the committed runs counted, and the count never goes back.
import { Database } from '../../dist/src/db/sqlite.js';

const [path] = process.argv.slice(2);
const report = { reads: 0, errors: [], violations: [], distinctCounts: 0, lastCount: 0, snapshots: [] };
const seen = new Set();
let stopping = false;
process.stdin.on('end', () => {
  stopping = true;
});
process.stdin.resume();

let db;
while (!stopping && db === undefined) {
  try {
    const candidate = new Database(path, { readonly: true, fileMustExist: true });
    candidate.prepare('SELECT count(*) FROM sync_runs').get();
    db = candidate;
  } catch {
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

if (db) {
  const threats = db.prepare('SELECT count(*) FROM threats').pluck();
  const links = db.prepare('SELECT count(*) FROM organization_threats').pluck();
  const inserted = db.prepare('SELECT coalesce(sum(threats_inserted), 0) FROM sync_runs').pluck();
  const ids = db.prepare('SELECT id FROM threats ORDER BY id').pluck();
  // The ids are read in the same transaction, only when the count is new: the view they judge.
  const snapshot = db.transaction(() => {
    const view = { threats: threats.get(), links: links.get(), inserted: inserted.get() };
    if (!seen.has(view.threats)) report.snapshots.push(ids.all());
    return view;
  });
  while (!stopping) {
    try {
      const view = snapshot();
      report.reads += 1;
      if (view.threats !== view.inserted || view.links !== view.threats) report.violations.push(view);
      if (view.threats < report.lastCount) report.violations.push({ ...view, went_back_from: report.lastCount });
      report.lastCount = view.threats;
      seen.add(view.threats);
    } catch (error) {
      report.errors.push(String(error));
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  db.close();
}
report.distinctCounts = seen.size;
process.stdout.write(`${JSON.stringify(report)}\n`);
