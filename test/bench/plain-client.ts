// The baseline the benchmark compares with: a plain script that walks one day at a time,
// one page at a time, and writes each page with a raw prepared statement. No validation,
// no retries, no checkpoints: what someone would write in an afternoon.
import Database from 'better-sqlite3';

const [url, key, dbPath, from, to] = process.argv.slice(2) as [string, string, string, string, string];
const started = performance.now();
const db = new Database(dbPath);
db.pragma('journal_mode = WAL');
db.pragma('synchronous = NORMAL');
db.exec('CREATE TABLE IF NOT EXISTS threats (id INTEGER PRIMARY KEY, content TEXT NOT NULL, type TEXT NOT NULL, blocked_at TEXT NOT NULL)');
const upsert = db.prepare(
  'INSERT INTO threats (id, content, type, blocked_at) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET content = excluded.content, type = excluded.type, blocked_at = excluded.blocked_at',
);
type Page = { threats: Array<{ id: number; content: string; type: string; blockedAt: string }>; next_page: string | null };
const writePage = db.transaction((page: Page) => {
  for (const threat of page.threats) upsert.run(threat.id, threat.content, threat.type, threat.blockedAt);
});

let requests = 0;
let records = 0;
for (let day = from; day <= to; day = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)) {
  let nextPage: string | null = null;
  do {
    const response = await fetch(`${url}/threats/list`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify({ startDate: day, endDate: day, per_page: 100, ...(nextPage ? { next_page: nextPage } : {}) }),
    });
    requests += 1;
    const page = (await response.json()) as Page;
    writePage(page);
    records += page.threats.length;
    nextPage = page.next_page;
  } while (nextPage !== null);
}
db.close();
process.stdout.write(`${JSON.stringify({ requests, records, ms: performance.now() - started })}\n`);
