// What TSIG costs the DNS primary (src/dns/tsig.ts): signing the messages of a full transfer of the
// 1M-threat zone (754 messages of about 60 KB, as `npm run bench:exports` transfers it to BIND),
// each over the MAC before. Run after `npm run build`: `node dist/test/bench/tsig.js`.
import { randomBytes } from 'node:crypto';
import { ResponseSigner } from '../../src/dns/tsig.js';

const MESSAGES = 754;
const BYTES = 60_000;
const key = { name: 'tm-xfr', secret: randomBytes(32) };
const messages = Array.from({ length: MESSAGES }, () => {
  const message = randomBytes(BYTES);
  message.writeUInt16BE(0, 10); // no additional records yet: the TSIG is the first
  return message;
});
for (let round = 1; round <= 5; round += 1) {
  const signer = new ResponseSigner(key, { mac: randomBytes(32), id: 1 });
  const started = performance.now();
  for (const message of messages) signer.sign(message, Math.floor(Date.now() / 1000));
  console.log(`round ${round}: ${MESSAGES} messages of ${BYTES / 1000} KB signed in ${(performance.now() - started).toFixed(1)} ms`);
}
