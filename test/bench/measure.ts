// Runs one child process and measures its wall time and peak RSS (VmHWM, read from /proc while it runs).
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';

export interface Measured {
  readonly code: number | null;
  readonly ms: number;
  readonly peakRssMb: number;
  /** User + system CPU time of the process (all its threads), as last read from /proc while it ran (within ~20 ms). */
  readonly cpuMs: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** utime + stime of a running process, in ms (fields 14 and 15 of /proc/PID/stat, in clock ticks of 10 ms). */
function cpuMsOf(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return 0;
  }
}

function peakRssKb(pid: number): number {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/** `command` is an executable file (the CLI, run through its shebang) or a script for this node. */
export function measure(command: string, args: readonly string[], env: Record<string, string>): Promise<Measured> {
  const started = performance.now();
  const [file, argv] = command.endsWith('cli.js') ? [command, args] : [process.execPath, [command, ...args]];
  const child = spawn(file, [...argv], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let peak = 0;
  let cpuMs = 0;
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  // VmHWM only grows, so the last reading before exit is the peak within one polling interval.
  const poll = setInterval(() => {
    if (child.pid === undefined) return;
    peak = Math.max(peak, peakRssKb(child.pid));
    cpuMs = Math.max(cpuMs, cpuMsOf(child.pid));
  }, 20);
  return new Promise((resolve) => {
    child.on('exit', () => {
      if (child.pid !== undefined) peak = Math.max(peak, peakRssKb(child.pid));
    });
    child.on('close', (code) => {
      clearInterval(poll);
      resolve({ code, ms: performance.now() - started, peakRssMb: peak / 1024, cpuMs, stdout, stderr });
    });
  });
}
