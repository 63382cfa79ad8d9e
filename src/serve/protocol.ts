// The messages between the main thread (serving-client.ts) and the serving thread
// (serving-thread.ts), each side's listed once, on the model of the writer's (db/writer/protocol.ts):
// what the thread starts with, what it tells the main thread, and what it is told. Each side
// handles them through a table whose type requires a handler for every kind (Handlers), so a new
// message is one line here and a handler the compiler asks for on the side that takes it.
import type { Allowlist } from '../allowlist/allowlist-entries.js';
import type { DnsConfig } from '../config/dns.js';
import type { RcodeName } from '../dns/messages.js';
import type { CutOff } from '../dns/tcp-session.js';
import type { ZoneTimers } from '../lib/rpz-zone.js';
import type { FreshAnswer, FreshJudgement } from '../lookup/fresh-lookup.js';
import type { ServingFailure } from './guard.js';
import type { LookupBatch } from './lookup-stats.js';

/** What the serving thread starts with (its workerData). */
export interface ServingThreadData {
  readonly host: string;
  /** undefined: no HTTP server, the thread serves DNS only (enforcement). */
  readonly port: number | undefined;
  readonly dbPath: string;
  /** The organizations /v1/lookup answers for, and the daemon's clock as an offset from this machine's. */
  readonly mirrored: { readonly organizations: readonly string[]; readonly clockOffsetMs: number };
  /** Enforcement: feeds, and the DNS primary when configured (enforcement-side.ts). */
  readonly enforcement: EnforcementData;
  /** sha256 (hex) of THREAT_MIRROR_HTTP_TOKEN, which /v1/* then requires; the token itself never reaches this thread. */
  readonly tokenDigest?: string | undefined;
  /** THREAT_MIRROR_ALLOWLIST as the main thread read it at start; later versions come as messages. */
  readonly allowlist: Allowlist | undefined;
}

/** What the thread's enforcement side (the feeds, the DNS primary) starts with. */
export interface EnforcementData {
  readonly dbPath: string;
  /** The export index the refresh job keeps, when one is kept (DNS, or host-format exports). */
  readonly indexPath: string | undefined;
  /** Where feeds are built. */
  readonly feedsFolder: string;
  readonly timers: ZoneTimers;
  readonly feedMaxAgeSeconds: number;
  /** The DNS primary's settings; its TSIG secret as base64 text (a Secret does not cross to a thread). */
  readonly dns: (Omit<DnsConfig, 'tsig'> & { readonly tsig: { readonly name: string; readonly secret: string } | undefined }) | undefined;
}

/** One HTTP answer of the main thread (a probe's), plain data: it crosses to the serving thread. */
export interface ProbeAnswer {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

/** What the DNS primary and the NOTIFYs report, for the main thread to log and count. */
export type EnforcementEvent =
  | { readonly type: 'dns-listening'; readonly port: number }
  | { readonly type: 'error'; readonly message: string }
  | { readonly type: 'dns-answered'; readonly kind: string; readonly rcode: RcodeName }
  | { readonly type: 'dns-malformed'; readonly transport: 'udp' | 'tcp' }
  | { readonly type: 'dns-tcp-closed'; readonly reason: CutOff | 'full' }
  | { readonly type: 'dns-transferred'; readonly kind: 'full' | 'incremental'; readonly records: number; readonly ms: number }
  | { readonly type: 'dns-notified'; readonly target: string; readonly outcome: 'answered' | 'unanswered' };

/** From the main thread: the export index has a new version (the first one: it is ready). */
export type EnforcementCommand = { readonly type: 'index-updated'; readonly serial: number; readonly zoneChanged: boolean };

/** From the serving thread to the main thread. */
export type FromServingThread =
  | { readonly kind: 'listening'; readonly port: number }
  | { readonly kind: 'failed'; readonly message: string }
  /** A probe's path, for the main thread to answer (probe-answer). */
  | { readonly kind: 'probe'; readonly id: number; readonly method: string; readonly path: string }
  /** A fresh lookup's questions, one answer's values, for the main thread to ask the service (fresh-answer), with the judgement of each organization asked about. */
  | { readonly kind: 'fresh'; readonly id: number; readonly values: readonly string[]; readonly judged: readonly FreshJudgement[] }
  /** A handler failed: answered 400/500 (DNS: FORMERR/SERVFAIL) by the guard, for the main thread to log and count. */
  | { readonly kind: 'failure'; readonly failure: ServingFailure }
  | ({ readonly kind: 'lookups' } & LookupBatch)
  | { readonly kind: 'closed' }
  | { readonly kind: 'enforcement'; readonly event: EnforcementEvent };

/** From the main thread to the serving thread. */
export type ToServingThread =
  | { readonly kind: 'probe-answer'; readonly id: number; readonly answer: ProbeAnswer }
  | { readonly kind: 'fresh-answer'; readonly id: number; readonly answer: readonly FreshAnswer[] }
  | { readonly kind: 'close' }
  | { readonly kind: 'enforcement'; readonly command: EnforcementCommand }
  /** A new version of THREAT_MIRROR_ALLOWLIST: lookups and feeds answer with it from now on. */
  | { readonly kind: 'allowlist'; readonly list: Allowlist };

/** A handler for every kind of message M: the table's type makes each one required. */
export type Handlers<M extends { readonly kind: string }> = { readonly [K in M['kind']]: (message: Extract<M, { readonly kind: K }>) => void };

/** Hands a message to its kind's handler. */
export function dispatch<M extends { readonly kind: string }>(handlers: Handlers<M>, message: M): void {
  (handlers[message.kind as M['kind']] as (message: M) => void)(message);
}
