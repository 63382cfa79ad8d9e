// Every handler of the serving thread runs inside one guard (src/serve/guard.ts): what throws is
// answered (400 for a malformed request, 500 otherwise), logged with its route, counted in
// threat_mirror_serving_errors_total, and never ends the thread, so no request ends the daemon.
import { request } from 'node:http';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CliProcess, servingPort, startCli } from './support/cli.js';
import { EVERY_SECOND_DAEMON, mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDir } from './support/temp.js';

const KEY = 'acme-guard-key';
const NOW = '2026-03-15T12:00:00.000Z';
const TOKEN = '0c8d2f6e4b1a9c7d5e3f1a2b4c6d8e0f';
const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_INITIAL_DAYS: '2', ...EVERY_SECOND_DAEMON });

/** One raw GET (the path as written, not normalized by a URL parser); its status and body, or the error. */
function get(port: number, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: string } | Error> {
  return new Promise((resolve) => {
    const sent = request({ host: '127.0.0.1', port, path, headers }, (response) => {
      let body = '';
      response.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      response.on('error', resolve);
    });
    sent.on('error', resolve);
    sent.end();
  });
}

const succeededRuns = (daemon: CliProcess): number => daemon.logs.filter((line) => line.msg === 'sync of organization "acme" succeeded').length;

async function metricValue(port: number, pattern: RegExp): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return Number(pattern.exec(text)?.[1] ?? 0);
}

describe('the guard of the HTTP routes', () => {
  for (const token of [undefined, TOKEN]) {
    it(`case 1: GET /v1/exports/ with a malformed percent-escape is answered 400, logged with its route and counted; the daemon serves on and syncs (${token === undefined ? 'no token' : 'with the token'})`, async () => {
      const service = await serveThreats(KEY, NOW, [{ id: 1, content: 'https://tm-guard-phish.com/', type: 'URL', blockedAt: '2026-03-15T10:00:00.000Z', organization: 'acme' }]);
      const dbPath = join(tempDir(), 'mirror.db');
      const daemon = startCli([], env(service, dbPath, token === undefined ? {} : { THREAT_MIRROR_HTTP_TOKEN: token }));
      const port = await servingPort(daemon);
      await daemon.waitForLog((line) => line.msg === 'sync of organization "acme" succeeded');
      const headers: Record<string, string> = token === undefined ? {} : { authorization: `Bearer ${token}` };

      const paths = ['/v1/exports/%', '/v1/exports/%E0%A4%A', '/v1/exports/rpz%zz', '/v1/exports/%E0%A4%A?org=acme'];
      for (const path of paths) {
        const answer = await get(port, path, headers);
        expect(answer, path).not.toBeInstanceOf(Error);
        expect(answer, path).toMatchObject({ status: 400 });
        expect(JSON.parse((answer as { body: string }).body), path).toMatchObject({ error: expect.stringMatching(/malformed/) });
      }
      expect(daemon.running, `the daemon exited; stdout:\n${daemon.stdout.slice(-3000)}`).toBe(true);
      // The feed itself still answers, and the probes.
      const feed = await get(port, '/v1/exports/domains', headers);
      expect(feed).toMatchObject({ status: 200, body: expect.stringMatching(/^tm-guard-phish\.com$/m) });
      expect(await get(port, '/healthz')).toMatchObject({ status: 200 });
      // Counted (the thread reports within a second), and logged with the route.
      const counted = /^threat_mirror_serving_errors_total\{listener="http",route="\/v1\/exports\/",answer="400"\} (\d+)$/m;
      for (let attempt = 0; attempt < 50 && (await metricValue(port, counted)) < paths.length; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await metricValue(port, counted)).toBe(paths.length);
      const logged = daemon.logs.filter((line) => line.msg === 'a request to the serving thread failed');
      expect(logged.length).toBeGreaterThan(0);
      expect(logged[0]).toMatchObject({ listener: 'http', route: '/v1/exports/', answer: '400' });
      // The sync goes on.
      const before = succeededRuns(daemon);
      await daemon.waitForLog(() => succeededRuns(daemon) > before);
      daemon.kill('SIGTERM');
      expect((await daemon.exited).code).toBe(0);
    });
  }
});
