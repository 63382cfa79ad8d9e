// An Unbound of the test's own that consults several response policy zones in the order given (from
// files, or transferred from the daemon's DNS primary), and a small authoritative server it asks for
// the names under test: with no upstream network here, a name that passes every policy is answered
// by that server ("resolves normally"), and a blocked one is NXDOMAIN without the RA flag
// (rpz-signal-nxdomain-ra), as docs/dns.md describes.
import { type ChildProcess, execFile } from 'node:child_process';
import { spawn } from 'node:child_process';
import { createSocket, type Socket } from 'node:dgram';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import dnsPacket from 'dns-packet';
import { commandPath, freePort } from './dns-tools.js';
import type { Dig } from './secondaries.js';

/**
 * dig without blocking this thread (secondaries.ts's dig is synchronous): the authority below runs
 * on this thread's event loop and must answer Unbound while dig waits.
 */
export function digAsync(args: readonly string[]): Promise<Dig> {
  return new Promise((resolve) => {
    execFile(commandPath('dig'), ['+time=3', '+tries=1', ...args], { encoding: 'utf8' }, (_error, stdout, stderr) => {
      const text = `${stdout}${stderr}`;
      resolve({ status: /status: (\w+)/.exec(text)?.[1] ?? 'none', flags: (/flags: ([a-z ]+);/.exec(text)?.[1] ?? '').trim().split(' '), text });
    });
  });
}

export interface Authority {
  readonly port: number;
  close(): Promise<void>;
}

/** Answers `A` for each name given (authoritative), NXDOMAIN for any other, over UDP on a loopback port. */
export async function startAuthority(answers: Readonly<Record<string, string>>): Promise<Authority> {
  const socket: Socket = createSocket('udp4');
  socket.on('message', (message, remote) => {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(message);
    } catch {
      return;
    }
    const question = query.questions?.[0];
    if (question === undefined) return;
    const address = answers[question.name.toLowerCase().replace(/\.$/, '')];
    const answer = dnsPacket.encode({
      id: query.id,
      type: 'response',
      flags: dnsPacket.AUTHORITATIVE_ANSWER | (address === undefined ? 3 : 0),
      questions: [question],
      answers: address === undefined || question.type !== 'A' ? [] : [{ type: 'A', name: question.name, ttl: 60, class: 'IN', data: address }],
    });
    socket.send(answer, remote.port, remote.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', () => resolve()));
  return { port: socket.address().port, close: () => new Promise<void>((resolve) => socket.close(() => resolve())) };
}

export type PolicyZone = { readonly name: string } & ({ readonly file: string } | { readonly primaryPort: number });

export interface PolicyResolver {
  readonly port: number;
  ask(host: string): Promise<Dig>;
  /** NXDOMAIN without RA: a policy zone blocked it. */
  blocks(host: string): Promise<boolean>;
  /** NOERROR with the authority's address: no policy stood in the way. */
  resolves(host: string, address: string): Promise<boolean>;
  stop(): Promise<void>;
}

/** Unbound with `zones` in this order (the first that matches a name decides) and `stubs` sent to the authority; on `port` when given (a NOTIFY target). */
export async function startPolicyResolver(
  dir: string,
  zones: readonly PolicyZone[],
  stubs: { readonly names: readonly string[]; readonly port: number },
  given?: number,
): Promise<PolicyResolver> {
  mkdirSync(dir, { recursive: true });
  const port = given ?? (await freePort());
  const rpz = zones.map((zone) =>
    'file' in zone
      ? `rpz:\n  name: "${zone.name}"\n  zonefile: "${zone.file}"\n  rpz-signal-nxdomain-ra: yes\n  rpz-log: yes\n`
      : `rpz:\n  name: "${zone.name}"\n  primary: 127.0.0.1@${zone.primaryPort}\n  allow-notify: 127.0.0.1\n  rpz-signal-nxdomain-ra: yes\n  rpz-log: yes\n`,
  );
  const stubZones = stubs.names.map((name) => `stub-zone:\n  name: "${name}"\n  stub-addr: 127.0.0.1@${stubs.port}\n`);
  writeFileSync(join(dir, 'unbound.conf'), `server:
  interface: 127.0.0.1@${port}
  do-ip6: no
  do-daemonize: no
  username: ""
  chroot: ""
  directory: "${dir}"
  pidfile: ""
  use-syslog: no
  verbosity: 1
  access-control: 127.0.0.0/8 allow
  module-config: "respip iterator"
  do-not-query-localhost: no
  cache-max-ttl: 0
  cache-max-negative-ttl: 0
${rpz.join('')}${stubZones.join('')}`);
  const child: ChildProcess = spawn(commandPath('unbound'), ['-d', '-c', join(dir, 'unbound.conf')], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const ask = (host: string): Promise<Dig> => digAsync(['@127.0.0.1', '-p', String(port), host, 'A']);
  const resolver: PolicyResolver = {
    port,
    ask,
    blocks: async (host) => {
      const answer = await ask(host);
      return answer.status === 'NXDOMAIN' && !answer.flags.includes('ra');
    },
    resolves: async (host, address) => {
      const answer = await ask(host);
      return answer.status === 'NOERROR' && new RegExp(`\\sIN\\s+A\\s+${address.replace(/\./g, '\\.')}\\s*$`, 'm').test(answer.text);
    },
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
  for (let attempt = 0; attempt < 50; attempt += 1) {
    if (child.exitCode !== null) throw new Error(`unbound exited (${child.exitCode}): ${output}`);
    if ((await ask(`ready-check.${zones[0]?.name ?? 'invalid'}`)).status !== 'none') return resolver;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await resolver.stop();
  throw new Error(`unbound did not answer on port ${port}: ${output}`);
}
