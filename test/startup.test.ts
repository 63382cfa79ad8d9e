// The container's health: /startupz and healthcheck.js turn healthy once every organization has
// synced once (or the file already held a mirror), and stay healthy while the process lives.
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateThreats, type Standin } from '../src/standin/index.js';
import { afterThisTest } from './support/cleanup.js';
import { type CliProcess, runCli, servingPort, startCli } from './support/cli.js';
import { type Env, EVERY_SECOND_DAEMON, mirrorEnvFor, startTestStandin } from './support/service.js';
import { tempDbPath } from './support/temp.js';

const HEALTHCHECK_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'src', 'daemon', 'healthcheck.js');
const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const KEYS = { acme: 'acme-startup-key', globex: 'globex-startup-key', initech: 'initech-startup-key' } as const;

function startService(): Promise<Standin> {
  return startTestStandin({
    threats: generateThreats({ seed: 7, organizations: ['acme', 'globex', 'initech'], count: 300, fromDay: addDays(TODAY, -4), toDay: TODAY }),
    keys: { organizationKeys: { [KEYS.acme]: 'acme', [KEYS.globex]: 'globex', [KEYS.initech]: 'initech' }, userKeys: {} },
    now: () => new Date(NOW),
  });
}

/** A daemon mirroring `organizations`, each with its own key. */
function env(service: Standin, dbPath: string, organizations: ReadonlyArray<keyof typeof KEYS>): Env {
  const keys = Object.fromEntries(organizations.map((name) => [name, KEYS[name]]));
  return mirrorEnvFor(keys, NOW, { THREAT_MIRROR_INITIAL_DAYS: '5', ...EVERY_SECOND_DAEMON })(service, dbPath);
}

async function startDaemon(environment: Record<string, string>): Promise<{ daemon: CliProcess; port: number }> {
  const daemon = startCli([], environment);
  return { daemon, port: await servingPort(daemon) };
}

async function get(port: number, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** The image's HEALTHCHECK command, run as Docker runs it: its exit code is the verdict. */
async function healthcheck(port: number): Promise<number> {
  return (await healthcheckRun(port)).code;
}

function healthcheckRun(port: number): Promise<{ code: number; stdout: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [HEALTHCHECK_PATH], { env: { THREAT_MIRROR_HTTP_PORT: String(port) } }, (error, stdout) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : -1, stdout });
    });
  });
}

const runOf = (organization: string, status: string) => (line: Record<string, unknown>) =>
  line.msg === `sync of organization "${organization}" ${status}` || (status === 'failed' && typeof line.msg === 'string' && line.msg.startsWith(`sync of organization "${organization}" failed`));

describe('startup health (/startupz and the container HEALTHCHECK)', () => {
  it('turns healthy only once every organization has synced once, then stays healthy while runs fail', async () => {
    const service = await startService();
    service.faults.setRandom({ kind: 'status', status: 503 }, 1, { key: KEYS.globex });
    const { daemon, port } = await startDaemon(env(service, tempDbPath(), ['acme', 'globex']));

    await daemon.waitForLog(runOf('acme', 'succeeded'));
    await daemon.waitForLog(runOf('globex', 'failed'));
    const waiting = await get(port, '/startupz');
    expect(waiting.status).toBe(503);
    expect(waiting.body).toMatchObject({ started: false, waitingFor: ['globex'] });
    expect((await get(port, '/healthz')).status).toBe(200);
    expect(await healthcheck(port)).toBe(1);

    service.faults.clear();
    await daemon.waitForLog(runOf('globex', 'succeeded'));
    expect(await get(port, '/startupz')).toEqual({ status: 200, body: { started: true, waitingFor: [] } });
    expect(await healthcheck(port)).toBe(0);

    // The service fails from now on: readiness follows, the container's health does not.
    service.faults.setRandom({ kind: 'status', status: 503 }, 1);
    const failedBefore = daemon.logs.filter(runOf('acme', 'failed')).length;
    await daemon.waitForLog(() => daemon.logs.filter(runOf('acme', 'failed')).length > failedBefore);
    expect((await get(port, '/readyz')).status).toBe(503);
    expect((await get(port, '/startupz')).status).toBe(200);
    expect(await healthcheck(port)).toBe(0);

    daemon.kill('SIGTERM');
    expect((await daemon.exited).code).toBe(0);
  });

  it('counts a file that already holds a mirror at once, and waits for an organization it does not hold', async () => {
    const service = await startService();
    const dbPath = tempDbPath();
    expect((await runCli(['--once'], { ...env(service, dbPath, ['acme', 'globex']), THREAT_MIRROR_HTTP_PORT: '' })).code).toBe(0);
    // From here no request is ever answered: whatever the daemons report comes from the file.
    service.faults.setRandom({ kind: 'hang' }, 1);

    const held = await startDaemon(env(service, dbPath, ['acme', 'globex']));
    expect(await get(held.port, '/startupz')).toEqual({ status: 200, body: { started: true, waitingFor: [] } });
    expect(await healthcheck(held.port)).toBe(0);
    expect(held.daemon.logs.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('sync of organization'))).toEqual([]);
    held.daemon.kill('SIGTERM');
    expect((await held.daemon.exited).code).toBe(0);

    const added = await startDaemon(env(service, dbPath, ['acme', 'globex', 'initech']));
    expect(await get(added.port, '/startupz')).toEqual({ status: 503, body: { started: false, waitingFor: ['initech'] } });
    expect(await healthcheck(added.port)).toBe(1);
    added.daemon.kill('SIGTERM');
    expect((await added.daemon.exited).code).toBe(0);
  });

  it("shows what answers on the port with its control characters escaped and cut short: a terminal reading Docker's health log is not rewritten", async () => {
    // Whatever holds the port once the daemon is gone answers the probe.
    const server = createServer((_, response) => response.writeHead(503).end(`\u001b]0;owned\u0007\u001b[2J\u009b31m${'x'.repeat(100_000)}`));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    afterThisTest('processes', () => new Promise<void>((resolve) => server.close(() => resolve())));
    const { code, stdout } = await healthcheckRun((server.address() as AddressInfo).port);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^\/healthz: 503 \\u001b\]0;owned\\u0007\\u001b\[2J\\u009b31mx+\n/m);
    expect(stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
    expect(stdout.length).toBeLessThan(2 * 600);
  });

  it('reads no more than it shows of a body without end, and answers at once', async () => {
    const endless = createServer((_, response) => {
      response.writeHead(503);
      const more = (): void => {
        while (!response.destroyed && response.write('y'.repeat(64 * 1024)));
        if (!response.destroyed) response.once('drain', more);
      };
      more();
    });
    await new Promise<void>((resolve) => endless.listen(0, '127.0.0.1', resolve));
    afterThisTest('processes', () => new Promise<void>((resolve) => endless.close(() => resolve())));
    const started = performance.now();
    const { code, stdout } = await healthcheckRun((endless.address() as AddressInfo).port);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^\/healthz: 503 y{500}\n/m);
    // Loose for a loaded machine; reading the body to its end waited out the 4 s timeout, holding all it read.
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it("gives up on a body that drips a byte at a time after its 4 s deadline, well within Docker's 5 s timeout", async () => {
    const dripping = createServer((_, response) => {
      response.writeHead(503);
      const drip = setInterval(() => response.write('z'), 200);
      response.on('close', () => clearInterval(drip));
    });
    await new Promise<void>((resolve) => dripping.listen(0, '127.0.0.1', resolve));
    afterThisTest('processes', () => new Promise<void>((resolve) => { dripping.closeAllConnections(); dripping.close(() => resolve()); }));
    const started = performance.now();
    const { code, stdout } = await healthcheckRun((dripping.address() as AddressInfo).port);
    expect(code).toBe(1);
    expect(stdout).toMatch(/^\/healthz: (503 z+|no answer within 4000 ms)$/m);
    // The deadline, not the socket's idleness (a byte every 200 ms keeps it busy): without it the probe never ends.
    expect(performance.now() - started).toBeGreaterThan(3_900);
    expect(performance.now() - started).toBeLessThan(8_000);
  });
});
