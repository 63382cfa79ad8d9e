// How the DNS primary writes a TCP message and waits for the socket to drain. Judged on a real
// Node stream that takes one write at a time (a socket whose peer reads slowly): every wait's
// listeners go when it ends, the bytes held in the memory share come back once written, and a
// peer that reads nothing is cut off. A race of once('drain') and once('close') left a 'close' and an
// 'error' listener behind at every wait; the first AXFR of a 1M zone (754 messages) had Node warn
// of a leak.
import type { Socket } from 'node:net';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { HeldOutput, sendTcpMessage } from '../../src/dns/tcp-session.js';
import { InFlightBudget } from '../../src/serve/http-limits.js';

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

const STALL_MS = 5_000;

describe('sendTcpMessage', () => {
  it('waits for each drain, leaves no listener behind, and gives the bytes back to the share once written', async () => {
    const { stream, received } = slowPeer();
    const memory = new InFlightBudget(16, 64 * 1024);
    const output = new HeldOutput(memory, stream as unknown as Socket);
    const listeners = (): number[] => ['drain', 'close', 'error'].map((event) => stream.listenerCount(event));
    const before = listeners();
    for (let index = 0; index < 50; index += 1) expect(await sendTcpMessage(stream as unknown as Socket, Buffer.alloc(4096, index), output, { ms: STALL_MS })).toBe(true);
    expect(listeners()).toEqual(before);
    await new Promise((resolve) => setImmediate(resolve));
    expect(memory.bytes).toBe(0);
    expect(received).toHaveLength(50);
    // Each message framed with its two-byte length.
    expect(received.every((chunk) => chunk.length === 4098 && chunk.readUInt16BE(0) === 4096)).toBe(true);
  });

  it('says false, and adds nothing, once the socket is gone', async () => {
    const { stream } = slowPeer();
    const memory = new InFlightBudget();
    const output = new HeldOutput(memory, stream as unknown as Socket);
    const waiting = sendTcpMessage(stream as unknown as Socket, Buffer.alloc(4096), output, { ms: STALL_MS });
    stream.destroy();
    expect(await waiting).toBe(false);
    expect(await sendTcpMessage(stream as unknown as Socket, Buffer.alloc(16), output, { ms: STALL_MS })).toBe(false);
    expect(['drain', 'close'].map((event) => stream.listenerCount(event))).toEqual([0, 0]);
    expect(memory.bytes).toBe(0);
  });

  it('cuts off a peer that reads nothing within the stall time, and gets its bytes back', async () => {
    // Takes nothing after its first write: a client that never reads its answers.
    const stream = new Writable({ highWaterMark: 1024, write: () => undefined });
    const memory = new InFlightBudget();
    const output = new HeldOutput(memory, stream as unknown as Socket);
    const started = performance.now();
    let stalled = 0;
    expect(await sendTcpMessage(stream as unknown as Socket, Buffer.alloc(4096), output, { ms: 200, onStall: () => (stalled += 1) })).toBe(false);
    expect(stalled).toBe(1);
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    expect(stream.destroyed).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    expect(memory.bytes).toBe(0);
  });
});
