// THREAT_MIRROR_HTTP_TOKEN: /v1/* (lookups and feeds) answers only a request that carries the token as a bearer token;
// the probes and /metrics stay open for the orchestrator and Prometheus; the token is never printed.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, servingPort, startCli } from './support/cli.js';
import { mirrorEnvFor, serveThreats } from './support/service.js';
import { tempDir } from './support/temp.js';

const KEY = 'acme-token-key';
const NOW = '2026-03-15T12:00:00.000Z';
const TOKEN = 'f3b1c0de9a7e4d2b8c6a5f4e3d2c1b0a';
const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_INITIAL_DAYS: '2', THREAT_MIRROR_HTTP_PORT: '0', THREAT_MIRROR_SCHEDULE: '0 0 1 1 *', LOG_LEVEL: 'trace' });
const LOOKUP = `/v1/lookup?value=${encodeURIComponent('https://evil.example/x')}`;

describe('the bearer token of /v1/*', () => {
  it('refuses /v1/* without the token (401), answers with it, leaves the probes and /metrics open, and never prints it', async () => {
    const service = await serveThreats(KEY, NOW, [
      { id: 1, content: 'https://evil.example/', type: 'URL', blockedAt: '2026-03-15T10:00:00.000Z', organization: 'acme' },
      // A host under a delegated TLD: what every host list (and the domains feed) takes.
      { id: 2, content: 'https://tm-token-phish.com/', type: 'URL', blockedAt: '2026-03-15T10:00:00.000Z', organization: 'acme' },
    ]);
    const folder = tempDir();
    const dbPath = join(folder, 'mirror.db');
    const tokenFile = join(folder, 'token');
    writeFileSync(tokenFile, `${TOKEN}\n`);
    const daemon = startCli([], env(service, dbPath, { THREAT_MIRROR_HTTP_TOKEN_FILE: tokenFile }));
    const port = await servingPort(daemon);
    await daemon.waitForLog((line) => line.msg === 'sync of organization "acme" succeeded');
    const url = (path: string): string => `http://127.0.0.1:${port}${path}`;

    const missing = await fetch(url(LOOKUP));
    expect(missing.status).toBe(401);
    expect(missing.headers.get('www-authenticate')).toBe('Bearer realm="threat-mirror"');
    expect(((await missing.json()) as { error: string }).error).toMatch(/Authorization: Bearer/);
    expect((await fetch(url(LOOKUP), { headers: { authorization: `Bearer ${TOKEN.slice(0, -1)}x` } })).status).toBe(401);
    expect((await fetch(url(LOOKUP), { headers: { authorization: TOKEN } })).status).toBe(401);
    const posted = await fetch(url('/v1/lookup'), { method: 'POST', body: JSON.stringify({ values: ['https://evil.example/x'] }) });
    expect(posted.status).toBe(401);
    expect((await fetch(url('/v1/other'))).status).toBe(401);
    // The feeds are /v1/* too: no list leaves without the token, not even its ETag (a 304 would say it is current).
    const feed = await fetch(url('/v1/exports/domains'));
    expect(feed.status).toBe(401);
    expect(feed.headers.get('etag')).toBeNull();
    expect((await fetch(url('/v1/exports/rpz'), { method: 'HEAD', headers: { authorization: `Bearer ${TOKEN.slice(0, -1)}x` } })).status).toBe(401);

    const granted = await fetch(url(LOOKUP), { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(granted.status).toBe(200);
    expect(((await granted.json()) as { results: Array<{ blocked: boolean }> }).results[0]?.blocked).toBe(true);
    const grantedPost = await fetch(url('/v1/lookup'), { method: 'POST', headers: { authorization: `bearer ${TOKEN}` }, body: JSON.stringify({ values: ['https://evil.example/x'] }) });
    expect(grantedPost.status).toBe(200);
    const grantedFeed = await fetch(url('/v1/exports/domains'), { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(grantedFeed.status).toBe(200);
    expect(await grantedFeed.text()).toMatch(/^tm-token-phish\.com$/m);

    for (const path of ['/healthz', '/readyz', '/startupz', '/metrics']) expect((await fetch(url(path))).status, path).toBe(200);

    daemon.kill('SIGTERM');
    const exit = await daemon.exited;
    expect(exit.code).toBe(0);
    expect(exit.stdout + exit.stderr).not.toContain(TOKEN);
    expect(readFileSync(dbPath).includes(TOKEN)).toBe(false);
  });

  it('refuses a short token, or both variables at once, with exit 2 naming the variable and never quoting the token', async () => {
    const service = await serveThreats(KEY, NOW, []);
    const folder = tempDir();
    const short = await runCli(['--once'], env(service, join(folder, 'mirror.db'), { THREAT_MIRROR_HTTP_TOKEN: 'short-secret' }));
    expect(short.code).toBe(2);
    expect(short.stderr).toMatch(/^threat-mirror: THREAT_MIRROR_HTTP_TOKEN: the token is shorter than 16 characters/);
    expect(short.stderr).not.toContain('short-secret');
    const tokenFile = join(folder, 'token');
    writeFileSync(tokenFile, TOKEN);
    const both = await runCli(['--once'], env(service, join(folder, 'mirror.db'), { THREAT_MIRROR_HTTP_TOKEN: TOKEN, THREAT_MIRROR_HTTP_TOKEN_FILE: tokenFile }));
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/THREAT_MIRROR_HTTP_TOKEN: set either THREAT_MIRROR_HTTP_TOKEN or THREAT_MIRROR_HTTP_TOKEN_FILE, not both/);
    expect(both.stderr).not.toContain(TOKEN);
  });
});
