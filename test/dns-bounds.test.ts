// The DNS primary's TCP listener within bounds decided before any work is queued
// (src/dns/tcp-admission.ts, tcp-session.ts): a client outside THREAT_MIRROR_DNS_ALLOW (here
// 127.0.0.9: Linux answers on all of 127.0.0.0/8) neither runs the serving thread's heap out nor
// holds a place a secondary needs, and an allowed client that pipelines without reading, or
// trickles bytes, is cut off; all the while the daemon serves, and the sync goes on. One daemon for
// the file.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateThreats, type Standin, startStandin } from '../src/standin/index.js';
import { CliProcess, runCli, servingPort } from './support/cli.js';
import { closedWithin, connectFrom, pipelineWithoutReading, residentMb, trickle } from './support/dns-clients.js';
import { skipWithout } from './support/judges.js';
import { dig, freePort, stopAll, ZONE } from './support/secondaries.js';
import { until } from './support/until.js';
import { mirrorEnvFor, organizationKey } from './support/service.js';
import { apartFromSerial, recordsOf, zoneFileRecords } from './support/zone-records.js';

const NOW = '2026-03-15T12:00:00.000Z';
const KEY = 'acme-dns-bounds-key';
const OUTSIDE = '127.0.0.9';

let standin: Standin;
let daemon: CliProcess;
let dnsPort: number;
let httpPort: number;
let env: Record<string, string>;
let dir: string;

const succeededRuns = (): number => daemon.logs.filter((line) => line.msg === 'sync of organization "acme" succeeded').length;

/** The daemon is whole: running, /healthz answers, the zone's SOA answers an allowed client, and a next run succeeds. */
async function expectServingAndSyncing(): Promise<void> {
  expect(daemon.running, `the daemon exited; stdout:\n${daemon.stdout.slice(-3000)}`).toBe(true);
  expect((await fetch(`http://127.0.0.1:${httpPort}/healthz`)).status).toBe(200);
  expect(dig(['@127.0.0.1', '-p', String(dnsPort), ZONE, 'SOA']).status).toBe('NOERROR');
  const before = succeededRuns();
  await daemon.waitForLog(() => succeededRuns() > before);
}

async function metric(pattern: RegExp): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${httpPort}/metrics`)).text();
  return Number(pattern.exec(text)?.[1] ?? 0);
}

describe.skipIf(skipWithout(['dig']))('the DNS primary over TCP, within bounds', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'threat-mirror-dns-bounds-'));
    const today = NOW.slice(0, 10);
    standin = await startStandin({ threats: generateThreats({ seed: 38, organizations: ['acme'], count: 4_000, fromDay: addDays(today, -2), toDay: today, hostile: false }), keys: organizationKey(KEY), now: () => new Date(NOW) });
    dnsPort = await freePort();
    env = mirrorEnvFor(KEY, NOW)(standin, join(dir, 'mirror.db'), {
      THREAT_MIRROR_INITIAL_DAYS: '3',
      THREAT_MIRROR_SCHEDULE: '*/2 * * * * *',
      THREAT_MIRROR_HTTP_PORT: '0',
      THREAT_MIRROR_DNS_PORT: String(dnsPort),
      THREAT_MIRROR_DNS_ALLOW: '127.0.0.1/32',
    });
    daemon = new CliProcess([], env);
    httpPort = await servingPort(daemon);
    await daemon.waitForLog((line) => line.msg === 'zone changed');
  }, 60_000);

  afterAll(() => stopAll({ secondaries: [], daemon, standin, dir }));

  it('case 2: a client outside the allow list that pipelines queries and never reads its answers is cut off; the daemon serves on and syncs', async () => {
    const socket = await connectFrom(OUTSIDE, dnsPort);
    const closed = closedWithin(socket);
    let peakMb = 0;
    const sampler = setInterval(() => void residentMb(daemon.child.pid ?? 0).then((mb) => (peakMb = Math.max(peakMb, mb))), 100);
    // Before the fix the daemon's heap ran out after 9-11 MB: 40 MB is far past it.
    const attack = await pipelineWithoutReading(socket, { limitBytes: 40 * 1024 * 1024, stallMs: 5_000 });
    clearInterval(sampler);
    socket.destroy();
    expect(daemon.running, `the daemon exited; stdout:\n${daemon.stdout.slice(-3000)}`).toBe(true);
    expect(attack.ended).toBe('closed');
    // One query answered REFUSED, then the connection closed: within the pool's lifetime.
    expect(await closed).toBeLessThan(5_000);
    expect(attack.sent).toBeLessThan(10 * 1024 * 1024);
    expect(peakMb).toBeLessThan(400);
    await expectServingAndSyncing();
    // A TCP query from there is answered REFUSED, as over UDP.
    expect(dig(['-b', OUTSIDE, '+tcp', '@127.0.0.1', '-p', String(dnsPort), ZONE, 'SOA']).status).toBe('REFUSED');
  }, 60_000);

  it('case 3: 70 connections from outside the allow list, kept open with a byte every few seconds, hold no place a secondary needs: an allowed AXFR gets the whole zone', async () => {
    const outsiders: Socket[] = [];
    const closings: Array<Promise<number>> = [];
    for (let index = 0; index < 70; index += 1) {
      const socket = await connectFrom(OUTSIDE, dnsPort).catch(() => undefined);
      if (socket === undefined) continue;
      closings.push(closedWithin(socket));
      trickle(socket, 2_000);
      outsiders.push(socket);
    }
    try {
      const axfr = dig(['@127.0.0.1', '-p', String(dnsPort), ZONE, 'AXFR']);
      expect(axfr.text).toMatch(/XFR size: \d+ records/);
      const exported = await runCli(['export', '--format', 'rpz'], env);
      expect(apartFromSerial(recordsOf(axfr.text))).toEqual(apartFromSerial(zoneFileRecords(exported.stdout, ZONE)));
      // Every one of them is closed within seconds: at once beyond the outsiders' pool, after its short life within it.
      const closedAfter = await Promise.all(closings);
      expect(Math.max(...closedAfter)).toBeLessThan(10_000);
    } finally {
      for (const socket of outsiders) socket.destroy();
    }
    await expectServingAndSyncing();
  }, 60_000);

  it('an allowed client that pipelines queries and never reads is no longer read, then cut off once it reads nothing for 20 s; the daemon stays whole meanwhile', async () => {
    const socket = await connectFrom('127.0.0.1', dnsPort);
    let peakMb = 0;
    const sampler = setInterval(() => void residentMb(daemon.child.pid ?? 0).then((mb) => (peakMb = Math.max(peakMb, mb))), 100);
    const attack = await pipelineWithoutReading(socket, { limitBytes: 200 * 1024 * 1024, stallMs: 3_000 });
    // The server stopped reading: the client's writes stall with a few MB in the kernel's buffers.
    expect(attack.ended).toBe('stalled');
    expect(attack.sent).toBeLessThan(20 * 1024 * 1024);
    expect(daemon.running).toBe(true);
    expect(dig(['@127.0.0.1', '-p', String(dnsPort), ZONE, 'SOA']).status).toBe('NOERROR');
    // Cut off by the primary (a client that reads nothing does not see it until it reads).
    await until('the primary cuts the slow reader off', async () => (await metric(/^threat_mirror_dns_tcp_closed_total\{reason="slow-reader"\} (\d+)$/m)) >= 1, 35_000);
    clearInterval(sampler);
    // What it reads now is what was sent before the cut: then the end, at once.
    const closed = closedWithin(socket);
    socket.resume();
    expect(await closed).toBeLessThan(5_000);
    expect(peakMb).toBeLessThan(400);
    await expectServingAndSyncing();
  }, 90_000);

  it('an allowed client that trickles a query a byte at a time is closed once it has sent no whole query for 10 s', async () => {
    const socket = await connectFrom('127.0.0.1', dnsPort);
    const closed = closedWithin(socket);
    trickle(socket, 1_000);
    // Before: every byte reset a 30 s idle timer, so the connection lived as long as the client liked.
    expect(await closed).toBeLessThan(20_000);
    await until('the zone answers', () => dig(['@127.0.0.1', '-p', String(dnsPort), ZONE, 'SOA']).status === 'NOERROR', 5_000);
  }, 40_000);
});
