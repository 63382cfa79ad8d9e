// The export benchmark's DNS part: the export index built from the mirror by the daemon's refresh
// job, the DNS primary (src/dns/) serving it from this process, and a real BIND as its secondary.
// Measured: the full zone's AXFR to BIND (records, seconds, as BIND reports the transfer and as the
// primary timed it), then, after a change of 100 threats (50 hosts added, 50 removed) and the
// index's refresh, the IXFR BIND asks for when NOTIFYed.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseCidr } from '../../src/config/dns.js';
import { DNS_ALLOW } from '../../src/config/variables.js';
import { AddressAcl } from '../../src/dns/acl.js';
import { startDnsServer } from '../../src/dns/dns-server.js';
import { Notifier } from '../../src/dns/notify.js';
import { ZoneReader } from '../../src/dns/zone-reader.js';
import { runExportJob } from '../../src/export/jobs/export-job-client.js';
import { InFlightBudget } from '../../src/serve/http-limits.js';
import { zoneTimersFor } from '../../src/lib/rpz-zone.js';
import { changeBenchMirror } from './export-mirror.js';

const ZONE = 'rpz.threat-mirror';
const TIMERS = zoneTimersFor(600);

export interface TransferFigures {
  readonly indexBuildMs: number;
  readonly zoneHosts: number;
  readonly axfr: { readonly records: number; readonly primaryMs: number; readonly bind: string };
  readonly change: { readonly refreshMs: number; readonly threatsRead: number };
  readonly ixfr: { readonly records: number; readonly primaryMs: number; readonly notifyToLoadedMs: number; readonly bind: string };
}

export function bindPath(): string | undefined {
  const found = spawnSync('sh', ['-c', 'command -v named || ls /usr/sbin/named'], { encoding: 'utf8' }).stdout.trim().split('\n')[0];
  return found === '' || found === undefined ? undefined : found;
}

export async function measureTransfers(dbPath: string, dir: string, threats: number): Promise<TransferFigures> {
  const indexPath = join(dir, 'exports', 'index.db');
  const started = performance.now();
  const built = await runExportJob({ kind: 'refresh', dbPath, indexPath, rebuild: true, atStart: false, targets: [], timers: TIMERS, refresher: undefined, allowlist: undefined, nowMs: Date.now() }, () => undefined);
  const indexBuildMs = performance.now() - started;
  const transfers: Array<{ kind: string; records: number; ms: number }> = [];
  const zone = new ZoneReader(indexPath, { zone: ZONE, timers: TIMERS });
  zone.markReady();
  const server = await startDnsServer({
    host: '127.0.0.1',
    port: 0,
    acl: new AddressAcl(DNS_ALLOW.default.split(',').map((cidr) => parseCidr(cidr)).filter((cidr) => cidr !== undefined)),
    zone,
    observer: {
      answered: () => undefined,
      malformed: () => undefined,
      tcpClosed: () => undefined,
      transferred: (kind, records, ms) => transfers.push({ kind, records, ms }),
      failed: (_transport, _kind, _answer, error) => console.error(error),
      error: (error) => console.error(error),
    },
    memory: new InFlightBudget(),
  });
  const bind = await startBind(join(dir, 'bind'), server.port);
  try {
    const axfrLine = await bind.waitFor(/Transfer completed: .*/, 600_000);
    const axfr = transfers.shift();
    if (axfr === undefined) throw new Error('BIND says it transferred the zone, but the primary sent none');
    const firstNew = threats + 1_000;
    changeBenchMirror(dbPath, { added: 50, removed: 50, firstNewIndex: firstNew, salt: 'ixfr-' });
    const refreshStarted = performance.now();
    const refreshed = await runExportJob({ kind: 'refresh', dbPath, indexPath, rebuild: false, atStart: false, targets: [], timers: TIMERS, refresher: undefined, allowlist: undefined, nowMs: Date.now() }, () => undefined);
    const refreshMs = performance.now() - refreshStarted;
    const serial = refreshed.index?.state.serial ?? 0;
    const notifier = new Notifier({ source: '127.0.0.1', settings: { zone: ZONE, timers: TIMERS }, targets: [{ host: '127.0.0.1', port: bind.port }], observer: { notified: () => undefined } });
    const notified = performance.now();
    notifier.notify(serial);
    const ixfrLine = await bind.waitFor(new RegExp(`Transfer completed: .*`), 60_000, 1);
    const notifyToLoadedMs = performance.now() - notified;
    notifier.close();
    const ixfr = transfers.shift();
    if (ixfr === undefined || ixfr.kind !== 'incremental') throw new Error(`expected an incremental transfer, got ${JSON.stringify(ixfr)}`);
    return {
      indexBuildMs,
      zoneHosts: built.index?.hosts ?? 0,
      axfr: { records: axfr.records, primaryMs: axfr.ms, bind: axfrLine },
      change: { refreshMs, threatsRead: refreshed.change?.threatsRead ?? 0 },
      ixfr: { records: ixfr.records, primaryMs: ixfr.ms, notifyToLoadedMs, bind: ixfrLine },
    };
  } finally {
    await bind.stop();
    await server.close();
    zone.close();
  }
}

interface Bind {
  readonly port: number;
  /** The `skip`-th (0-based) line of BIND's log matching `pattern`, once it is there. */
  waitFor(pattern: RegExp, timeoutMs: number, skip?: number): Promise<string>;
  stop(): Promise<void>;
}

/** BIND as a secondary of the zone (the configuration of docs/dns.md), on a free port of its own. */
async function startBind(dir: string, primaryPort: number): Promise<Bind> {
  mkdirSync(dir, { recursive: true });
  const port = await freeUdpTcpPort();
  writeFileSync(join(dir, 'named.conf'), `options {
  directory "${dir}";
  pid-file "named.pid";
  listen-on port ${port} { 127.0.0.1; };
  listen-on-v6 { none; };
  recursion yes;
  allow-query { 127.0.0.1; };
  dnssec-validation no;
  notify no;
  response-policy { zone "${ZONE}" min-update-interval 0; } qname-wait-recurse no;
};
controls { };
zone "${ZONE}" { type secondary; file "tm.rpz.db"; primaries { 127.0.0.1 port ${primaryPort}; }; allow-notify { 127.0.0.1; }; };
`);
  const child: ChildProcess = spawn(bindPath() ?? 'named', ['-c', join(dir, 'named.conf'), '-g', '-u', 'root'], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  const append = (chunk: Buffer): void => {
    log += chunk.toString();
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = once(child, 'exit');
  return {
    port,
    waitFor: async (pattern, timeoutMs, skip = 0) => {
      const global = new RegExp(pattern.source, 'g');
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const found = [...log.matchAll(global)][skip];
        if (found !== undefined) return found[0];
        if (child.exitCode !== null) throw new Error(`named exited:\n${log.slice(-2000)}`);
        if (Date.now() > deadline) throw new Error(`named did not log ${pattern} within ${timeoutMs} ms:\n${log.slice(-2000)}`);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    },
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

async function freeUdpTcpPort(): Promise<number> {
  const { createServer } = await import('node:net');
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  return typeof address === 'object' && address !== null ? address.port : 0;
}
