// The DNS primary of the response policy zone: UDP and TCP on one port (every secondary asks the
// SOA over UDP first, then transfers over TCP). It answers the zone's SOA and NS, AXFR (TCP) and
// IXFR (RFC 1995), to the addresses of THREAT_MIRROR_DNS_ALLOW only (others: REFUSED); any other
// name gets REFUSED, another opcode NOTIMP; what does not decode as a query is dropped and counted.
// With a TSIG key (THREAT_MIRROR_DNS_TSIG_KEY) every query must also be signed with it: unsigned
// ones are REFUSED, badly signed ones get NOTAUTH, and every message answered is signed.
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { once } from 'node:events';
import { createServer, isIP, type Socket } from 'node:net';
import type { Answer, DecodedPacket } from 'dns-packet';
import type { AddressAcl } from './acl.js';
import { decodeQuery, OPCODE, opcodeOf, type RcodeName, response, transferMessages } from './messages.js';
import { RPZ_TTL, SOA_MNAME, serialAfter } from '../lib/rpz-zone.js';
import { ResponseSigner, type TsigKey, unsignedError, verifyRequest } from './tsig.js';
import { soaRecord, type ZoneReader } from './zone-reader.js';

export interface DnsObserver {
  /** One query answered: its kind (soa, ns, axfr, ixfr, other) and response code. */
  answered(kind: string, rcode: RcodeName): void;
  /** A message that was no DNS query, dropped. */
  malformed(transport: 'udp' | 'tcp'): void;
  /** A transfer sent whole: full (AXFR, or IXFR answered with the full zone) or incremental. */
  transferred(kind: 'full' | 'incremental', records: number, ms: number): void;
  error(error: unknown): void;
}

export interface DnsServerOptions {
  readonly host: string;
  readonly port: number;
  readonly acl: AddressAcl;
  readonly zone: ZoneReader;
  readonly observer: DnsObserver;
  /** When set, queries must be signed with it, and answers are. */
  readonly tsig?: TsigKey | undefined;
}

export interface DnsServer {
  readonly port: number;
  close(): Promise<void>;
}

/** A TCP connection with nothing to read or write this long is closed. */
const TCP_IDLE_MS = 30_000;
/** Open TCP connections beyond this are closed at once: transfers are few, and each holds a read transaction. */
const MAX_TCP_CONNECTIONS = 64;

type Transport = 'udp' | 'tcp';

export async function startDnsServer(options: DnsServerOptions): Promise<DnsServer> {
  const tcp = createServer((socket) => serveTcp(socket, options));
  tcp.maxConnections = MAX_TCP_CONNECTIONS;
  tcp.listen(options.port, options.host);
  await once(tcp, 'listening');
  const address = tcp.address();
  const port = typeof address === 'object' && address !== null ? address.port : options.port;
  const udp = createSocket(isIP(options.host) === 6 ? 'udp6' : 'udp4');
  try {
    udp.bind(port, options.host);
    await once(udp, 'listening');
  } catch (error) {
    tcp.close();
    throw error;
  }
  udp.on('message', (message, remote) => serveUdp(udp, message, remote, options));
  udp.on('error', (error) => options.observer.error(error));
  return {
    port,
    close: async () => {
      udp.close();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
}

function serveUdp(udp: UdpSocket, message: Buffer, remote: { address: string; port: number }, options: DnsServerOptions): void {
  const query = decodeQuery(message);
  if (query === undefined) return options.observer.malformed('udp');
  // Whatever one datagram makes fail is that datagram's: reported, and the thread goes on serving (a
  // throw here would end the serving thread, and with it the daemon).
  try {
    const answer = signedAnswer(query, message, remote.address, 'udp', options);
    if (answer.kind === 'message') udp.send(answer.message, remote.port, remote.address);
  } catch (error) {
    options.observer.error(error);
  }
}

function serveTcp(socket: Socket, options: DnsServerOptions): void {
  socket.setTimeout(TCP_IDLE_MS, () => socket.destroy());
  socket.on('error', () => socket.destroy());
  let buffered = Buffer.alloc(0);
  let busy = Promise.resolve();
  socket.on('data', (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 2) {
      const length = buffered.readUInt16BE(0);
      if (buffered.length < 2 + length) break;
      const message = buffered.subarray(2, 2 + length);
      buffered = buffered.subarray(2 + length);
      // Queries on one connection are answered in order: a transfer finishes before the next starts.
      busy = busy.then(() => serveTcpMessage(socket, message, options)).catch((error: unknown) => {
        options.observer.error(error);
        socket.destroy();
      });
    }
  });
}

async function serveTcpMessage(socket: Socket, message: Buffer, options: DnsServerOptions): Promise<void> {
  if (socket.destroyed) return;
  const query = decodeQuery(message);
  if (query === undefined) {
    options.observer.malformed('tcp');
    socket.destroy();
    return;
  }
  const answer = signedAnswer(query, message, socket.remoteAddress ?? '', 'tcp', options);
  if (answer.kind === 'message') {
    await sendTcpMessage(socket, answer.message);
    return;
  }
  const started = performance.now();
  const version = options.zone.openVersion();
  try {
    const steps = answer.kind === 'ixfr' ? version.stepsSince(answer.clientSerial) : undefined;
    const records = steps === undefined ? version.full() : version.incremental(steps);
    let count = 0;
    const counted = function* (): Generator<Answer> {
      for (const record of records) {
        count += 1;
        yield record;
      }
    };
    for (const message of transferMessages(query, counted())) {
      // A client gone mid-transfer: stop reading the zone (the version's read transaction ends below).
      if (!(await sendTcpMessage(socket, answer.signer?.sign(message, nowSeconds()) ?? message))) return;
    }
    options.observer.answered(answer.kind, 'NOERROR');
    options.observer.transferred(steps === undefined ? 'full' : 'incremental', count, performance.now() - started);
  } finally {
    version.close();
  }
}

/**
 * Writes one TCP message (two-byte length first), waiting for the socket to drain; false when the
 * socket is gone. The wait's listeners go when it ends: a race of once('drain') and once('close')
 * left a 'close' and an 'error' listener behind at every wait (Node warned of a leak after 10, in
 * the first AXFR of a 1M zone: 754 messages).
 */
export async function sendTcpMessage(socket: Socket, message: Buffer): Promise<boolean> {
  if (socket.destroyed) return false;
  const framed = Buffer.allocUnsafe(2 + message.length);
  framed.writeUInt16BE(message.length, 0);
  message.copy(framed, 2);
  if (socket.write(framed)) return true;
  return new Promise<boolean>((resolve) => {
    const done = (): void => {
      socket.off('drain', done);
      socket.off('close', done);
      resolve(!socket.destroyed);
    };
    socket.on('drain', done);
    socket.on('close', done);
  });
}

type Answered =
  | { readonly kind: 'message'; readonly message: Buffer }
  | { readonly kind: 'axfr' }
  | { readonly kind: 'ixfr'; readonly clientSerial: number };

/** A transfer to stream, with the signer of its messages when queries are signed. */
type SignedAnswer = Exclude<Answered, { kind: 'message' }> & { readonly signer?: ResponseSigner | undefined };

/** TSIG's clock is the real one: a secondary's signature is checked against the time it was made. */
const nowSeconds = (): number => Math.floor(Date.now() / 1000);

/**
 * answerQuery behind the TSIG check when a key is set: an unsigned query is REFUSED, one whose
 * signature fails gets NOTAUTH with the TSIG error, and what a signed one is answered with is signed.
 */
function signedAnswer(query: DecodedPacket, message: Buffer, address: string, transport: Transport, options: DnsServerOptions): { readonly kind: 'message'; readonly message: Buffer } | SignedAnswer {
  const key = options.tsig;
  // Outside THREAT_MIRROR_DNS_ALLOW the answer is REFUSED whatever the signature: it tells nothing of the key.
  if (key === undefined || !options.acl.allows(address)) return answerQuery(query, address, transport, options);
  const kind = kindOf(query.questions?.[0]?.type);
  const signature = verifyRequest(message, key, nowSeconds());
  if (signature.kind === 'unsigned') {
    options.observer.answered(kind, 'REFUSED');
    return { kind: 'message', message: response(query, 'REFUSED') };
  }
  if (signature.kind === 'malformed') {
    options.observer.answered(kind, 'FORMERR');
    return { kind: 'message', message: response(query, 'FORMERR') };
  }
  if (signature.kind === 'invalid') {
    options.observer.answered(kind, 'NOTAUTH');
    return { kind: 'message', message: unsignedError(response(query, 'NOTAUTH'), signature, nowSeconds()) };
  }
  const signer = new ResponseSigner(key, signature);
  const answer = answerQuery(query, address, transport, options);
  return answer.kind === 'message' ? { kind: 'message', message: signer.sign(answer.message, nowSeconds()) } : { ...answer, signer };
}

/** The kind a query is counted under (threat_mirror_dns_queries_total{kind}). */
function kindOf(type: string | undefined): string {
  return type !== undefined && ['SOA', 'NS', 'AXFR', 'IXFR'].includes(type) ? type.toLowerCase() : 'other';
}

/** What a query gets: a message at once, or a transfer to stream (TCP only). */
function answerQuery(query: DecodedPacket, address: string, transport: Transport, options: DnsServerOptions): Answered {
  const { zone, observer } = options;
  const reply = (kind: string, rcode: RcodeName, answers: Answer[] = [], authorities: Answer[] = []): Answered => {
    observer.answered(kind, rcode);
    return { kind: 'message', message: response(query, rcode, answers, authorities) };
  };
  const question = query.questions?.[0];
  if (opcodeOf(query) !== OPCODE.QUERY) return reply('other', 'NOTIMP');
  if (question === undefined || (query.questions?.length ?? 0) !== 1) return reply('other', 'FORMERR');
  const kind = kindOf(question.type);
  if (!options.acl.allows(address)) return reply(kind, 'REFUSED');
  if (question.name.toLowerCase().replace(/\.$/, '') !== zone.settings.zone || (question.class ?? 'IN') !== 'IN') return reply(kind, 'REFUSED');
  const serial = zone.serial();
  if (serial === undefined) return reply(kind, 'SERVFAIL');
  const version = { soa: () => soaRecord(zone.settings, serial) };
  switch (question.type) {
    case 'SOA':
      return reply(kind, 'NOERROR', [version.soa()]);
    case 'NS':
      return reply(kind, 'NOERROR', [{ type: 'NS', name: zone.settings.zone, ttl: RPZ_TTL, class: 'IN', data: SOA_MNAME }]);
    case 'AXFR':
      return transport === 'tcp' ? { kind: 'axfr' } : reply(kind, 'REFUSED');
    case 'IXFR': {
      const clientSoa = query.authorities?.find((record) => record.type === 'SOA');
      if (clientSoa === undefined || clientSoa.type !== 'SOA') return reply(kind, 'FORMERR');
      const clientSerial = clientSoa.data.serial;
      if (clientSerial === undefined) return reply(kind, 'FORMERR');
      // Up to date (or ahead, RFC 1982), or over UDP: the current SOA alone (RFC 1995 sections 2 and 4:
      // over UDP it tells a client to come over TCP).
      if (clientSerial === serial || serialAfter(clientSerial, serial) || transport === 'udp') return reply(kind, 'NOERROR', [version.soa()]);
      return { kind: 'ixfr', clientSerial };
    }
    default:
      return reply(kind, 'NOERROR', [], [version.soa()]);
  }
}
