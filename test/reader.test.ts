// Readers in other processes never see an error or a partial page while a sync writes.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateThreats } from '../src/standin/index.js';
import { runCli } from './support/cli.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDbPath } from './support/temp.js';
import { pagesServed, partialPages } from './support/whole-pages.js';

const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const READER = join(dirname(fileURLToPath(import.meta.url)), 'support', 'reader-process.mjs');

const env = mirrorEnvFor('acme-key', NOW);

it('a reader in another process sees whole pages only, and no errors', async () => {
  const standin = await serveThreats('acme-key', NOW, generateThreats({ seed: 31, organizations: ['acme'], count: 12_000, fromDay: addDays(TODAY, -29), toDay: TODAY }));
  standin.setLatency(2);
  const dbPath = tempDbPath();
  const reader = spawn(process.execPath, [READER, dbPath], { stdio: ['pipe', 'pipe', 'inherit'] });
  let output = '';
  reader.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const readerDone = new Promise<void>((resolve) => reader.on('close', () => resolve()));
  const result = await runCli(['--backfill', '--from', addDays(TODAY, -29)], env(standin, dbPath));
  reader.stdin.end();
  await readerDone;
  expect(result.code).toBe(0);
  const report = JSON.parse(output) as { reads: number; errors: string[]; violations: unknown[]; distinctCounts: number; lastCount: number; snapshots: number[][] };
  expect(report.errors).toEqual([]);
  expect(report.violations).toEqual([]);
  // Judged by the service's pages, not the program's counters: each is in a snapshot whole or not at all.
  const pages = pagesServed(standin);
  expect(pages.length).toBeGreaterThanOrEqual(120);
  expect(report.snapshots).toHaveLength(report.distinctCounts);
  for (const ids of report.snapshots) expect(partialPages(new Set(ids), pages)).toEqual([]);
  // The reader really did look while pages were landing, not only before or after.
  expect(report.distinctCounts).toBeGreaterThan(5);
  expect(report.lastCount).toBe(12_000);
});
