// Exports kept current by the daemon (THREAT_MIRROR_EXPORTS), and an export killed mid-write.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, onTestFailed } from 'vitest';
import type { Standin, StandinThreat } from '../src/standin/index.js';
import { type CliProcess, runCli, servingPort, startCli } from './support/cli.js';
import { mirrorEnvFor, startTestStandin } from './support/service.js';
import { tempDir } from './support/temp.js';

const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const KEY = 'acme-export-daemon-key';

let nextId = 7_000_000;
function urlThreat(content: string, organization = 'acme'): StandinThreat {
  nextId += 1;
  return { id: nextId, content, type: 'URL', blockedAt: `${TODAY}T10:${String(nextId % 60).padStart(2, '0')}:00.000Z`, organization };
}

function startService(threats: StandinThreat[]): Promise<Standin> {
  return startTestStandin({ threats, keys: { organizationKeys: { [KEY]: 'acme', 'globex-key': 'globex' }, userKeys: {} }, now: () => new Date(NOW) });
}

const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_INITIAL_DAYS: '3' });

const logsOf = (process: CliProcess, msg: string, path: string): number => process.logs.filter((line) => line.msg === msg && line.path === path).length;
const unchanged = (process: CliProcess, path: string): number =>
  process.logs.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('export unchanged') && line.path === path).length;
const mtimeOf = (path: string): bigint => statSync(path, { bigint: true }).mtimeNs;
const serialOf = (zone: string): number => Number(/SOA \S+ \S+ (\d+)/.exec(zone)?.[1]);

describe('THREAT_MIRROR_EXPORTS in the daemon', () => {
  it('rewrites an export after a run that changed it, and leaves it untouched (same mtime) after runs that did not', async () => {
    const service = await startService([urlThreat('https://first-host.com/'), urlThreat('https://shared.com/forms/1')]);
    const dir = tempDir();
    const rpz = join(dir, 'exports', 'threats.rpz');
    const hosts = join(dir, 'exports', 'hosts.txt');
    const daemon = startCli([], env(service, join(dir, 'mirror.db'), {
      THREAT_MIRROR_SCHEDULE: '* * * * * *',
      THREAT_MIRROR_HTTP_PORT: '0',
      THREAT_MIRROR_EXPORTS: `rpz=${rpz},hosts=${hosts}`,
      LOG_LEVEL: 'debug',
    }));
    const watched = daemon;
    onTestFailed(() => console.log(watched.stdout.split('\n').filter((line) => !line.includes('"page') && !line.includes('no change in the mirror')).slice(-40).join('\n')));
    const port = await servingPort(daemon);
    const running = daemon;
    await running.waitForLog(() => logsOf(running, 'export written', rpz) === 1 && logsOf(running, 'export written', hosts) === 1);
    expect(readFileSync(hosts, 'utf8')).toMatch(/\n0\.0\.0\.0 first-host\.com\n$/);
    const firstZone = readFileSync(rpz, 'utf8');
    const [rpzTime, hostsTime] = [mtimeOf(rpz), mtimeOf(hosts)];

    // Runs with nothing new: the files stay as they are.
    await running.waitForLog(() => unchanged(running, rpz) >= 2 && unchanged(running, hosts) >= 2);
    expect([mtimeOf(rpz), mtimeOf(hosts)]).toEqual([rpzTime, hostsTime]);

    // A new threat that no host list carries (a path-level block): the mirror changed, the files did not
    // (the export index read that threat alone and found no host changed: nothing was even rendered).
    const seqBefore = Math.max(0, ...running.logs.filter((line) => line.path === rpz && typeof line.changeSeq === 'number').map((line) => line.changeSeq as number));
    service.addThreats([urlThreat('https://shared.com/forms/2')]);
    await running.waitForLog((line) => line.msg === 'export unchanged (no change in its hosts)' && line.path === rpz && (line.changeSeq as number) > seqBefore);
    expect([mtimeOf(rpz), mtimeOf(hosts)]).toEqual([rpzTime, hostsTime]);
    expect(logsOf(running, 'export written', rpz)).toBe(1);

    // A new whole-host block: both files are rewritten, the zone's serial grows.
    service.addThreats([urlThreat('https://second-host.com/')]);
    await running.waitForLog(() => logsOf(running, 'export written', rpz) === 2 && logsOf(running, 'export written', hosts) === 2);
    const zone = readFileSync(rpz, 'utf8');
    expect(zone).toContain('\nsecond-host.com CNAME .\n*.second-host.com CNAME .\n');
    expect(serialOf(zone)).toBeGreaterThan(serialOf(firstZone));
    expect(mtimeOf(rpz)).not.toBe(rpzTime);
    expect(readdirSync(join(dir, 'exports')).sort()).toEqual(['hosts.txt', 'threats.rpz']);

    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toContain(`threat_mirror_export_entries{format="rpz",path="${rpz}"} 2`);
    const lastWrite = Number(new RegExp(`threat_mirror_export_last_write_timestamp_seconds\\{format="hosts",path="${hosts}"\\} (\\S+)`).exec(metrics)?.[1]);
    expect(lastWrite).toBeCloseTo(statSync(hosts).mtimeMs / 1000, 2);

    running.kill('SIGTERM');
    expect((await running.exited).code).toBe(0);
  });

  it('refuses a bad THREAT_MIRROR_EXPORTS with exit 2 before touching anything', async () => {
    const service = await startService([]);
    const dir = tempDir();
    const result = await runCli(['--once'], env(service, join(dir, 'mirror.db'), { THREAT_MIRROR_EXPORTS: 'zone=/tmp/x' }));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/THREAT_MIRROR_EXPORTS: "zone" is not a format/);
    expect(existsSync(join(dir, 'mirror.db'))).toBe(false);
  });
});

describe('an export killed while it writes', () => {
  it('leaves the previous file intact; the next export replaces it and clears the leftover', async () => {
    // Large records, so that writing the CSV takes long enough to be caught in the middle.
    const big = Array.from({ length: 1200 }, (_, index) => urlThreat(`https://big-${index}.com/${'p'.repeat(40_000)}`, index % 4 === 0 ? 'globex' : 'acme'));
    const service = await startService(big);
    const dir = tempDir();
    const dbPath = join(dir, 'mirror.db');
    const both = mirrorEnvFor({ acme: KEY, globex: 'globex-key' }, NOW, { THREAT_MIRROR_INITIAL_DAYS: '3' })(service, dbPath, { LOG_LEVEL: 'warn' });
    expect((await runCli(['--once'], both)).code).toBe(0);
    const out = join(dir, 'threats.csv');
    expect((await runCli(['export', '--format', 'csv', '--org', 'globex', '--out', out], both)).code).toBe(0);
    const previous = readFileSync(out);

    const exporting = startCli(['export', '--format', 'csv', '--out', out], both);
    const temp = await new Promise<string>((resolve, reject) => {
      const poll = setInterval(() => {
        const name = readdirSync(dir).find((entry) => entry.startsWith('.threats.csv.') && entry.endsWith('.tmp'));
        if (name !== undefined && statSync(join(dir, name)).size > 0) {
          clearInterval(poll);
          exporting.kill('SIGKILL');
          resolve(name);
        } else if (exporting.child.exitCode !== null) {
          clearInterval(poll);
          reject(new Error(`the export finished before it could be killed: ${exporting.stderr}`));
        }
      }, 2);
    });
    expect((await exporting.exited).signal).toBe('SIGKILL');
    expect(readFileSync(out).equals(previous)).toBe(true);
    expect(existsSync(join(dir, temp))).toBe(true);

    const again = await runCli(['export', '--format', 'csv', '--out', out], both);
    expect(again.stderr).toMatch(/csv: 1200 threats; written to/);
    expect(readFileSync(out, 'utf8').split('\r\n').length - 2).toBe(1200);
    expect(readdirSync(dir).filter((entry) => entry.endsWith('.tmp'))).toEqual([]);
  });
});
