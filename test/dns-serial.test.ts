// The zone's serial across the lives of its primary, judged by BIND as its secondary, beside the
// daemon's rpz export file (which carries the same serial). A restart on the same volume that
// changed nothing (after a kill or a stop) keeps the serial (BIND transfers nothing); one after a
// change made while stopped (a host allowed) moves past it, and BIND follows; a primary built
// anew (a new pod without a replica, a volume lost) serves a serial after the old one, so BIND
// follows it. Serials from the mirror's change_seq, as before, failed here: the rebuilt primary's
// was behind the old one's, and BIND kept the old zone, blind to the threat blocked since.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Standin, StandinThreat } from '../src/standin/index.js';
import { startStandin } from '../src/standin/index.js';
import { serialAfter } from '../src/lib/rpz-zone.js';
import { CliProcess } from './support/cli.js';
import { skipWithout } from './support/judges.js';
import { dig, freePort, type Secondary, startBind, stopAll, ZONE } from './support/secondaries.js';
import { until } from './support/until.js';
import { mirrorEnvFor } from './support/service.js';
import { recordsOf, serialOf, zoneFileRecords } from './support/zone-records.js';

const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const KEY = 'acme-serial-key';
/** The restart and the new pod come later: their clocks (THREAT_MIRROR_NOW) have moved on. */
const AN_HOUR_LATER = '2026-03-15T13:00:00.000Z';
const TWO_HOURS_LATER = '2026-03-15T14:00:00.000Z';

let nextId = 8_500_000;
function threat(content: string): StandinThreat {
  nextId += 1;
  return { id: nextId, content, type: 'URL', blockedAt: `${TODAY}T09:${String(nextId % 60).padStart(2, '0')}:00.000Z`, organization: 'acme' };
}

const soaSerial = (port: number): number => serialOf(recordsOf(dig(['@127.0.0.1', '-p', String(port), ZONE, 'SOA']).text));
const zoneChanges = (daemon: CliProcess): number => daemon.logs.filter((line) => line.msg === 'zone changed').length;
const runs = (daemon: CliProcess): number => daemon.logs.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('sync of organization') && line.status === 'succeeded').length;

/** Applies `change` to the service and resolves once the daemon's zone changed after it. */
async function zoneChangeAfter(daemon: CliProcess, change: () => void): Promise<void> {
  const before = zoneChanges(daemon);
  change();
  await daemon.waitForLog(() => zoneChanges(daemon) > before);
}

let standin: Standin | undefined;
let daemon: CliProcess | undefined;
const secondaries: Secondary[] = [];
const dir = mkdtempSync(join(tmpdir(), 'threat-mirror-serial-'));

afterAll(() => stopAll({ secondaries, daemon, standin, dir }));

describe.skipIf(skipWithout(['named', 'dig']))("the zone's serial across restarts and rebuilds of its primary", () => {
  it('a restart that changed nothing keeps the serial, the rpz file the same; one after a host was allowed moves past it; a primary built anew serves a later one; BIND follows each', async () => {
    const service = await startStandin({ threats: [threat('https://tm-serial-a.com/'), threat('https://tm-serial-b.com/'), threat('https://tm-serial-c.com/')], keys: { organizationKeys: { [KEY]: 'acme' }, userKeys: {} }, now: () => new Date(NOW) });
    standin = service;
    const [dnsPort, bindPort] = [await freePort(), await freePort()];
    // Each volume's daemon also writes the rpz export file: at start the zone takes its serial when
    // its names are the index's, or moves past both (ExportRefresher.adoptZoneSerial).
    const rpzFile = (dbPath: string): string => join(dirname(dbPath), 'threats.rpz');
    const fileSerial = (dbPath: string): number => serialOf(zoneFileRecords(readFileSync(rpzFile(dbPath), 'utf8'), ZONE));
    const allowlist = join(dir, 'allow.txt');
    const primary = (dbPath: string, now: string, extra: Record<string, string> = {}): CliProcess =>
      new CliProcess(
        [],
        mirrorEnvFor(KEY, now)(service, dbPath, {
          ...extra,
          THREAT_MIRROR_EXPORTS: `rpz=${rpzFile(dbPath)}`,
          THREAT_MIRROR_INITIAL_DAYS: '2',
          THREAT_MIRROR_SCHEDULE: '*/2 * * * * *',
          THREAT_MIRROR_DNS_PORT: String(dnsPort),
          THREAT_MIRROR_DNS_ALLOW: '127.0.0.1/32',
          THREAT_MIRROR_DNS_NOTIFY: `127.0.0.1:${bindPort}`,
          LOG_LEVEL: 'info',
        }),
      );
    const first = join(dir, 'first-volume', 'mirror.db');
    daemon = primary(first, NOW);
    const started = daemon;
    await started.waitForLog((line) => line.msg === 'zone changed' && Number(line.hosts) > 0);
    const bind = await startBind(join(dir, 'bind'), dnsPort, bindPort);
    secondaries.push(bind);
    await until('BIND blocks the first threats', () => bind.blocks('tm-serial-a.com'), 20_000, bind.log);
    // A threat blocked, then unblocked: the mirror's change_seq runs ahead of its count of threats.
    const passing = threat('https://tm-serial-passing.com/');
    await zoneChangeAfter(started, () => service.addThreats([passing]));
    await zoneChangeAfter(started, () => service.removeThreats([passing.id]));
    const held = soaSerial(dnsPort);
    await until('BIND holds the serial', () => soaSerial(bindPort) === held, 20_000, bind.log);
    // Killed: the index is left as it was, its WAL too.
    await started.stop('SIGKILL');

    // A restart on the same volume, nothing changed: the serial BIND holds, so it transfers nothing.
    daemon = primary(first, AN_HOUR_LATER);
    const restarted = daemon;
    await restarted.waitForLog(() => runs(restarted) >= 2);
    expect(soaSerial(dnsPort)).toBe(held);
    expect(fileSerial(first)).toBe(held);
    await zoneChangeAfter(restarted, () => service.addThreats([threat('https://tm-serial-after-restart.com/')]));
    await until('BIND follows the restarted primary', () => bind.blocks('tm-serial-after-restart.com'), 20_000, bind.log);
    const beforeRebuild = soaSerial(dnsPort);
    expect(serialAfter(beforeRebuild, held)).toBe(true);
    // Stopped: the scratch folder is emptied but for the index, and the next start keeps its serial too.
    await restarted.stop('SIGTERM');
    daemon = primary(first, AN_HOUR_LATER);
    const again = daemon;
    await again.waitForLog(() => runs(again) >= 2);
    expect(soaSerial(dnsPort)).toBe(beforeRebuild);
    expect(fileSerial(first)).toBe(beforeRebuild);
    await again.stop('SIGTERM');

    // Stopped, and a host allowed meanwhile: the zone the next start builds has a passthru name the
    // index and the rpz file left lack, so its serial moves past both, and BIND lets the host through.
    writeFileSync(allowlist, 'tm-serial-b.com\n');
    daemon = primary(first, AN_HOUR_LATER, { THREAT_MIRROR_ALLOWLIST: allowlist });
    const allowing = daemon;
    await allowing.waitForLog(() => runs(allowing) >= 2);
    const allowed = soaSerial(dnsPort);
    expect(serialAfter(allowed, beforeRebuild)).toBe(true);
    expect(fileSerial(first)).toBe(allowed);
    await until('BIND lets the allowed host through', async () => !(await bind.blocks('tm-serial-b.com')), 20_000, bind.log);
    expect(await bind.blocks('tm-serial-a.com')).toBe(true);
    await allowing.stop('SIGTERM');

    // A new pod without a replica: a new volume, the history walked again.
    daemon = primary(join(dir, 'new-volume', 'mirror.db'), TWO_HOURS_LATER);
    const rebuilt = daemon;
    await rebuilt.waitForLog((line) => line.msg === 'zone changed' && Number(line.hosts) > 0);
    await zoneChangeAfter(rebuilt, () => service.addThreats([threat('https://tm-serial-after-rebuild.com/')]));
    expect(serialAfter(soaSerial(dnsPort), allowed)).toBe(true);
    await until('BIND follows the rebuilt primary to the threat blocked since', () => bind.blocks('tm-serial-after-rebuild.com'), 20_000, bind.log);
    expect(soaSerial(bindPort)).toBe(soaSerial(dnsPort));
  }, 120_000);

  it.skipIf(skipWithout(['dig']))('a restart whose schedule gives the SOA other timers moves the serial past the old one, without an rpz file; one that changes nothing keeps it', async () => {
    const service = await startStandin({ threats: [threat('https://tm-timers-a.com/')], keys: { organizationKeys: { [KEY]: 'acme' }, userKeys: {} }, now: () => new Date(NOW) });
    standin = service;
    const dnsPort = await freePort();
    const dbPath = join(dir, 'timers-volume', 'mirror.db');
    // The SOA's serial and its four timers, as a secondary reads them.
    const soa = (): { serial: number; timers: string } => {
      const record = recordsOf(dig(['@127.0.0.1', '-p', String(dnsPort), ZONE, 'SOA']).text).find((line) => line.split(' ')[3] === 'soa') ?? '';
      const fields = record.split(' ');
      return { serial: Number(fields[6]), timers: fields.slice(7).join(' ') };
    };
    const start = async (schedule: string): Promise<CliProcess> => {
      const started = new CliProcess(
        [],
        mirrorEnvFor(KEY, AN_HOUR_LATER)(service, dbPath, { THREAT_MIRROR_INITIAL_DAYS: '2', THREAT_MIRROR_SCHEDULE: schedule, THREAT_MIRROR_DNS_PORT: String(dnsPort), THREAT_MIRROR_DNS_ALLOW: '127.0.0.1/32', LOG_LEVEL: 'info' }),
      );
      daemon = started;
      await started.waitForLog((line) => line.msg === 'export index built');
      await started.waitForLog(() => runs(started) >= 1);
      return started;
    };
    let running = await start('0 * * * *');
    const hourly = soa();
    expect(hourly.timers).toBe('3600 720 864000 300');
    await running.stop('SIGTERM');
    // Daily runs: a secondary must learn the new refresh and retry, so the serial moves.
    running = await start('0 3 * * *');
    const daily = soa();
    expect(daily.timers).toBe('86400 17280 864000 300');
    expect(serialAfter(daily.serial, hourly.serial)).toBe(true);
    await running.stop('SIGTERM');
    // The same schedule again: nothing changed, the serial stays.
    running = await start('0 3 * * *');
    expect(soa()).toEqual(daily);
    await running.stop('SIGTERM');
  }, 60_000);
});
