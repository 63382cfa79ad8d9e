// `npm run demo` as a new user sees it: it mirrors, answers SQL, exits 0, and leaves nothing running.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { tempDir } from './support/temp.js';

const DEMO = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'src', 'standin', 'demo.js');

/** Processes whose working directory is `dir`: the demo and anything it started run there. */
function processesIn(dir: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readlinkSync(`/proc/${entry}/cwd`) === dir) found.push(Number(entry));
    } catch {
      // gone, or not ours to read
    }
  }
  return found;
}

it('the demo mirrors two organizations, prints SQL answers, exits 0 and leaves no process behind', async () => {
  const cwd = tempDir();
  const child = spawn(process.execPath, [DEMO], { cwd, env: { PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    output += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  expect(output).toMatch(/acme\s+threats\s+succeeded .* new/);
  expect(output).toMatch(/globex\s+threats\s+succeeded .* new/);
  expect(output).toMatch(/acme\s+reports\s+succeeded .* new/);
  expect(output).toMatch(/1 new/);
  expect(output).toMatch(/"type":"URL"/);
  expect(output).toMatch(/rejected_proposals/);
  expect(output).toMatch(/connect#top: blocked \(1 match\)\n.*\(by expression wallet-verify\.example-phish\.com\/connect\)\n.*other-page: not blocked\n.*innocent\.example: not blocked\n[\s\S]*\(exit 0\)/);
  expect(code).toBe(0);
  expect(existsSync(join(cwd, 'data', 'demo', 'threat-mirror.db'))).toBe(true);
  expect(processesIn(cwd)).toEqual([]);
});
