// The writer thread holds every page handed to it and not yet committed, of every window of every
// organization at once, in a heap capped at 16 MB. Each window bounded its own pages only, so four
// organizations backfilled together (sixteen windows in flight) ended the thread with "JS heap out
// of memory" (3 runs of 3 before the fix; two organizations of 100,000 threats each: about half the
// runs). A batch of 2M characters now commits before the thread takes the next page off its port
// (db/writer/commit-queue.ts). The stand-in runs as its own process, as users run it: in the
// test's process it answered too slowly for the pages to pile up.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it } from 'vitest';
import { addDays, dayOf } from '../src/lib/days.js';
import { afterThisTest } from './support/cleanup.js';
import { CLI_PATH } from './support/cli.js';
import { withDb } from './support/mirror-db.js';
import { tempDbPath } from './support/temp.js';

const STANDIN_CLI = join(import.meta.dirname, '..', 'dist', 'src', 'standin', 'cli.js');
const ORGANIZATIONS = ['acme', 'globex', 'initech', 'umbrella'];
const THREATS = 200_000;

/** The stand-in's CLI on a port of its choosing: its URL once it listens. */
async function standinProcess(): Promise<string> {
  const child = spawn(process.execPath, [STANDIN_CLI, '--port', '0', '--orgs', ORGANIZATIONS.join(','), '--threats', String(THREATS), '--days', '60', '--reports', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  afterThisTest('servers', async () => {
    child.kill('SIGTERM');
    if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve));
  });
  const [line] = await createInterface({ input: child.stdout })[Symbol.asyncIterator]().next().then((next) => [next.value as string]);
  return (JSON.parse(line as string) as { url: string }).url;
}

describe('organizations backfilled together', () => {
  it('fit the writer thread heap: four of 50,000 threats each, every one mirrored whole', { timeout: 180_000 }, async () => {
    const url = await standinProcess();
    const dbPath = tempDbPath();
    const keys = Object.fromEntries(ORGANIZATIONS.map((organization) => [`THREAT_MIRROR_API_KEY_${organization.toUpperCase()}`, `standin-${organization}-key`]));
    // The stand-in's "today" is the machine's: ten days' margin either side of its 60.
    const from = addDays(dayOf(new Date()), -70);
    // Run as `node dist/bin/cli.js`, without the shebang's caps on the main thread's heap, its log
    // going nowhere: a main thread slowed by either fetched too slowly for the pages to pile up
    // (the old code passed 3 runs of 3 under the shebang; the writer's room is the same bound either way).
    const backfill = spawn(process.execPath, [CLI_PATH, '--backfill', '--from', from], {
      env: { PATH: process.env.PATH ?? '', THREAT_MIRROR_API_URL: url, THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_ORGS: ORGANIZATIONS.join(','), ...keys, THREAT_MIRROR_REPORTS: '0' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    afterThisTest('processes', () => void backfill.kill('SIGKILL'));
    let stderr = '';
    backfill.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const code = await new Promise((resolve) => backfill.once('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
    const held = withDb(dbPath, (db) => db.prepare('SELECT organization, count(*) AS threats FROM in_force GROUP BY organization ORDER BY organization').all() as Array<{ organization: string; threats: number }>);
    expect(held.map((row) => row.organization)).toEqual(ORGANIZATIONS);
    expect(held.reduce((sum, row) => sum + row.threats, 0)).toBe(THREATS);
  });
});
