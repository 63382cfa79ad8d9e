// How the DNS primary writes a TCP message and waits for the socket to drain. Judged on a real
// Node stream that takes one write at a time (a socket whose peer reads slowly): every wait's
// listeners go when it ends. A race of once('drain') and once('close') left a 'close' and an
// 'error' listener behind at every wait; the first AXFR of a 1M zone (754 messages) had Node warn
// of a leak.
import type { Socket } from 'node:net';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { sendTcpMessage } from '../../src/dns/dns-server.js';

/** A stream that accepts each write a moment later, holding at most 1 KB: every 4 KB message waits for 'drain'. */
function slowPeer(): { stream: Writable; received: Buffer[] } {
  const received: Buffer[] = [];
  const stream = new Writable({
    highWaterMark: 1024,
    write(chunk: Buffer, _encoding, done) {
      received.push(chunk);
      setImmediate(done);
    },
  });
  return { stream, received };
}

describe('sendTcpMessage', () => {
  it('waits for each drain and leaves no listener behind', async () => {
    const { stream, received } = slowPeer();
    const listeners = (): number[] => ['drain', 'close', 'error'].map((event) => stream.listenerCount(event));
    const before = listeners();
    for (let index = 0; index < 50; index += 1) expect(await sendTcpMessage(stream as unknown as Socket, Buffer.alloc(4096, index))).toBe(true);
    expect(listeners()).toEqual(before);
    expect(received).toHaveLength(50);
    // Each message framed with its two-byte length.
    expect(received.every((chunk) => chunk.length === 4098 && chunk.readUInt16BE(0) === 4096)).toBe(true);
  });

  it('says false, and adds nothing, once the socket is gone', async () => {
    const { stream } = slowPeer();
    const waiting = sendTcpMessage(stream as unknown as Socket, Buffer.alloc(4096));
    stream.destroy();
    expect(await waiting).toBe(false);
    expect(await sendTcpMessage(stream as unknown as Socket, Buffer.alloc(16))).toBe(false);
    expect(['drain', 'close'].map((event) => stream.listenerCount(event))).toEqual([0, 0]);
  });
});
