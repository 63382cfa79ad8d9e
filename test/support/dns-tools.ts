// Real DNS software to judge the RPZ export with: where a tool is, BIND's named-checkzone, and a
// free loopback port. Resolvers that load the zone: policy-zones.ts (files) and secondaries.ts.
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';

export function commandPath(command: string): string {
  const found = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).stdout.trim();
  return found === '' ? `/usr/sbin/${command}` : found;
}

export function namedCheckzone(zone: string, file: string): { status: number | null; output: string } {
  const result = spawnSync(commandPath('named-checkzone'), [zone, file], { encoding: 'utf8' });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
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
