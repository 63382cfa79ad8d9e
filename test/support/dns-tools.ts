// Real DNS software to judge the RPZ export with: BIND's named-checkzone, and an Unbound of the
// test's own on a loopback port, asked with a minimal DNS query over UDP (node:dgram).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export function hasCommand(command: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${command} || test -x /usr/sbin/${command}`], { stdio: 'ignore' }).status === 0;
}

export function commandPath(command: string): string {
  const found = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).stdout.trim();
  return found === '' ? `/usr/sbin/${command}` : found;
}

export function namedCheckzone(zone: string, file: string): { status: number | null; output: string } {
  const result = spawnSync(commandPath('named-checkzone'), [zone, file], { encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/** DNS response codes by number. */
export const RCODE = { NOERROR: 0, SERVFAIL: 2, NXDOMAIN: 3, REFUSED: 5 } as const;

/** Sends one A query with recursion desired and returns the response code. */
export function queryRcode(port: number, name: string, timeoutMs = 2000): Promise<number> {
  const labels = name.split('.').filter((label) => label !== '');
  const question = Buffer.concat([
    ...labels.map((label) => Buffer.concat([Buffer.from([label.length]), Buffer.from(label, 'ascii')])),
    Buffer.from([0, 0, 1, 0, 1]),
  ]);
  const id = Math.floor(Math.random() * 0xffff);
  const header = Buffer.from([id >> 8, id & 0xff, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
  return new Promise((resolve, reject) => {
    const socket = createSocket('udp4');
    const timer = setTimeout(() => {
      socket.close();
      reject(new Error(`no DNS answer for ${name} within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('message', (message) => {
      if (message.readUInt16BE(0) !== id) return;
      clearTimeout(timer);
      socket.close();
      resolve((message[3] as number) & 0x0f);
    });
    socket.send(Buffer.concat([header, question]), port, '127.0.0.1');
  });
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export interface UnboundServer {
  readonly port: number;
  stop(): Promise<void>;
}

/** An Unbound of its own (no daemon, no chroot, no user switch) serving the zone file through its rpz module. */
export async function startUnbound(dir: string, zone: string, zoneFile: string): Promise<UnboundServer> {
  const port = await freePort();
  const config = join(dir, 'unbound.conf');
  writeFileSync(
    config,
    `server:
  interface: 127.0.0.1
  port: ${port}
  do-ip6: no
  do-tcp: no
  do-daemonize: no
  username: ""
  chroot: ""
  directory: "${dir}"
  pidfile: ""
  use-syslog: no
  logfile: ""
  verbosity: 1
  access-control: 127.0.0.0/8 allow
  module-config: "respip iterator"
rpz:
  name: "${zone}"
  zonefile: "${zoneFile}"
  rpz-log: yes
`,
  );
  const child: ChildProcess = spawn(commandPath('unbound'), ['-d', '-c', config], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  // Ready once it answers: the rpz zone loads before the listener opens.
  for (let attempt = 0; attempt < 100; attempt += 1) {
    if (child.exitCode !== null) throw new Error(`unbound exited (${child.exitCode}): ${output}`);
    try {
      await queryRcode(port, `ready-check.${zone}`, 200);
      return { port, stop };
    } catch {
      // not listening yet
    }
  }
  await stop();
  throw new Error(`unbound did not answer on port ${port}: ${output}`);
}
