// The DNS primary's zone transfers over TCP with a zone of many messages (50,000 hosts, ~6 MB):
// a client that reads slowly gets every record, with no warning from the server on the way; a
// client that goes away mid-transfer leaves no read transaction behind on the index (its WAL
// could not be checkpointed while one was open). The waits themselves: test/unit/dns-send.test.ts.
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { decode, encode } from 'dns-packet';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../src/db/sqlite.js';
import { parseCidr } from '../src/config/dns.js';
import { AddressAcl } from '../src/dns/acl.js';
import { type DnsServer, startDnsServer } from '../src/dns/dns-server.js';
import { ZoneReader } from '../src/dns/zone-reader.js';
import { InFlightBudget } from '../src/serve/http-limits.js';
import { ExportIndex } from '../src/export/index/export-index.js';
import { zoneTimersFor } from '../src/lib/rpz-zone.js';
import { writeThreatRows } from './support/threat-rows.js';

const HOSTS = 50_000;
const ZONE = 'rpz.threat-mirror';
const STAMP = '2026-03-15T12:00:00.000Z';

let server: DnsServer;
let zone: ZoneReader;
let indexPath: string;
let dir: string;
const transfers: Array<{ kind: string; records: number }> = [];

function writeMirror(dbPath: string): void {
  const ids = Array.from({ length: HOSTS }, (_, at) => at + 1);
  writeThreatRows(dbPath, ids.map((id) => ({ id, content: `https://tm-transfer-${id}.example-phish.com/`, type: 'URL', blockedAt: STAMP, stamp: STAMP, changeSeq: id })));
}

function axfrQuery(): Buffer {
  const message = encode({ type: 'query', id: 7, flags: 0, questions: [{ type: 'AXFR', name: ZONE, class: 'IN' }] });
  const framed = Buffer.alloc(2 + message.length);
  framed.writeUInt16BE(message.length, 0);
  message.copy(framed, 2);
  return framed;
}

/**
 * Reads framed DNS messages until `records` records came, slower than the server writes (a pause
 * after each chunk): the socket's buffers stay full and the server waits for them to drain before
 * nearly every message. Returns the records counted.
 */
function readTransferSlowly(socket: Socket, records: number): Promise<number> {
  let buffered = Buffer.alloc(0);
  let count = 0;
  return new Promise((resolve, reject) => {
    socket.on('error', reject);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 2 && buffered.length >= 2 + buffered.readUInt16BE(0)) {
        const length = buffered.readUInt16BE(0);
        count += decode(buffered.subarray(2, 2 + length)).answers?.length ?? 0;
        buffered = buffered.subarray(2 + length);
      }
      if (count >= records) return resolve(count);
      socket.pause();
      setTimeout(() => socket.resume(), 10);
    });
  });
}

describe('zone transfers over TCP', () => {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'threat-mirror-transfer-'));
    const dbPath = join(dir, 'mirror.db');
    writeMirror(dbPath);
    indexPath = join(dir, 'exports', 'index.db');
    (await ExportIndex.create(dbPath, indexPath, { nowMs: Date.parse(STAMP), timers: zoneTimersFor(3600) })).close();
    const timers = zoneTimersFor(600);
    zone = new ZoneReader(indexPath, { zone: ZONE, timers });
    zone.markReady();
    server = await startDnsServer({
      host: '127.0.0.1',
      port: 0,
      acl: new AddressAcl([parseCidr('127.0.0.0/8')].filter((cidr) => cidr !== undefined)),
      zone,
      observer: { answered: () => undefined, malformed: () => undefined, transferred: (kind, records) => transfers.push({ kind, records }), failed: () => undefined, tcpClosed: () => undefined, error: () => undefined },
      memory: new InFlightBudget(),
    });
  }, 60_000);

  afterAll(async () => {
    await server?.close();
    zone?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('sends a slow reader every record of an AXFR, and no warning', async () => {
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(`${warning.name}: ${warning.message}`);
    };
    process.on('warning', onWarning);
    try {
      const socket = connect(server.port, '127.0.0.1');
      await once(socket, 'connect');
      socket.write(axfrQuery());
      const expected = 2 * HOSTS + 3; // SOA, NS, two per host, SOA
      expect(await readTransferSlowly(socket, expected)).toBe(expected);
      socket.destroy();
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).toEqual([]);
      expect(transfers.at(-1)).toEqual({ kind: 'full', records: expected });
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('lets go of the zone when the client leaves mid-transfer', async () => {
    const socket = connect(server.port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write(axfrQuery());
    socket.pause();
    // Long enough for the server to fill the socket's buffers and wait for them to drain.
    await new Promise((resolve) => setTimeout(resolve, 500));
    const index = new Database(indexPath, { fileMustExist: true });
    // Not waiting inside SQLite: the server runs on this thread's event loop and must get its turn.
    index.pragma('busy_timeout = 0');
    const checkpointBusy = (): number => (index.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>)[0]?.busy ?? 1;
    try {
      index.exec('CREATE TABLE IF NOT EXISTS probe (x); INSERT INTO probe VALUES (1)');
      // The positive control: mid-transfer, the transfer's read transaction holds the index's WAL.
      expect(checkpointBusy(), 'no reader held the index mid-transfer: the test would prove nothing').toBe(1);
      socket.destroy();
      // The transfer's read transaction ends: a checkpoint that truncates the index's WAL is then not blocked by a reader.
      const started = Date.parse(STAMP);
      let busy = 1;
      while (Date.parse(STAMP) - started < 5_000) {
        busy = checkpointBusy();
        if (busy === 0) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(busy, 'a reader still holds the index').toBe(0);
    } finally {
      index.close();
    }
  });
});
