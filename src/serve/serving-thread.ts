// The serving thread: the HTTP server of THREAT_MIRROR_HTTP_PORT and the DNS primary, on a thread
// of their own. It answers /v1/lookup and the feeds from its own read-only connections, so a
// lookup never waits behind the sync's work on the main thread (fetching, parsing and validating
// pages held p99 at 62 ms at 500 lookups/s during a backfill). Every other path (/healthz,
// /readyz, /startupz, /metrics) is asked of the main thread: they must go on saying whether *it*
// answers, so a stuck main thread still shows in them. Its messages: protocol.ts.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type MessagePort, parentPort, workerData } from 'node:worker_threads';
import type { Allowlist } from '../allowlist/allowlist-entries.js';
import { type AllowMatcher, matcherFor } from '../allowlist/allow-matcher.js';
import { openDatabaseReadOnly, type ReadOnlyConnection } from '../db/open-database.js';
import { SyncHealthReads } from '../db/read/sync-health.js';
import { readSync } from '../lookup/sync-judgement.js';
import { ThreatLookup } from '../lookup/threat-lookup.js';
import { type EnforcementSide, startEnforcementSide } from './enforcement-side.js';
import { FreshForwarder, ProbeForwarder } from './forwarders.js';
import { describeError, type ReportFailure } from './guard.js';
import { capConnectionsPerAddress, HEADERS_TIMEOUT_MS, IDLE_TIMEOUT_MS, InFlightBudget, MAX_CONNECTIONS, REQUEST_TIMEOUT_MS, TIMEOUT_CHECK_INTERVAL_MS } from './http-limits.js';
import { createLookupHandler, type LookupHandler } from './lookup-http.js';
import { LookupStats } from './lookup-stats.js';
import { dispatch, type FromServingThread, type Handlers, type ServingThreadData, type ToServingThread } from './protocol.js';
import { routeRequests } from './routes.js';

/**
 * THREAT_MIRROR_ALLOWLIST as the main thread last sent it (it alone reads the file): every answer
 * of this thread uses one version, the one the index and the files are brought to.
 */
class AllowlistInUse {
  list: Allowlist | undefined;
  matcher: AllowMatcher | undefined;

  constructor(list: Allowlist | undefined) {
    this.take(list);
  }

  take(list: Allowlist | undefined): void {
    this.list = list;
    this.matcher = matcherFor(list?.entries);
  }
}

/** What the thread opened, closed in reverse on the way out. */
interface Opened {
  readonly mirror: ReadOnlyConnection;
  readonly enforcement: EnforcementSide;
  readonly server: Server;
}

async function serve(port: MessagePort): Promise<void> {
  const data = workerData as ServingThreadData;
  const post = (message: FromServingThread): void => port.postMessage(message);
  let closing = false;
  let mirror: ReadOnlyConnection | undefined;
  let enforcement: EnforcementSide | undefined;
  const probes = new ProbeForwarder(post);
  const fresh = new FreshForwarder(post);
  const lookupStats = new LookupStats((batch) => post({ kind: 'lookups', ...batch }));
  const allowlist = new AllowlistInUse(data.allowlist);
  const report: ReportFailure = (failure) => {
    if (!closing) post({ kind: 'failure', failure }); // not a request cut short by the shutdown
  };
  try {
    // A read-only connection of its own, with the driver alone: this isolate loads only what lookups need.
    mirror = openDatabaseReadOnly(data.dbPath);
    // One budget of requests and bytes in flight for lookups, feeds and DNS alike (http-limits.ts).
    const budget = new InFlightBudget();
    const lookup = lookupHandlerOn(mirror, data.mirrored, { budget, allowlist, fresh, report });
    enforcement = await startEnforcementSide(data.enforcement, (event) => post({ kind: 'enforcement', event }), { budget, allowlist: () => allowlist.list, report });
    const feeds = enforcement.feeds;
    const tokenDigest = data.tokenDigest === undefined ? undefined : Buffer.from(data.tokenDigest, 'hex');
    const api = { '/v1/lookup': lookup, '/v1/exports/': feeds.handle };
    const server = createServer(
      { headersTimeout: HEADERS_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, connectionsCheckingInterval: TIMEOUT_CHECK_INTERVAL_MS },
      routeRequests({ api, tokenDigest, lookupStats, probes, report }),
    );
    const opened: Opened = { mirror, enforcement, server };
    const handlers: Handlers<ToServingThread> = {
      enforcement: (message) => opened.enforcement.command(message.command),
      'probe-answer': (message) => probes.answer(message.id, message.answer),
      'fresh-answer': (message) => fresh.answer(message.id, message.answer),
      allowlist: (message) => allowlist.take(message.list),
      close: () => {
        closing = true;
        lookupStats.stop();
        close(opened, port, post);
      },
    };
    port.on('message', (message: ToServingThread) => dispatch(handlers, message));
    listen(server, data, () => {
      opened.mirror.close();
      port.close();
    }, post);
  } catch (error) {
    await enforcement?.close().catch(() => undefined);
    mirror?.close();
    post({ kind: 'failed', message: error instanceof Error ? error.message : String(error) });
    port.close();
  }
}

/** /v1/lookup on the thread's connection, its verdicts judged on the sync's clock. */
function lookupHandlerOn(
  mirror: ReadOnlyConnection,
  { organizations, clockOffsetMs }: ServingThreadData['mirrored'],
  { budget, allowlist, fresh, report }: { budget: InFlightBudget; allowlist: AllowlistInUse; fresh: FreshForwarder; report: ReportFailure },
): LookupHandler {
  const reads = new SyncHealthReads(mirror.sqlite);
  return createLookupHandler({
    lookup: new ThreatLookup(mirror.sqlite),
    organizations,
    sync: (asked) => readSync(reads, asked, new Date(Date.now() + clockOffsetMs)),
    onError: (error) => report({ listener: 'http', route: '/v1/lookup', answer: '500', ...describeError(error) }),
    budget,
    allowlist: () => allowlist.matcher,
    askFresh: (values, judged) => fresh.ask(values, judged),
  });
}

/** Closes the server and its connections, then the enforcement side and the connection; says so, and lets the thread end. */
function close(opened: Opened, port: MessagePort, post: (message: FromServingThread) => void): void {
  opened.server.close();
  opened.server.closeAllConnections();
  void opened.enforcement.close().finally(() => {
    opened.mirror.close();
    post({ kind: 'closed' });
    port.close();
  });
}

/** Serves on the configured port (none: DNS only), with its bounds; a failure to listen is told, and `release` lets go. */
function listen(server: Server, data: ServingThreadData, release: () => void, post: (message: FromServingThread) => void): void {
  server.maxConnections = MAX_CONNECTIONS;
  capConnectionsPerAddress(server);
  server.setTimeout(IDLE_TIMEOUT_MS);
  server.once('error', (error) => {
    post({ kind: 'failed', message: error.message });
    release();
  });
  if (data.port === undefined) post({ kind: 'listening', port: 0 });
  else server.listen(data.port, data.host, () => post({ kind: 'listening', port: (server.address() as AddressInfo).port }));
}

if (parentPort) void serve(parentPort);
