// The DNS primary of the response policy zone: UDP and TCP on one port (every secondary asks the
// SOA over UDP first, then transfers over TCP). It answers the zone's SOA and NS, AXFR (TCP) and
// IXFR (RFC 1995), to the addresses of THREAT_MIRROR_DNS_ALLOW only (others: REFUSED); any other
// name gets REFUSED, another opcode NOTIMP; what does not decode as a query is dropped and counted.
// With a TSIG key (THREAT_MIRROR_DNS_TSIG_KEY) every query must also be signed with it: unsigned
// ones are REFUSED, badly signed ones get NOTAUTH, and every message answered is signed (answers.ts).
// TCP connections are admitted and bounded before any work is queued (tcp-admission.ts,
// tcp-session.ts), and every message is handled inside a guard: what throws is answered SERVFAIL
// (or the connection closed mid-transfer), reported, and never ends the serving thread.
import { createSocket, type Socket as UdpSocket } from 'node:dgram';
import { once } from 'node:events';
import { createServer, isIP, type Socket } from 'node:net';
import type { Answer, DecodedPacket } from 'dns-packet';
import type { AddressAcl } from './acl.js';
import { type AnswerContext, kindOf, nowSeconds, type SignedAnswer, signedAnswer, type Transport } from './answers.js';
import { decodeQuery, failureResponse, questionReadsBack, type RcodeName, transferMessages } from './messages.js';
import { ALLOWED_SESSION, REFUSED_SESSION, TcpAdmission } from './tcp-admission.js';
import { type CutOff, type MemoryShare, type SendMessage, serveTcpSession } from './tcp-session.js';
import type { TsigKey } from './tsig.js';
import type { ZoneReader } from './zone-reader.js';

export interface DnsObserver {
  /** One query answered: its kind (soa, ns, axfr, ixfr, other) and response code. */
  answered(kind: string, rcode: RcodeName): void;
  /** A message that was no DNS query, dropped. */
  malformed(transport: Transport): void;
  /** A transfer sent whole: full (AXFR, or IXFR answered with the full zone) or incremental. */
  transferred(kind: 'full' | 'incremental', records: number, ms: number): void;
  /** A message whose handling threw: answered `answer` (SERVFAIL), or its connection closed. */
  failed(transport: Transport, kind: string, answer: RcodeName | 'closed', error: unknown): void;
  /** A TCP connection the primary closed itself: no place for it at accept (full), or beyond a bound of its session. */
  tcpClosed(reason: CutOff | 'full'): void;
  /** A listener's own error (the UDP socket's). */
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
  /** The serving thread's memory share (InFlightBudget), which TCP connections hold their bytes in. */
  readonly memory: MemoryShare;
}

export interface DnsServer {
  readonly port: number;
  close(): Promise<void>;
}

export async function startDnsServer(options: DnsServerOptions): Promise<DnsServer> {
  const context: AnswerContext = { acl: options.acl, zone: options.zone, tsig: options.tsig, answered: (kind, rcode) => options.observer.answered(kind, rcode) };
  const admission = new TcpAdmission(options.acl);
  const tcp = createServer((socket) => acceptTcp(socket, admission, context, options));
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
  udp.on('message', (message, remote) => serveUdp(udp, message, remote, context, options.observer));
  udp.on('error', (error) => options.observer.error(error));
  return {
    port,
    close: async () => {
      udp.close();
      await new Promise<void>((resolve) => tcp.close(() => resolve()));
    },
  };
}

/** One datagram, inside the guard: whatever it makes fail is answered SERVFAIL and reported. */
function serveUdp(udp: UdpSocket, message: Buffer, remote: { address: string; port: number }, context: AnswerContext, observer: DnsObserver): void {
  const query = decodeQuery(message);
  if (query === undefined) return observer.malformed('udp');
  try {
    const answer = questionReadsBack(query, message) ? signedAnswer(query, message, remote.address, 'udp', context) : unreadable(message, context);
    if (answer.kind === 'message') udp.send(answer.message, remote.port, remote.address);
  } catch (error) {
    observer.failed('udp', kindOf(query), 'SERVFAIL', error);
    const failure = failureResponse(message, query, 'SERVFAIL');
    if (failure !== undefined) udp.send(failure, remote.port, remote.address);
  }
}

/** A new TCP connection: a place in its pool, or closed at once (tcp-admission.ts). */
function acceptTcp(socket: Socket, admission: TcpAdmission, context: AnswerContext, options: DnsServerOptions): void {
  const address = socket.remoteAddress;
  const pool = admission.admit(address);
  const { observer } = options;
  if (pool === undefined || address === undefined) {
    observer.tcpClosed('full');
    socket.on('error', () => undefined);
    socket.destroy();
    return;
  }
  socket.once('close', () => admission.release(pool, address));
  serveTcpSession(socket, pool === 'allowed' ? ALLOWED_SESSION : REFUSED_SESSION, {
    memory: options.memory,
    answer: (message, send) => serveTcpMessage(message, address, send, context, observer),
    cutOff: (reason) => observer.tcpClosed(reason),
  });
}

/**
 * One query of a TCP connection, inside the guard: a throw before anything was sent is answered
 * SERVFAIL; one mid-transfer closes the connection (its answer cannot be taken back). Either way
 * it is reported, and the connection's session goes on or ends; the thread goes on.
 */
async function serveTcpMessage(message: Buffer, address: string, send: SendMessage, context: AnswerContext, observer: DnsObserver): Promise<void> {
  const query = decodeQuery(message);
  if (query === undefined) {
    observer.malformed('tcp');
    throw new Error('not a DNS query: the connection is closed');
  }
  let sent = false;
  const sendCounted: SendMessage = (bytes) => {
    sent = true;
    return send(bytes);
  };
  try {
    const answer = questionReadsBack(query, message) ? signedAnswer(query, message, address, 'tcp', context) : unreadable(message, context);
    if (answer.kind === 'message') await sendCounted(answer.message);
    else await transfer(query, answer, sendCounted, context, observer);
  } catch (error) {
    const failure = sent ? undefined : failureResponse(message, query, 'SERVFAIL');
    observer.failed('tcp', kindOf(query), failure === undefined ? 'closed' : 'SERVFAIL', error);
    if (failure === undefined) throw error;
    await send(failure);
  }
}

/** FORMERR with no question, for a query whose question an answer could not echo as sent (messages.ts). */
function unreadable(message: Buffer, context: AnswerContext): { readonly kind: 'message'; readonly message: Buffer } {
  context.answered('other', 'FORMERR');
  return { kind: 'message', message: failureResponse(message, undefined, 'FORMERR') ?? Buffer.alloc(0) };
}

/** Streams a transfer, the zone read from one version of the index; stops when the client is gone. */
async function transfer(query: DecodedPacket, answer: SignedAnswer, send: SendMessage, context: AnswerContext, observer: DnsObserver): Promise<void> {
  const started = performance.now();
  const version = context.zone.openVersion();
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
      if (!(await send(answer.signer?.sign(message, nowSeconds()) ?? message))) return;
    }
    observer.answered(answer.kind, 'NOERROR');
    observer.transferred(steps === undefined ? 'full' : 'incremental', count, performance.now() - started);
  } finally {
    version.close();
  }
}
