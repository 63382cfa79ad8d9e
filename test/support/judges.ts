// Real tools that judge an output better than our own assertions; absent, the caller skips.
import { spawnSync } from 'node:child_process';

/** True when `command` runs on this machine (looked up on PATH). */
export function hasTool(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status === 0;
}

/** `promtool check metrics`: the exposition format as Prometheus itself parses and lints it. */
export function promtoolCheckMetrics(text: string): { ok: boolean; output: string } {
  const result = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  return { ok: result.status === 0, output: `${result.stdout}${result.stderr}`.trim() };
}
