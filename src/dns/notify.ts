// THREAT_MIRROR_DNS_NOTIFY: after a run that changed the zone, each secondary is told (RFC 1996
// NOTIFY) so that it asks for the new version now rather than at its next refresh. A NOTIFY not
// answered is sent again (RFC 1996 3.6: a handful of retransmissions at growing intervals); a
// newer serial replaces a pending one for the same target.
import { createSocket, type Socket } from 'node:dgram';
import { isIP } from 'node:net';
import { decode } from 'dns-packet';
import type { NotifyTarget } from '../config/dns.js';
import { notifyMessage } from './messages.js';
import { signRequest, type TsigKey } from './tsig.js';
import { soaRecord, type ZoneSettings } from './zone-reader.js';

export interface NotifyObserver {
  /** answered: the secondary acknowledged; unanswered: every retransmission went unanswered. */
  notified(target: string, outcome: 'answered' | 'unanswered'): void;
}

/** Waits before each retransmission: 5 of them, over about a minute. */
export const NOTIFY_RETRY_MS = [2_000, 4_000, 8_000, 16_000, 32_000] as const;

interface Pending {
  readonly id: number;
  timer: NodeJS.Timeout;
}

export class Notifier {
  readonly #socket: Socket;
  readonly #settings: ZoneSettings;
  readonly #targets: readonly NotifyTarget[];
  readonly #observer: NotifyObserver;
  readonly #retryMs: readonly number[];
  readonly #tsig: TsigKey | undefined;
  readonly #pending = new Map<string, Pending>();
  #closed = false;

  /** `source`: the address NOTIFYs leave from, the primary's own (secondaries accept them from their primary). */
  /** `tsig`: THREAT_MIRROR_DNS_TSIG_KEY, when set: each NOTIFY is signed with it (a secondary that has the key for its primary may require it). */
  constructor(options: { source: string; settings: ZoneSettings; targets: readonly NotifyTarget[]; observer: NotifyObserver; retryMs?: readonly number[]; tsig?: TsigKey | undefined }) {
    this.#settings = options.settings;
    this.#tsig = options.tsig;
    this.#targets = options.targets;
    this.#observer = options.observer;
    this.#retryMs = options.retryMs ?? NOTIFY_RETRY_MS;
    this.#socket = createSocket(isIP(options.source) === 6 ? 'udp6' : 'udp4');
    this.#socket.bind(0, options.source);
    this.#socket.on('message', (message, remote) => this.#answered(message, remote));
    this.#socket.on('error', () => undefined); // an unreachable target shows as no answer
  }

  notify(serial: number): void {
    for (const target of this.#targets) this.#send(target, serial, 0);
  }

  close(): void {
    this.#closed = true;
    for (const pending of this.#pending.values()) clearTimeout(pending.timer);
    this.#pending.clear();
    this.#socket.close();
  }

  #send(target: NotifyTarget, serial: number, attempt: number): void {
    if (this.#closed) return;
    const key = keyOf(target);
    const previous = this.#pending.get(key);
    if (previous !== undefined) clearTimeout(previous.timer);
    const id = previous !== undefined && attempt > 0 ? previous.id : Math.floor(Math.random() * 0x10000);
    const message = notifyMessage(id, this.#settings.zone, soaRecord(this.#settings, serial));
    this.#socket.send(this.#tsig === undefined ? message : signRequest(message, this.#tsig, Math.floor(Date.now() / 1000)), target.port, target.host);
    const wait = this.#retryMs[attempt];
    const timer = setTimeout(() => {
      if (wait === undefined || attempt >= this.#retryMs.length) {
        this.#pending.delete(key);
        this.#observer.notified(key, 'unanswered');
        return;
      }
      this.#send(target, serial, attempt + 1);
    }, wait ?? 0);
    timer.unref();
    this.#pending.set(key, { id, timer });
  }

  #answered(message: Buffer, remote: { address: string; port: number }): void {
    const key = keyOf({ host: remote.address, port: remote.port });
    const pending = this.#pending.get(key);
    let id: number | undefined;
    try {
      id = decode(message).id;
    } catch {
      return;
    }
    if (pending === undefined || id !== pending.id) return;
    clearTimeout(pending.timer);
    this.#pending.delete(key);
    this.#observer.notified(key, 'answered');
  }
}

function keyOf(target: NotifyTarget): string {
  return isIP(target.host) === 6 ? `[${target.host}]:${target.port}` : `${target.host}:${target.port}`;
}
