// BIND, Unbound and PowerDNS Recursor of the test's own, on loopback ports, each a secondary of the
// daemon's DNS primary for the response policy zone (the configurations of docs/dns.md), and dig
// to ask them. No upstream network here: a block is proven by each resolver's RPZ signal.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Standin } from '../../src/standin/index.js';
import type { CliProcess } from './cli.js';
import { commandPath, freePort } from './dns-tools.js';

export const ZONE = 'rpz.threat-mirror';

export interface Secondary {
  readonly name: 'bind' | 'unbound' | 'pdns';
  readonly port: number;
  /** Whether the resolver answers `host` with its RPZ signal (blocked), or not. */
  blocks(host: string): Promise<boolean>;
  /** What the resolver printed so far: said when a wait for it times out. */
  log(): string;
  stop(): Promise<void>;
}

export interface Dig {
  readonly status: string;
  readonly flags: string[];
  readonly text: string;
}

export function dig(args: readonly string[]): Dig {
  const result = spawnSync(commandPath('dig'), ['+time=3', '+tries=1', ...args], { encoding: 'utf8' });
  const text = `${result.stdout}${result.stderr}`;
  return { status: /status: (\w+)/.exec(text)?.[1] ?? 'none', flags: (/flags: ([a-z ]+);/.exec(text)?.[1] ?? '').trim().split(' '), text };
}

function startProcess(command: string, args: string[], dir: string): { child: ChildProcess; stop: () => Promise<void>; output: () => string } {
  const child = spawn(commandPath(command), args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return {
    child,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

/** A TSIG key as the daemon takes it (THREAT_MIRROR_DNS_TSIG_KEY=name:secret) and the secondaries are given it. */
export interface TsigKeyConfig {
  readonly name: string;
  /** base64 */
  readonly secret: string;
}

export async function startBind(dir: string, primaryPort: number, port: number, tsig?: TsigKeyConfig): Promise<Secondary> {
  mkdirSync(dir, { recursive: true });
  const key = tsig === undefined ? '' : `key "${tsig.name}" { algorithm hmac-sha256; secret "${tsig.secret}"; };\n`;
  writeFileSync(join(dir, 'named.conf'), `${key}options {
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
zone "${ZONE}" { type secondary; file "tm.rpz.db"; primaries { 127.0.0.1 port ${primaryPort}${tsig === undefined ? '' : ` key "${tsig.name}"`}; }; allow-notify { 127.0.0.1; }; };
`);
  const process = startProcess('named', ['-c', join(dir, 'named.conf'), '-g', '-u', 'root'], dir);
  return {
    name: 'bind',
    port,
    log: process.output,
    // BIND adds the policy zone's SOA to the additional section of an answer it rewrote.
    blocks: async (host) => new RegExp(`^${ZONE.replace(/\./g, '\\.')}\\.\\s.*\\sSOA\\s`, 'm').test(dig(['@127.0.0.1', '-p', String(port), host, 'A', '+additional']).text),
    stop: process.stop,
  };
}

export async function startUnboundSecondary(dir: string, primaryPort: number, port: number): Promise<Secondary> {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'unbound.conf'), `server:
  interface: 127.0.0.1@${port}
  do-ip6: no
  do-daemonize: no
  username: ""
  chroot: ""
  directory: "${dir}"
  pidfile: ""
  use-syslog: no
  verbosity: 2
  access-control: 127.0.0.0/8 allow
  module-config: "respip iterator"
  do-not-query-localhost: no
rpz:
  name: "${ZONE}"
  primary: 127.0.0.1@${primaryPort}
  allow-notify: 127.0.0.1
  rpz-signal-nxdomain-ra: yes
`);
  const process = startProcess('unbound', ['-d', '-c', join(dir, 'unbound.conf')], dir);
  return {
    name: 'unbound',
    port,
    log: process.output,
    // rpz-signal-nxdomain-ra: a blocked name is NXDOMAIN without the RA flag.
    blocks: async (host) => {
      const answer = dig(['@127.0.0.1', '-p', String(port), host, 'A']);
      return answer.status === 'NXDOMAIN' && !answer.flags.includes('ra');
    },
    stop: process.stop,
  };
}

export async function startPdnsSecondary(dir: string, primaryPort: number, port: number, refreshSeconds: number, tsig?: TsigKeyConfig): Promise<Secondary> {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'recursor.conf'), `local-address=127.0.0.1
local-port=${port}
allow-from=127.0.0.0/8
lua-config-file=${join(dir, 'rpz.lua')}
socket-dir=${dir}
disable-packetcache=yes
`);
  const key = tsig === undefined ? '' : `, tsigname="${tsig.name}", tsigalgo="hmac-sha256", tsigsecret="${tsig.secret}"`;
  writeFileSync(join(dir, 'rpz.lua'), `rpzPrimary("127.0.0.1:${primaryPort}", "${ZONE}", {refresh=${refreshSeconds}, extendedErrorCode=15, extendedErrorExtra="threat-mirror"${key}})\n`);
  const process = startProcess('pdns_recursor', [`--config-dir=${dir}`, '--daemon=no', '--disable-syslog', '--setuid=', '--setgid='], dir);
  return {
    name: 'pdns',
    port,
    log: process.output,
    // extendedErrorCode=15: the answer carries EDE 15 (Blocked).
    blocks: async (host) => /EDE: 15 \(Blocked\)/.test(dig(['@127.0.0.1', '-p', String(port), host, 'A']).text),
    stop: process.stop,
  };
}

export { freePort };

/** Stops a test file's resolvers, its daemon and stand-in, and removes its folder. */
export async function stopAll({ secondaries, daemon, standin, dir }: { secondaries: readonly Secondary[]; daemon?: CliProcess; standin?: Standin; dir?: string }): Promise<void> {
  await Promise.all(secondaries.map((secondary) => secondary.stop()));
  daemon?.kill('SIGTERM');
  await daemon?.exited;
  await standin?.close();
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
}
