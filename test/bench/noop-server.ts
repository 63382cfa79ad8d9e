// A child of the readers benchmark: an HTTP server that answers every request with `{}` at once, on
// a free loopback port it prints. The load generator's latency against it is the generator's own
// floor (its timers, its event loop, the kernel's loopback), measured in the same run as /v1/lookup.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const server = createServer((_request, response) => {
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end('{}\n');
});
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
process.once('SIGTERM', () => server.close(() => process.exit(0)));
