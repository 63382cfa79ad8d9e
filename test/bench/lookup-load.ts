// A child of the readers benchmark: single-value GET /v1/lookup at a fixed rate with autocannon,
// rotating through the values given on stdin; prints autocannon's result as JSON. A process of its
// own so that the load generator does not share an event loop with what it measures.
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

const [url, rate, seconds, connections] = process.argv.slice(2);
const values = JSON.parse(readFileSync(0, 'utf8')) as string[];
let next = 0;
const result = await autocannon({
  url: url as string,
  connections: Number(connections),
  overallRate: Number(rate),
  duration: Number(seconds),
  requests: [
    {
      method: 'GET',
      setupRequest: (request) => ({ ...request, path: `/v1/lookup?value=${encodeURIComponent(values[next++ % values.length] as string)}` }),
    },
  ],
});
process.stdout.write(`${JSON.stringify(result)}\n`);
