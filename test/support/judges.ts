// Real tools that judge an output better than our own assertions, and the one rule for a test that
// cannot run here: on a developer's machine it skips with a warning saying why; under CI (CI set,
// as `.ci/run` runs) it fails the file at load, naming what to install, because CI never skips.
import { spawnSync } from 'node:child_process';

/** The Debian package that brings each tool the tests run (`.ci/install-tools.sh` installs them). */
const PACKAGE_OF: Readonly<Record<string, string>> = {
  'named-checkzone': 'bind9-utils',
  named: 'bind9',
  unbound: 'unbound',
  pdns_recursor: 'pdns-recursor',
  dig: 'bind9-dnsutils',
  sqlite3: 'sqlite3',
  promtool: 'prometheus',
  setpriv: 'util-linux',
  strace: 'strace',
  script: 'bsdutils',
  heaptrack: 'heaptrack',
  heaptrack_print: 'heaptrack',
};

/** True when `command` runs on this machine: on PATH, or in /usr/sbin (where Debian puts daemons). */
export function hasTool(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command} || test -x /usr/sbin/${command}`], { stdio: 'ignore' }).status === 0;
}

/** Under CI: true. Locally: whether CI=true was asked for by hand. */
export function underCi(): boolean {
  const value = process.env.CI;
  return value !== undefined && value !== '' && value !== 'false' && value !== '0';
}

/**
 * For `describe.skipIf` / `it.skipIf`: false when every tool is here. When one is missing, true
 * (skip) on a developer's machine, and under CI an Error at load, so the file fails.
 */
export function skipWithout(tools: readonly string[]): boolean {
  const missing = tools.filter((tool) => !hasTool(tool));
  if (missing.length === 0) return false;
  const packages = [...new Set(missing.map((tool) => PACKAGE_OF[tool] ?? tool))];
  return skipFor(`${missing.join(', ')} not installed (Debian packages ${packages.join(', ')}; .ci/install-tools.sh installs them)`);
}

/** skipWithout for a condition other than a tool: `reason` undefined means the test can run. */
export function skipFor(reason: string | undefined): boolean {
  if (reason === undefined) return false;
  if (underCi()) throw new Error(`CI never skips a test, and this one cannot run: ${reason}`);
  console.warn(`skipped (CI would fail here): ${reason}`);
  return true;
}

/** `promtool check metrics`: the exposition format as Prometheus itself parses and lints it. */
export function promtoolCheckMetrics(text: string): { ok: boolean; output: string } {
  const result = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (result.error) throw new Error(`promtool could not run: ${result.error.message}`);
  return { ok: result.status === 0, output: `${result.stdout}${result.stderr}`.trim() };
}
