// Raw DNS-over-TCP clients for the primary's bounds: a connection from a chosen loopback source
// (127.0.0.9 is outside an allow list of 127.0.0.1/32; Linux answers on all of 127.0.0.0/8), a
// client that pipelines queries and never reads, one that trickles bytes, and a framed query.
import { connect, type Socket } from 'node:net';
import { encode } from 'dns-packet';

export const ZONE = 'rpz.threat-mirror';

/** A query for the zone (SOA unless said), framed with its two-byte length. */
export function framedQuery(id: number, type: 'SOA' | 'AXFR' | 'NS' = 'SOA'): Buffer {
  const message = encode({ type: 'query', id, flags: 0, questions: [{ type, name: ZONE, class: 'IN' }] });
  const framed = Buffer.alloc(2 + message.length);
  framed.writeUInt16BE(message.length, 0);
  message.copy(framed, 2);
  return framed;
}

/** A TCP connection to the primary from `source`, once connected. */
export function connectFrom(source: string, port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, localAddress: source });
    socket.once('connect', () => {
      socket.off('error', reject);
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** Resolves when the socket is closed (by either side), with the milliseconds it took from now. */
export function closedWithin(socket: Socket): Promise<number> {
  const started = performance.now();
  return new Promise((resolve) => {
    if (socket.destroyed) return resolve(0);
    socket.once('close', () => resolve(performance.now() - started));
  });
}

export interface Pipelined {
  /** Bytes of queries the client wrote (the kernel took them). */
  readonly sent: number;
  /** How it ended: the server closed the connection, stopped reading (no drain within stallMs), or the client reached its limit. */
  readonly ended: 'closed' | 'stalled' | 'limit';
}

/**
 * Writes framed SOA queries back to back in batches of ~64 KB, reading none of the answers, as
 * fast as the connection takes them, until the server closes it, stops taking them for `stallMs`,
 * or `limitBytes` are sent.
 */
export async function pipelineWithoutReading(socket: Socket, { limitBytes, stallMs }: { limitBytes: number; stallMs: number }): Promise<Pipelined> {
  socket.pause(); // never read: answers stay in the kernel's buffers, then in the server's
  socket.on('error', () => undefined);
  const batch = Buffer.concat(Array.from({ length: 1_800 }, (_, index) => framedQuery(index)));
  let sent = 0;
  while (sent < limitBytes) {
    if (socket.destroyed || socket.writableEnded) return { sent, ended: 'closed' };
    const flowing = socket.write(batch);
    sent += batch.length;
    if (flowing) continue;
    const outcome = await new Promise<'drain' | 'closed' | 'stalled'>((resolve) => {
      const timer = setTimeout(() => finish('stalled'), stallMs);
      const onDrain = (): void => finish('drain');
      const onClose = (): void => finish('closed');
      function finish(how: 'drain' | 'closed' | 'stalled'): void {
        clearTimeout(timer);
        socket.off('drain', onDrain);
        socket.off('close', onClose);
        resolve(how);
      }
      socket.once('drain', onDrain);
      socket.once('close', onClose);
    });
    if (outcome !== 'drain') return { sent: sent - socket.writableLength, ended: outcome };
  }
  return { sent, ended: 'limit' };
}

/** Sends one byte of a query now and one more every `everyMs` (a message that never completes), until the socket closes. */
export function trickle(socket: Socket, everyMs: number): void {
  socket.on('error', () => undefined);
  socket.write(Buffer.from([0x00]));
  const timer = setInterval(() => {
    if (socket.destroyed) return clearInterval(timer);
    socket.write(Buffer.from([0x40]));
  }, everyMs);
  socket.once('close', () => clearInterval(timer));
}

/** The resident set of a process, in MB (Linux). */
export async function residentMb(pid: number): Promise<number> {
  const { readFile } = await import('node:fs/promises');
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? 0) / 1024;
}
