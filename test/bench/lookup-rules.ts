// `npm run bench:lookup-rules`: what a writer's start costs once after the lookup rules changed
// (src/url/lookup-rules.ts): every stored row derived again (db/writer/lookup-rules-upgrade.ts).
// A mirror of BENCH_SIZE threats (default 1,000,000 over a year) is backfilled from the stand-in;
// then, BENCH_RUNS times (default 3), its record of the rules is removed (as a file an earlier
// version wrote has none) and an `--once` with nothing new is timed, then one without the upgrade.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Database } from '../../src/db/sqlite.js';
import { addDays } from '../../src/lib/days.js';
import { generateThreats, startStandin } from '../../src/standin/index.js';

const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const FROM = addDays(TODAY, -364);
const CLI = fileURLToPath(new URL('../../bin/cli.js', import.meta.url));
const SIZE = Number(process.env.BENCH_SIZE ?? 1_000_000);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);

/** The CLI's wall time and its log lines. */
function timed(args: readonly string[], env: NodeJS.ProcessEnv): Promise<{ seconds: number; logs: Array<Record<string, unknown>> }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    execFile(CLI, [...args], { env, maxBuffer: 2 ** 30 }, (error, stdout) => {
      if (error) return reject(error);
      const logs = stdout.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
      resolve({ seconds: (performance.now() - started) / 1000, logs });
    });
  });
}

const threats = generateThreats({ seed: 1, organizations: ['acme'], count: SIZE, fromDay: FROM, toDay: TODAY });
const service = await startStandin({ threats, keys: { organizationKeys: { 'bench-key': 'acme' }, userKeys: {} }, now: () => new Date(NOW) });
const folder = mkdtempSync(join(tmpdir(), 'tm-bench-rules-'));
const dbPath = join(folder, 'mirror.db');
const env = { PATH: process.env.PATH, THREAT_MIRROR_API_URL: service.url, THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_ORG: 'acme', THREAT_MIRROR_API_KEY: 'bench-key', THREAT_MIRROR_NOW: NOW, THREAT_MIRROR_RECONCILE_MAX_REQUESTS: '0' };
try {
  const backfill = await timed(['--backfill', '--from', FROM], env);
  console.log(`${SIZE.toLocaleString('en')} threats backfilled in ${backfill.seconds.toFixed(1)} s (load ${loadavg()[0]?.toFixed(1)})`);
  for (let run = 1; run <= RUNS; run += 1) {
    const db = new Database(dbPath);
    db.prepare("DELETE FROM mirror_settings WHERE key LIKE 'lookup_rules%'").run();
    db.close();
    const upgraded = await timed(['--once'], env);
    const derived = upgraded.logs.find((line) => String(line.msg).startsWith('derived the lookup columns again'));
    const plain = await timed(['--once'], env);
    console.log(
      `run ${run}: --once deriving every row again ${upgraded.seconds.toFixed(2)} s (${String(derived?.threats)} rows, ${String(derived?.changed)} changed); ` +
        `--once after it ${plain.seconds.toFixed(2)} s; load ${loadavg()[0]?.toFixed(1)}`,
    );
  }
} finally {
  await service.close();
  rmSync(folder, { recursive: true, force: true });
}
