// `threat-mirror status`: what a person or a script checks, read without writing.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateThreats } from '../src/standin/index.js';
import { runCli } from './support/cli.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath, tempDir } from './support/temp.js';

const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);

it('shows checkpoints, open work, recent runs and counts, and leaves the file untouched', async () => {
  const standin = await serveThreats('acme-key', NOW, generateThreats({ seed: 51, organizations: ['acme'], count: 400, fromDay: addDays(TODAY, -9), toDay: TODAY }));
  const dbPath = tempDbPath();
  const env = mirrorEnvFor('acme-key', NOW)(standin, dbPath);
  expect((await runCli(['--once'], env)).code).toBe(0);
  const before = readFileSync(dbPath);
  // A reader needs only the file: no service URL, no key (the clock of the sync, so that it is fresh: exit 0).
  const reader = { THREAT_MIRROR_DB: dbPath, THREAT_MIRROR_NOW: NOW };
  const json = await runCli(['status', '--json'], reader);
  expect(json.code).toBe(0);
  const status = JSON.parse(json.stdout) as { organizations: Array<Record<string, unknown>> };
  expect(status.organizations).toMatchObject([
    {
      organization: 'acme',
      completeThrough: addDays(TODAY, -1),
      assetTypes: null,
      threats: standin.threatsVisibleTo('acme-key').filter((threat) => threat.blockedAt.slice(0, 10) >= addDays(TODAY, -29)).length,
      rejectedRecords: 0,
      openPlans: [],
      recentRuns: [{ stream: 'threats', mode: 'incremental', status: 'succeeded' }],
    },
  ]);
  const text = await runCli(['status'], reader);
  expect(text.code).toBe(0);
  const holds = `  holds             ${addDays(TODAY, -29)} through ${addDays(TODAY, -1)}\\n  history           whole from ${addDays(TODAY, -29)}, the configured start\\n`;
  expect(text.stdout).toMatch(new RegExp(`^acme\\n  sync              synced and fresh \\(last success ${TODAY}T12:00:\\S+\\)\\n  complete through  ${addDays(TODAY, -1)}\\n${holds}  asset types       every type\\n  threats           \\d+`));
  expect(text.stdout).toMatch(/#1 threats incremental .* succeeded/);
  expect(readFileSync(dbPath).equals(before)).toBe(true);
  const missing = await runCli(['status'], { THREAT_MIRROR_DB: join(tempDir(), 'none.db') });
  // Exit 2 and the variable named, as lookup, export and snapshot answer a missing database.
  expect(missing.code).toBe(2);
  expect(missing.stderr).toMatch(/THREAT_MIRROR_DB: no database at .*none\.db/);
});
