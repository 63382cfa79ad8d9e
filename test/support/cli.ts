// Spawns the compiled CLI as a user would, and reads what it printed.
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterThisTest } from './cleanup.js';
import { SERVING_LOG_MESSAGE } from '../../src/serve/endpoints.js';

export const CLI_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'bin', 'cli.js');

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** stdout parsed as JSON lines (pino); lines that are not JSON are left out. */
  readonly logs: Array<Record<string, unknown>>;
}

/** Only what the test gives: no API key or setting leaks in from the developer's shell. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH ?? '', NODE_OPTIONS: '', ...env };
}

export class CliProcess {
  readonly child: ChildProcess;
  stdout = '';
  stderr = '';
  readonly exited: Promise<CliResult>;
  #listeners: Array<() => void> = [];

  constructor(args: readonly string[], env: Record<string, string>) {
    // Run as users run it: the file itself, so its shebang's V8 flags apply.
    this.child = spawn(CLI_PATH, [...args], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    this.child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stdout += chunk;
      for (const listener of this.#listeners) listener();
    });
    this.child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
      this.stderr += chunk;
      for (const listener of this.#listeners) listener();
    });
    this.exited = new Promise((resolve) => {
      this.child.on('close', (code, signal) => {
        for (const listener of this.#listeners) listener();
        resolve({ code, signal, stdout: this.stdout, stderr: this.stderr, logs: parseLogs(this.stdout) });
      });
    });
  }

  get logs(): Array<Record<string, unknown>> {
    return parseLogs(this.stdout);
  }

  /** Resolves when a log line matches; rejects if the process exits first. */
  waitForLog(predicate: (line: Record<string, unknown>) => boolean): Promise<Record<string, unknown>> {
    return this.#waitFor('the awaited log line', () => this.logs.find(predicate));
  }

  /** Resolves when stderr matches (what a test fixture loaded into the CLI writes); rejects if the process exits first. */
  waitForStderr(pattern: RegExp): Promise<RegExpExecArray> {
    return this.#waitFor(`stderr matching ${pattern}`, () => pattern.exec(this.stderr) ?? undefined);
  }

  #waitFor<T>(what: string, found: () => T | undefined): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = (): void => {
        const value = found();
        if (value !== undefined) {
          this.#listeners = this.#listeners.filter((listener) => listener !== check);
          resolve(value);
        } else if (this.child.exitCode !== null || this.child.signalCode !== null) {
          this.#listeners = this.#listeners.filter((listener) => listener !== check);
          reject(new Error(`the CLI exited before ${what}; stdout:\n${this.stdout}\nstderr:\n${this.stderr}`));
        }
      };
      this.#listeners.push(check);
      check();
    });
  }

  kill(signal: NodeJS.Signals): void {
    this.child.kill(signal);
  }

  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Sends `signal` if the process still runs, and waits for it to exit. */
  async stop(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    if (!this.running) return;
    this.kill(signal);
    await this.exited;
  }
}

/** A long-running CLI (the daemon, a writer to interrupt): killed after the test if it still runs. */
export function startCli(args: readonly string[], env: Record<string, string>): CliProcess {
  const process = new CliProcess(args, env);
  afterThisTest('processes', () => process.stop('SIGKILL'));
  return process;
}

/** The port the daemon serves /healthz, /readyz and /metrics on, once it says so. */
export async function servingPort(daemon: CliProcess): Promise<number> {
  const line = await daemon.waitForLog((log) => log.msg === SERVING_LOG_MESSAGE);
  return line.port as number;
}

export function runCli(args: readonly string[], env: Record<string, string>): Promise<CliResult> {
  return startCli(args, env).exited;
}

function parseLogs(text: string): Array<Record<string, unknown>> {
  const lines: Array<Record<string, unknown>> = [];
  for (const line of text.split('\n')) {
    if (!line.startsWith('{')) continue;
    try {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    } catch {
      // a line cut by the process ending
    }
  }
  return lines;
}
