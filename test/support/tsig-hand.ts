// TSIG (RFC 8945, HMAC-SHA256) written out by hand for the tests, apart from src/dns/tsig.ts: a
// query signed at any time with any fudge (what dig cannot send), and the check of a signed answer.
import { createHmac } from 'node:crypto';
import { decode } from 'dns-packet';

export interface HandKey {
  readonly name: string;
  /** base64 */
  readonly secret: string;
}

function name(text: string): Buffer {
  return Buffer.concat([...text.split('.').filter((label) => label !== '').map((label) => Buffer.concat([Buffer.from([label.length]), Buffer.from(label)])), Buffer.from([0])]);
}

function u16(value: number): Buffer {
  const bytes = Buffer.alloc(2);
  bytes.writeUInt16BE(value);
  return bytes;
}

function u48(value: number): Buffer {
  const bytes = Buffer.alloc(6);
  bytes.writeUIntBE(value, 0, 6);
  return bytes;
}

const ALGORITHM = name('hmac-sha256');

/** The TSIG variables (RFC 8945 4.3.3) of a first message: key name, class ANY, TTL 0, algorithm, time, fudge, error, other data. */
function variables(key: HandKey, timeSigned: number, fudge: number, error: number, other: Buffer): Buffer {
  return Buffer.concat([name(key.name), u16(255), Buffer.alloc(4), ALGORITHM, u48(timeSigned), u16(fudge), u16(error), u16(other.length), other]);
}

function hmac(key: HandKey, parts: Buffer[]): Buffer {
  const digest = createHmac('sha256', Buffer.from(key.secret, 'base64'));
  for (const part of parts) digest.update(part);
  return digest.digest();
}

/** `message` (a query, no TSIG yet) signed at `timeSigned` declaring `fudge`. */
export function signQueryByHand(message: Buffer, key: HandKey, timeSigned: number, fudge: number): Buffer {
  const mac = hmac(key, [message, variables(key, timeSigned, fudge, 0, Buffer.alloc(0))]);
  const data = Buffer.concat([ALGORITHM, u48(timeSigned), u16(fudge), u16(mac.length), mac, message.subarray(0, 2), u16(0), u16(0)]);
  const record = Buffer.concat([name(key.name), u16(250), u16(255), Buffer.alloc(4), u16(data.length), data]);
  const signed = Buffer.concat([message, record]);
  signed.writeUInt16BE(message.readUInt16BE(10) + 1, 10);
  return signed;
}

export interface AnswerTsig {
  readonly rcode: number;
  readonly error: number;
  readonly timeSigned: number;
  readonly fudge: number;
  /** Other Data as a 48-bit time (BADTIME: the server's clock), or undefined when it holds no 6 bytes. */
  readonly otherTime: number | undefined;
  /** Whether the answer's MAC is the one the key makes over the query's MAC, the answer and its variables. */
  readonly verified: boolean;
}

/** Reads the TSIG record that ends `answer` and checks its MAC against the query's (`queryMac`). */
export function checkAnswerByHand(answer: Buffer, key: HandKey, queryMac: Buffer): AnswerTsig {
  const packet = decode(answer);
  const tsigName = name(key.name);
  // The record is the answer's last bytes: owner, type, class, TTL, length, then the data.
  const start = answer.lastIndexOf(Buffer.concat([tsigName, u16(250), u16(255)]));
  let at = start + tsigName.length + 10 + ALGORITHM.length;
  const timeSigned = answer.readUIntBE(at, 6);
  const fudge = answer.readUInt16BE(at + 6);
  const macLength = answer.readUInt16BE(at + 8);
  const mac = answer.subarray(at + 10, at + 10 + macLength);
  at += 10 + macLength;
  const error = answer.readUInt16BE(at + 2);
  const other = answer.subarray(at + 6, at + 6 + answer.readUInt16BE(at + 4));
  const unsigned = Buffer.from(answer.subarray(0, start));
  unsigned.writeUInt16BE(unsigned.readUInt16BE(10) - 1, 10);
  const expected = hmac(key, [u16(queryMac.length), queryMac, unsigned, variables(key, timeSigned, fudge, error, other)]);
  return { rcode: (packet.flags ?? 0) & 0xf, error, timeSigned, fudge, otherTime: other.length === 6 ? other.readUIntBE(0, 6) : undefined, verified: expected.equals(mac) };
}

/** The MAC of a query signed by signQueryByHand (its TSIG record's, read back). */
export function queryMacOf(signed: Buffer): Buffer {
  const macLength = signed.readUInt16BE(signed.length - 6 - 32 - 2);
  return signed.subarray(signed.length - 6 - macLength, signed.length - 6);
}
