// A process of its own that asks GET /healthz every 100 ms and prints the round trips (ms) as JSON
// when its stdin closes: apart from the benchmark's stand-in, whose work would otherwise delay
// the prober's own event loop and count as the daemon's.
import { request } from 'node:http';

const port = Number(process.argv[2]);
const latencies: number[] = [];
let stopped = false;
process.stdin.on('end', () => (stopped = true)).resume();

function probe(): Promise<number> {
  const sent = performance.now();
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path: '/healthz', agent: false, timeout: 5000 }, (response) => {
      response.resume();
      response.on('end', () => resolve(response.statusCode === 200 ? performance.now() - sent : 5000));
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(5000));
    req.end();
  });
}

while (!stopped) {
  latencies.push(await probe());
  await new Promise((resolve) => setTimeout(resolve, 100));
}
process.stdout.write(JSON.stringify(latencies));
