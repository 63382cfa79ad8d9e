// The baseline the benchmark compares with: a plain script that walks one day at a time,
// one page at a time, and writes each page with raw prepared statements, a row at a time.
// No validation, no retries, no checkpoints: what someone would write in an afternoon.
//
// Two kinds of database, so the comparison can isolate what it is about:
// - `bare`: one table, no index but the primary key, as the afternoon script would make it;
// - `mirror`: the same database threat-mirror leaves (its migrations; the lookup columns derived
//   by the same function; the organization link), so the difference left is the client itself:
//   validation, checkpoints, ledger, logging, and what the mirror does about latency.
import { Database } from '../../src/db/sqlite.js';
import { openWritableMirror } from '../support/writable-mirror.js';
import { deriveLookupFields } from '../../src/url/lookup-fields.js';

const [url, key, dbPath, from, to, kind = 'bare'] = process.argv.slice(2) as [string, string, string, string, string, string?];
if (kind !== 'bare' && kind !== 'mirror') throw new Error(`unknown database kind ${kind}: bare or mirror`);

type Threat = { id: number; content: string; type: string; blockedAt: string };
type Page = { threats: Threat[]; next_page: string | null };

const started = performance.now();
const writePage = kind === 'bare' ? bareWriter(dbPath) : await mirrorWriter(dbPath);

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
    writePage.write(page);
    records += page.threats.length;
    nextPage = page.next_page;
  } while (nextPage !== null);
}
writePage.close();
process.stdout.write(`${JSON.stringify({ requests, records, ms: performance.now() - started })}\n`);

function bareWriter(path: string): { write(page: Page): void; close(): void } {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE IF NOT EXISTS threats (id INTEGER PRIMARY KEY, content TEXT NOT NULL, type TEXT NOT NULL, blocked_at TEXT NOT NULL)');
  const upsert = db.prepare(
    'INSERT INTO threats (id, content, type, blocked_at) VALUES (?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET content = excluded.content, type = excluded.type, blocked_at = excluded.blocked_at',
  );
  const write = db.transaction((page: Page) => {
    for (const threat of page.threats) upsert.run(threat.id, threat.content, threat.type, threat.blockedAt);
  });
  return { write, close: () => db.close() };
}

async function mirrorWriter(path: string): Promise<{ write(page: Page): void; close(): void }> {
  const { sqlite, close } = await openWritableMirror(path);
  let changeSeq = 0;
  const upsert = sqlite.prepare(
    `INSERT INTO threats (id, content, type, blocked_at, first_seen_at, updated_at, change_seq, host, registrable_domain,
                          address_namespace, address_chain, address, email, email_domain, url_expression, export_host, export_left_out)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT(id) DO UPDATE SET content = excluded.content, type = excluded.type, blocked_at = excluded.blocked_at`,
  );
  // The benchmark's one organization.
  const link = sqlite.prepare("INSERT INTO organization_threats (organization, threat_id, first_seen_at) VALUES ('bench', ?, ?) ON CONFLICT DO NOTHING");
  const write = sqlite.transaction((page: Page) => {
    const now = new Date().toISOString();
    for (const threat of page.threats) {
      const fields = deriveLookupFields(threat.type, threat.content);
      upsert.run(threat.id, threat.content, threat.type, threat.blockedAt, now, now, (changeSeq += 1), fields.host, fields.registrableDomain,
        fields.addressNamespace, fields.addressChain, fields.address, fields.email, fields.emailDomain, fields.urlExpression, fields.exportHost, fields.exportLeftOut);
      link.run(threat.id, now);
    }
  });
  return { write, close };
}
