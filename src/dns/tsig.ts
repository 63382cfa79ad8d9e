// TSIG (RFC 8945) with HMAC-SHA256, the algorithm BIND and PowerDNS default to: a secondary
// proves it holds the shared key with every query, and the primary signs every message it answers
// with, so that neither a neighbour on the network nor anything between them can take or alter
// the zone. dns-packet has no TSIG codec: the record is read and written here, on the bytes (the
// MAC covers the message as sent).
import { createHmac, timingSafeEqual } from 'node:crypto';

export interface TsigKey {
  /** Lower case, no trailing dot. */
  readonly name: string;
  readonly secret: Buffer;
}

const TYPE_TSIG = 250;
const CLASS_ANY = 255;
const ALGORITHM = 'hmac-sha256';
/**
 * Seconds a signature's time may differ from ours (RFC 8945 recommends 300): the fudge a query
 * declares narrows the window, never widens it (a client sending a fudge of 65,535 s would
 * otherwise have a signed query replayed for 18 hours). RFC 8945 5.2.3 lets a server refuse a
 * fudge above its own maximum; this one holds such a query to its own.
 */
export const MAX_FUDGE_SECONDS = 300;
const FUDGE = MAX_FUDGE_SECONDS;
/** TSIG error codes (RFC 8945 section 3). */
export const TSIG_ERROR = { BADSIG: 16, BADKEY: 17, BADTIME: 18 } as const;
type TsigError = keyof typeof TSIG_ERROR;

/** What a query's signature says: signed with our key (and its MAC, which the answer chains from), unsigned, or why not valid. */
export type RequestSignature =
  | { readonly kind: 'signed'; readonly mac: Buffer; readonly id: number }
  | { readonly kind: 'unsigned' }
  /** A TSIG record whose fields do not hold together (a length past its end, a bad name): FORMERR. */
  | { readonly kind: 'malformed' }
  | { readonly kind: 'invalid'; readonly error: Exclude<TsigError, 'BADTIME'>; readonly id: number; readonly keyName: Buffer; readonly algorithm: Buffer }
  /** Signed with our key, but outside the time window: BADTIME, answered signed, with our time (RFC 8945 5.2.3). */
  | { readonly kind: 'late'; readonly mac: Buffer; readonly id: number; readonly timeSigned: number };

/** Checks the TSIG record that ends a query's additional section, if there is one. */
export function verifyRequest(message: Buffer, key: TsigKey, nowSeconds: number): RequestSignature {
  const found = lastRecord(message);
  if (found === undefined || message.readUInt16BE(found.typeAt) !== TYPE_TSIG) return { kind: 'unsigned' };
  let tsig: ReturnType<typeof readTsig>;
  try {
    tsig = readTsig(message, found);
  } catch {
    return { kind: 'malformed' };
  }
  const keyName = nameWire(found.ownerName);
  const algorithm = nameWire(tsig.algorithm);
  const invalid = (error: Exclude<TsigError, 'BADTIME'>): RequestSignature => ({ kind: 'invalid', error, id: tsig.originalId, keyName, algorithm });
  if (found.ownerName !== key.name || tsig.algorithm !== ALGORITHM) return invalid('BADKEY');
  const unsigned = withoutLastRecord(message, found.start, tsig.originalId);
  const expected = mac(key, [unsigned, variables(key, tsig.timeSigned, tsig.fudge, tsig.error, tsig.other)]);
  if (tsig.mac.length !== expected.length || !timingSafeEqual(tsig.mac, expected)) return invalid('BADSIG');
  if (Math.abs(nowSeconds - tsig.timeSigned) > Math.min(tsig.fudge, MAX_FUDGE_SECONDS)) return { kind: 'late', mac: tsig.mac, id: tsig.originalId, timeSigned: tsig.timeSigned };
  return { kind: 'signed', mac: tsig.mac, id: tsig.originalId };
}

/**
 * Signs the messages of one answer in order (RFC 8945 section 5.3): the first over the query's MAC,
 * each next over the MAC before it (a transfer's messages are each signed, so a secondary checks
 * every one).
 */
export class ResponseSigner {
  readonly #key: TsigKey;
  readonly #id: number;
  #priorMac: Buffer;
  #first = true;

  constructor(key: TsigKey, request: { readonly mac: Buffer; readonly id: number }) {
    this.#key = key;
    this.#id = request.id;
    this.#priorMac = request.mac;
  }

  sign(message: Buffer, nowSeconds: number): Buffer {
    const timers = timersWire(nowSeconds, FUDGE);
    const covered = this.#first ? variables(this.#key, nowSeconds, FUDGE, 0, Buffer.alloc(0)) : timers;
    const signature = mac(this.#key, [lengthPrefixed(this.#priorMac), message, covered]);
    this.#first = false;
    this.#priorMac = signature;
    return appendTsig(message, nameWire(this.#key.name), tsigData(nowSeconds, signature, this.#id, 0));
  }
}

/** A query (a NOTIFY) signed with the key. */
export function signRequest(message: Buffer, key: TsigKey, nowSeconds: number): Buffer {
  const signature = mac(key, [message, variables(key, nowSeconds, FUDGE, 0, Buffer.alloc(0))]);
  return appendTsig(message, nameWire(key.name), tsigData(nowSeconds, signature, message.readUInt16BE(0), 0));
}

/**
 * The answer to a query signed with the key outside the time window (BADTIME): signed over the
 * query's MAC like any answer, with the query's own time as Time Signed (so the client can check
 * it) and ours in Other Data (RFC 8945 5.2.3), so that a client can tell how far its clock is off.
 */
export function signBadTime(message: Buffer, key: TsigKey, late: Extract<RequestSignature, { kind: 'late' }>, nowSeconds: number): Buffer {
  const serverTime = Buffer.alloc(6);
  serverTime.writeUIntBE(nowSeconds, 0, 6);
  const signature = mac(key, [lengthPrefixed(late.mac), message, variables(key, late.timeSigned, FUDGE, TSIG_ERROR.BADTIME, serverTime)]);
  const data = Buffer.concat([nameWire(ALGORITHM), timersWire(late.timeSigned, FUDGE), lengthPrefixed(signature), u16(late.id), u16(TSIG_ERROR.BADTIME), lengthPrefixed(serverTime)]);
  return appendTsig(message, nameWire(key.name), data);
}

/** The answer to a query whose signature failed: its TSIG record carries the error, unsigned (RFC 8945 5.3.2). */
export function unsignedError(message: Buffer, invalid: Extract<RequestSignature, { kind: 'invalid' }>, nowSeconds: number): Buffer {
  const data = Buffer.concat([invalid.algorithm, timersWire(nowSeconds, FUDGE), u16(0), u16(invalid.id), u16(TSIG_ERROR[invalid.error]), u16(0)]);
  return appendTsig(message, invalid.keyName, data);
}

interface RecordAt {
  /** Where the record starts. */
  readonly start: number;
  readonly ownerName: string;
  readonly typeAt: number;
  readonly dataAt: number;
  readonly dataLength: number;
}

/** The last record of the message (where a TSIG must be), or undefined when it has none or does not parse. */
function lastRecord(message: Buffer): RecordAt | undefined {
  if (message.length < 12) return undefined;
  const counts = [4, 6, 8, 10].map((at) => message.readUInt16BE(at));
  const [questions = 0, ...sections] = counts;
  const records = sections.reduce((sum, count) => sum + count, 0);
  if (records === 0 || (counts[3] ?? 0) === 0) return undefined;
  try {
    let at = 12;
    for (let index = 0; index < questions; index += 1) at = skipName(message, at) + 4;
    let last: RecordAt | undefined;
    for (let index = 0; index < records; index += 1) {
      const start = at;
      const typeAt = skipName(message, at);
      const dataLength = message.readUInt16BE(typeAt + 8);
      last = { start, ownerName: readName(message, start), typeAt, dataAt: typeAt + 10, dataLength };
      at = typeAt + 10 + dataLength;
    }
    return at === message.length ? last : undefined;
  } catch {
    return undefined;
  }
}

function readTsig(message: Buffer, record: RecordAt): { algorithm: string; timeSigned: number; fudge: number; mac: Buffer; originalId: number; error: number; other: Buffer } {
  const algorithm = readName(message, record.dataAt);
  let at = skipName(message, record.dataAt);
  const timeSigned = message.readUIntBE(at, 6);
  const fudge = message.readUInt16BE(at + 6);
  const macLength = message.readUInt16BE(at + 8);
  at += 10;
  const signature = message.subarray(at, at + macLength);
  at += macLength;
  const originalId = message.readUInt16BE(at);
  const error = message.readUInt16BE(at + 2);
  const otherLength = message.readUInt16BE(at + 4);
  const other = message.subarray(at + 6, at + 6 + otherLength);
  if (at + 6 + otherLength !== record.dataAt + record.dataLength) throw new RangeError('TSIG record of the wrong length');
  return { algorithm, timeSigned, fudge, mac: signature, originalId, error, other };
}

/** The message as it was before its last record was added: that record cut off, ARCOUNT one less, the original ID back. */
function withoutLastRecord(message: Buffer, start: number, originalId: number): Buffer {
  const unsigned = Buffer.from(message.subarray(0, start));
  unsigned.writeUInt16BE(originalId, 0);
  unsigned.writeUInt16BE(unsigned.readUInt16BE(10) - 1, 10);
  return unsigned;
}

function appendTsig(message: Buffer, keyName: Buffer, data: Buffer): Buffer {
  const record = Buffer.concat([keyName, u16(TYPE_TSIG), u16(CLASS_ANY), Buffer.alloc(4), u16(data.length), data]);
  const signed = Buffer.concat([message, record]);
  signed.writeUInt16BE(message.readUInt16BE(10) + 1, 10);
  return signed;
}

function tsigData(timeSigned: number, signature: Buffer, originalId: number, error: number): Buffer {
  return Buffer.concat([nameWire(ALGORITHM), timersWire(timeSigned, FUDGE), lengthPrefixed(signature), u16(originalId), u16(error), u16(0)]);
}

/** The TSIG variables a first MAC covers (RFC 8945 4.3.3): key name, class, TTL, algorithm, time, fudge, error, other data. */
function variables(key: TsigKey, timeSigned: number, fudge: number, error: number, other: Buffer): Buffer {
  return Buffer.concat([nameWire(key.name), u16(CLASS_ANY), Buffer.alloc(4), nameWire(ALGORITHM), timersWire(timeSigned, fudge), u16(error), lengthPrefixed(other)]);
}

function mac(key: TsigKey, parts: readonly Buffer[]): Buffer {
  const hmac = createHmac('sha256', key.secret);
  for (const part of parts) hmac.update(part);
  return hmac.digest();
}

function timersWire(timeSigned: number, fudge: number): Buffer {
  const timers = Buffer.alloc(8);
  timers.writeUIntBE(timeSigned, 0, 6);
  timers.writeUInt16BE(fudge, 6);
  return timers;
}

function lengthPrefixed(bytes: Buffer): Buffer {
  return Buffer.concat([u16(bytes.length), bytes]);
}

function u16(value: number): Buffer {
  const bytes = Buffer.alloc(2);
  bytes.writeUInt16BE(value);
  return bytes;
}

/** A name in canonical wire form (lower case, uncompressed), as the MAC covers it. */
function nameWire(name: string): Buffer {
  const labels = name === '' ? [] : name.toLowerCase().split('.');
  return Buffer.concat([...labels.map((label) => Buffer.concat([Buffer.from([label.length]), Buffer.from(label, 'ascii')])), Buffer.from([0])]);
}

/** Where the name at `at` ends (after its last label or its compression pointer). */
function skipName(message: Buffer, at: number): number {
  for (;;) {
    const length = message.readUInt8(at);
    if (length === 0) return at + 1;
    if ((length & 0xc0) === 0xc0) return at + 2;
    at += 1 + length;
  }
}

/** The name at `at`, lower case without the trailing dot, following compression pointers (at most 64 hops). */
function readName(message: Buffer, at: number): string {
  const labels: string[] = [];
  for (let hops = 0; hops < 64; ) {
    const length = message.readUInt8(at);
    if (length === 0) return labels.join('.').toLowerCase();
    // 0x40-0xBF: label types RFC 6891 retired; nothing a TSIG name may use.
    if ((length & 0xc0) === 0x40 || (length & 0xc0) === 0x80) throw new RangeError('name with an unknown label type');
    if ((length & 0xc0) === 0xc0) {
      at = message.readUInt16BE(at) & 0x3fff;
      hops += 1;
      continue;
    }
    labels.push(message.toString('latin1', at + 1, at + 1 + length));
    at += 1 + length;
  }
  throw new RangeError('name with a compression loop');
}
