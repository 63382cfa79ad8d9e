// `npm run bench:listeners`: the serving thread's listeners under attack (issue 38).
// 1. The real daemon (the built CLI against the stand-in, BENCH_THREATS threats, default 20,000),
//    its DNS primary allowing 127.0.0.1 only: its RSS (sampled every 100 ms) at idle, while a
//    client outside the allow list (127.0.0.9) pipelines SOA queries without reading, reconnecting
//    whenever it is cut off, for 20 s; while one allowed client does the same until the primary
//    cuts it off; and while 16 allowed clients do (the cap for one address). /healthz after each.
// 2. The zone of a mirror of BENCH_ZONE_THREATS threats (default 1,000,000; the mirror written
//    straight into a migrated file, export-mirror.ts), served by the DNS primary in this process:
//    an allowed AXFR (dig, from 127.0.0.1) timed alone, then while 70 connections from outside the
//    allow list hold on (hold-outsiders.ts, a child: a byte every 20 s, reopened at once when closed).
// BENCH_PARTS=daemon|zone runs one of them. Numbers, not assertions: docs/performance.md.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseCidr } from '../../src/config/dns.js';
import { InFlightBudget } from '../../src/serve/http-limits.js';
import { runExportJob } from '../../src/export/jobs/export-job-client.js';
import { AddressAcl } from '../../src/dns/acl.js';
import { startDnsServer } from '../../src/dns/dns-server.js';
import { ZoneReader } from '../../src/dns/zone-reader.js';
import { addDays } from '../../src/lib/days.js';
import { zoneTimersFor } from '../../src/lib/rpz-zone.js';
import { generateThreats, startStandin } from '../../src/standin/index.js';
import { connectFrom, pipelineWithoutReading } from '../support/dns-clients.js';
import { freePort } from '../support/dns-tools.js';
import { writeBenchMirror } from './export-mirror.js';

const NOW = '2026-03-15T12:00:00.000Z';
const KEY = 'bench-listeners-key';
const COUNT = Number(process.env.BENCH_THREATS ?? 20_000);
const ZONE_COUNT = Number(process.env.BENCH_ZONE_THREATS ?? 1_000_000);
const ZONE = 'rpz.threat-mirror';
const CLI = fileURLToPath(new URL('../../bin/cli.js', import.meta.url));
const HOLDER = fileURLToPath(new URL('./hold-outsiders.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'threat-mirror-bench-listeners-'));
const load = (): string => loadavg().map((value) => value.toFixed(2)).join(' ');

function rssMb(pid: number): number {
  try {
    return Number(/^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
  } catch {
    return 0;
  }
}

/** Runs `work` while sampling the RSS of `pid` every 100 ms; its result and the peak. */
async function sampled<T>(pid: number, work: () => Promise<T>): Promise<{ result: T; peakMb: number }> {
  let peakMb = rssMb(pid);
  const timer = setInterval(() => (peakMb = Math.max(peakMb, rssMb(pid))), 100);
  try {
    return { result: await work(), peakMb };
  } finally {
    clearInterval(timer);
  }
}

async function healthzMs(port: number): Promise<string> {
  const started = performance.now();
  const response = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
  return response === undefined ? 'no answer' : `${response.status} in ${(performance.now() - started).toFixed(0)} ms`;
}

/** Pipelines from `source` without reading for `seconds`, reconnecting whenever cut off; bytes sent and connections made. */
async function pipelineFor(dnsPort: number, source: string, seconds: number): Promise<{ connections: number; sentMb: number; cutOffs: number }> {
  const until = Date.now() + seconds * 1000;
  let connections = 0;
  let sent = 0;
  let cutOffs = 0;
  while (Date.now() < until) {
    const socket = await connectFrom(source, dnsPort).catch(() => undefined);
    connections += 1;
    if (socket === undefined) continue;
    const attack = await pipelineWithoutReading(socket, { limitBytes: 1024 ** 3, stallMs: Math.max(100, until - Date.now()) });
    sent += attack.sent;
    if (attack.ended === 'closed') cutOffs += 1;
    socket.destroy();
  }
  return { connections, sentMb: sent / 2 ** 20, cutOffs };
}

async function daemonUnderAttack(): Promise<void> {
  const today = NOW.slice(0, 10);
  const standin = await startStandin({ threats: generateThreats({ seed: 38, organizations: ['acme'], count: COUNT, fromDay: addDays(today, -3), toDay: today, hostile: false }), keys: { organizationKeys: { [KEY]: 'acme' }, userKeys: {} }, now: () => new Date(NOW) });
  const dnsPort = await freePort();
  const daemon = spawn(CLI, [], {
    env: { PATH: process.env.PATH ?? '', THREAT_MIRROR_API_URL: standin.url, THREAT_MIRROR_DB: join(dir, 'mirror.db'), THREAT_MIRROR_ORG: 'acme', THREAT_MIRROR_API_KEY: KEY, THREAT_MIRROR_NOW: NOW, THREAT_MIRROR_INITIAL_DAYS: '4', THREAT_MIRROR_SCHEDULE: '0 0 1 1 *', THREAT_MIRROR_HTTP_PORT: '0', THREAT_MIRROR_DNS_PORT: String(dnsPort), THREAT_MIRROR_DNS_ALLOW: '127.0.0.1/32' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  daemon.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  const httpPort = await until(() => Number(/"port":(\d+),"lookupToken"/.exec(output)?.[1]) || undefined);
  await until(() => (output.includes('"msg":"zone changed"') ? true : undefined));
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  const pid = daemon.pid ?? 0;
  console.log(`\ndaemon of ${COUNT} threats; load average ${load()}\n\n| phase | peak RSS MB | what the clients saw | /healthz after |\n|---|---:|---|---|`);
  const idle = await sampled(pid, () => new Promise((resolve) => setTimeout(resolve, 5_000)));
  console.log(`| idle, 5 s | ${idle.peakMb.toFixed(0)} | | ${await healthzMs(httpPort)} |`);
  const outside = await sampled(pid, () => pipelineFor(dnsPort, '127.0.0.9', 20));
  console.log(`| 127.0.0.9 (outside) pipelines without reading, 20 s, reconnecting | ${outside.peakMb.toFixed(0)} | ${outside.result.connections} connections, ${outside.result.sentMb.toFixed(1)} MB of queries taken, ${outside.result.cutOffs} cut off | ${await healthzMs(httpPort)} |`);
  const started = performance.now();
  const allowed = await sampled(pid, async () => {
    const socket = await connectFrom('127.0.0.1', dnsPort);
    const attack = await pipelineWithoutReading(socket, { limitBytes: 1024 ** 3, stallMs: 3_000 });
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      socket.resume();
    });
    return attack;
  });
  console.log(`| 127.0.0.1 (allowed) pipelines without reading, one connection | ${allowed.peakMb.toFixed(0)} | ${(allowed.result.sent / 2 ** 20).toFixed(1)} MB taken before the primary stopped reading; cut off after ${((performance.now() - started) / 1000).toFixed(1)} s | ${await healthzMs(httpPort)} |`);
  const many = await sampled(pid, () => Promise.all(Array.from({ length: 16 }, () => pipelineFor(dnsPort, '127.0.0.1', 25))));
  const taken = many.result.reduce((sum, one) => sum + one.sentMb, 0);
  console.log(`| 16 allowed connections (the cap for one address) pipeline without reading, 25 s | ${many.peakMb.toFixed(0)} | ${taken.toFixed(1)} MB taken in all | ${await healthzMs(httpPort)} |`);
  daemon.kill('SIGTERM');
  await new Promise((resolve) => daemon.once('exit', resolve));
  await standin.close();
}

async function until<T>(found: () => T | undefined, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = found();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** dig's AXFR of the zone from 127.0.0.1 (a child: the primary answers on this process's event loop meanwhile): seconds, and what dig counted. */
async function axfr(port: number): Promise<{ seconds: number; summary: string }> {
  const started = performance.now();
  const child = spawn('dig', ['+time=60', '+tries=1', '+noall', '+stats', '@127.0.0.1', '-p', String(port), ZONE, 'AXFR'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
  await new Promise((resolve) => child.once('exit', resolve));
  return { seconds: (performance.now() - started) / 1000, summary: /XFR size: .*/.exec(output)?.[0] ?? `no transfer: ${output.slice(-300).replace(/\n/g, ' ')}` };
}

async function zoneUnderHeldConnections(): Promise<void> {
  const dbPath = join(dir, 'zone-mirror.db');
  const indexPath = join(dir, 'exports', 'index.db');
  let started = performance.now();
  writeBenchMirror(dbPath, ZONE_COUNT);
  console.log(`\nmirror of ${ZONE_COUNT} threats written in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  started = performance.now();
  const timers = zoneTimersFor(600);
  const built = await runExportJob({ kind: 'refresh', dbPath, indexPath, rebuild: true, atStart: false, targets: [], timers, refresher: undefined, allowlist: undefined, nowMs: Date.now() }, () => undefined);
  console.log(`export index built in ${((performance.now() - started) / 1000).toFixed(1)} s: ${built.index?.hosts} hosts`);
  const zone = new ZoneReader(indexPath, { zone: ZONE, timers });
  zone.markReady();
  const closed = new Map<string, number>();
  const server = await startDnsServer({
    host: '127.0.0.1',
    port: 0,
    acl: new AddressAcl([parseCidr('127.0.0.1/32')].filter((cidr) => cidr !== undefined)),
    zone,
    memory: new InFlightBudget(),
    observer: { answered: () => undefined, malformed: () => undefined, transferred: () => undefined, failed: (...args) => console.error(args), tcpClosed: (reason) => closed.set(reason, (closed.get(reason) ?? 0) + 1), error: (error) => console.error(error) },
  });
  try {
    console.log(`\n| AXFR of the ${ZONE_COUNT}-threat zone from 127.0.0.1 (dig) | seconds | dig |\n|---|---:|---|`);
    for (let round = 1; round <= 2; round += 1) {
      const alone = await axfr(server.port);
      console.log(`| alone (${round}) | ${alone.seconds.toFixed(2)} | ${alone.summary} |`);
    }
    const holder: ChildProcess = spawn(process.execPath, [HOLDER, String(server.port), '127.0.0.9', '70'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let held = '';
    holder.stdout?.setEncoding('utf8').on('data', (chunk: string) => (held += chunk));
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    for (let round = 1; round <= 2; round += 1) {
      const contested = await axfr(server.port);
      console.log(`| while 70 connections from 127.0.0.9 hold on (${round}) | ${contested.seconds.toFixed(2)} | ${contested.summary} |`);
    }
    holder.kill('SIGTERM');
    await new Promise((resolve) => holder.once('exit', resolve));
    console.log(`\nthe holder: ${held.trim()}; closed by the primary: ${JSON.stringify(Object.fromEntries(closed))}; load average ${load()}`);
  } finally {
    await server.close();
    zone.close();
  }
}

console.log(`load average at start: ${load()}`);
// BENCH_PARTS=daemon or zone runs one of the two.
const parts = process.env.BENCH_PARTS ?? 'daemon,zone';
try {
  if (parts.includes('daemon')) await daemonUnderAttack();
  if (parts.includes('zone')) await zoneUnderHeldConnections();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
