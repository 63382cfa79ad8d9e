// Real DNS software to judge the RPZ export with: where a tool is, BIND's named-checkzone, and a
// free loopback port. Resolvers that load the zone: policy-zones.ts (files) and secondaries.ts.
import { spawnSync } from 'node:child_process';
import { createSocket } from 'node:dgram';
import { createServer } from 'node:net';

export function commandPath(command: string): string {
  const found = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).stdout.trim();
  return found === '' ? `/usr/sbin/${command}` : found;
}

export function namedCheckzone(zone: string, file: string): { status: number | null; output: string } {
  const result = spawnSync(commandPath('named-checkzone'), [zone, file], { encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

/**
 * A loopback port free for TCP and UDP now, below the kernel's ephemeral range (32768-60999 on
 * Linux). The port the kernel picks for `listen(0)` is one it may give next to any process's
 * outgoing connection or UDP socket, which then holds it when the daemon or a resolver binds it
 * (EADDRINUSE).
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if ((await bindsTcp(port)) && (await bindsUdp(port))) return port;
  }
}

function bindsTcp(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function bindsUdp(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createSocket('udp4');
    socket.once('error', () => {
      socket.close();
      resolve(false);
    });
    socket.bind(port, '127.0.0.1', () => socket.close(() => resolve(true)));
  });
}
