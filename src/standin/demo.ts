// `npm run demo`: the main job end to end, with no API key: start the local stand-in of the service,
// mirror two organizations with the real CLI, query the file, stop everything that was started.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Database } from '../db/sqlite.js';
import { addDays, dayOf } from '../lib/days.js';
import { generateReports, generateThreats, startStandin } from './index.js';

const CLI = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'cli.js');
const DB_PATH = join(process.cwd(), 'data', 'demo', 'threat-mirror.db');
const KEYS = { acme: 'demo-acme-key', globex: 'demo-globex-key' } as const;

async function main(): Promise<void> {
  const today = dayOf(new Date());
  const from = addDays(today, -29);
  const threats = generateThreats({ seed: 2026, organizations: ['acme', 'globex'], count: 4000, fromDay: from, toDay: today });
  const reports = generateReports({ seed: 2027, organizations: ['acme', 'globex'], count: 120, fromDay: from, toDay: today, threats });
  const standin = await startStandin({
    threats,
    reports,
    keys: { organizationKeys: { [KEYS.acme]: 'acme', [KEYS.globex]: 'globex' }, userKeys: {} },
    latencyMs: 5,
  });
  try {
    rmSync(dirname(DB_PATH), { recursive: true, force: true });
    say(`Started the local stand-in of the service at ${standin.url} with ${threats.length} generated threats and ${reports.length} reports for acme and globex over ${from}..${today}.`);
    const env = {
      PATH: process.env.PATH ?? '',
      THREAT_MIRROR_API_URL: standin.url,
      THREAT_MIRROR_DB: DB_PATH,
      THREAT_MIRROR_ORGS: 'acme,globex',
      THREAT_MIRROR_API_KEY_ACME: KEYS.acme,
      THREAT_MIRROR_API_KEY_GLOBEX: KEYS.globex,
      THREAT_MIRROR_REPORTS: '1',
      LOG_LEVEL: 'info',
    };
    await step(`threat-mirror --backfill --from ${from}`, ['--backfill', '--from', from], env);
    standin.addThreats([
      { id: 90_000_001, content: 'https://wallet-verify.example-phish.com/connect', type: 'URL', blockedAt: new Date().toISOString(), organization: 'acme' },
    ]);
    say('The service blocks one more URL for acme; an incremental run picks it up:');
    await step('threat-mirror --once', ['--once'], env);
    query();
    say('\nA script asks the same from a shell (exit 0: blocked, 1: not blocked, 3: the mirror cannot vouch for that):');
    // A variant of the blocked URL matches; another page on its host does not (issue 17).
    const values = ['HTTPS://Wallet-Verify.Example-Phish.com:443/connect#top', 'https://wallet-verify.example-phish.com/other-page', 'innocent.example'];
    await step(`threat-mirror lookup ${values.join(' ')}`, ['lookup', ...values], env, true);
    say(`\nThe file stays at ${relative(process.cwd(), DB_PATH)}: try  sqlite3 ${relative(process.cwd(), DB_PATH)} "SELECT * FROM sync_status"`);
  } finally {
    await standin.close();
  }
}

async function step(title: string, args: string[], env: Record<string, string>, echo = false): Promise<void> {
  say(`\n$ ${title}`);
  const child = spawn(CLI, args, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (echo) {
    say(stdout.trimEnd().replace(/^/gm, '  '));
    say(`  (exit ${code})`);
    return;
  }
  for (const line of stdout.split('\n')) {
    if (!line.startsWith('{')) continue;
    const log = JSON.parse(line) as Record<string, unknown>;
    if (typeof log.msg === 'string' && (log.msg.startsWith('sync of organization') || log.msg.startsWith('reports of organization'))) {
      const what = log.stream === 'reports' ? 'reports' : 'threats';
      say(`  ${String(log.organization).padEnd(7)} ${what.padEnd(8)} ${String(log.status).padEnd(9)} ${log.rangeStart}..${log.rangeEnd}  ${log.pages} pages, ${log.inserted} new, ${log.updated} changed, ${log.rejected} rejected, ${log.durationMs} ms`);
    }
  }
  if (code !== 0) throw new Error(`threat-mirror exited with ${code}`);
}

function query(): void {
  const db = new Database(DB_PATH, { readonly: true });
  try {
    const sql = `SELECT o.organization, t.type, count(*) AS threats
  FROM threats t JOIN organization_threats o ON o.threat_id = t.id
 GROUP BY o.organization, t.type ORDER BY threats DESC LIMIT 6`;
    say(`\nA reader asks the file with SQL:\n${sql}`);
    console.table(db.prepare(sql).all());
    const lookup = "SELECT id, type, blocked_at FROM threats WHERE content = 'https://wallet-verify.example-phish.com/connect'";
    say(`${lookup}\n  → ${JSON.stringify(db.prepare(lookup).get())}`);
    const rejected = "SELECT organization, count(*) AS rejected_proposals, sum(threat_id IS NOT NULL) AS blocked_anyway FROM rejected_proposals GROUP BY organization";
    say(`${rejected}`);
    console.table(db.prepare(rejected).all());
    const status = 'SELECT organization, complete_through, last_run_status, stale FROM sync_status';
    say(`${status}`);
    console.table(db.prepare(status).all());
  } finally {
    db.close();
  }
}

function say(text: string): void {
  process.stdout.write(`${text}\n`);
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`demo failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
