// A reader as a service on a read-only mount runs one: `readonly: true`, in a directory it cannot
// write. It opens the file, reads one consistent snapshot, and prints what it saw as JSON.
// Invariant (one organization, every record new): the threats present equal the inserts the
// runs counted, since a page and its run's counts commit in one transaction.
import { Database } from '../../dist/src/db/sqlite.js';

const [path] = process.argv.slice(2);
try {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  const read = db.transaction(() => ({
    threats: db.prepare('SELECT count(*) FROM threats').pluck().get(),
    links: db.prepare('SELECT count(*) FROM organization_threats').pluck().get(),
    inserted: db.prepare('SELECT coalesce(sum(threats_inserted), 0) FROM sync_runs').pluck().get(),
    quickCheck: db.prepare('PRAGMA quick_check').pluck().get(),
    ids: db.prepare('SELECT id FROM threats ORDER BY id').pluck().all(),
  }));
  const view = read();
  const journalMode = db.pragma('journal_mode', { simple: true });
  db.close();
  process.stdout.write(`${JSON.stringify({ ok: true, uid: process.getuid?.(), journalMode, ...view })}\n`);
} catch (error) {
  process.stdout.write(`${JSON.stringify({ ok: false, uid: process.getuid?.(), code: error.code, message: error.message })}\n`);
}
