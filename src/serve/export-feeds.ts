// GET /v1/exports/FORMAT[?org=NAME]: every export format over HTTP, the bytes `export --format`
// writes, for list updaters that poll (Pi-hole, AdGuard Home, IDS and wallet updaters, TAXII-less
// STIX consumers). Each feed is built into a file once per change of what it is made of, on the
// first request after the change, and served from that file with ETag, Last-Modified and
// Cache-Control; If-None-Match and If-Modified-Since get 304. Host formats of every organization
// come from the export index (the zone's version), others from the mirror, both read-only, and
// each build runs as a job on a thread of its own (export/jobs/).
import { createReadStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { Allowlist } from '../allowlist/allowlist-entries.js';
import { Database } from '../db/sqlite.js';
import { commitTempFile, discardTempFile } from '../export/atomic-file.js';
import { EXPORT_FORMATS, type ExportFormat, isExportFormat, isHostFormat } from '../config/export-formats.js';
import { IndexView } from '../export/index/index-view.js';
import type { ZoneTimers } from '../lib/rpz-zone.js';
import { runExportJob } from '../export/jobs/export-job-client.js';
import { InFlightBudget, RETRY_AFTER_SECONDS } from './http-limits.js';
import { openReadOnly } from '../db/open-database.js';
import { organizationProblem } from '../db/read/answered-organizations.js';

/**
 * Feeds in flight at once. A feed takes its place in the HTTP thread's budget of requests (shared
 * with lookups) until its last byte is sent, and a slow client may take minutes over a large one:
 * feeds alone never hold more than half of the places, so lookups always keep the rest.
 */
const MAX_FEEDS_IN_FLIGHT = 8;

export interface FeedOptions {
  readonly dbPath: string;
  /** The export index, once the main thread has built it; host formats of every organization are read from it. */
  readonly indexPath: () => string | undefined;
  readonly folder: string;
  readonly timers: ZoneTimers;
  /** Cache-Control max-age: how long a client may use a copy without asking. */
  readonly maxAgeSeconds: number;
  readonly onError: (error: unknown) => void;
  /** The HTTP thread's requests in flight (lookups and feeds): beyond it, 503 with Retry-After. */
  readonly budget: InFlightBudget;
  /** THREAT_MIRROR_ALLOWLIST as this thread has it now (feeds from the mirror leave out what it allows). */
  readonly allowlist: () => Allowlist | undefined;
}

interface Feed {
  readonly path: string;
  /** What it was built from: a feed is rebuilt when this moves. */
  version: string;
  readonly etag: string;
  readonly lastModified: Date;
  readonly bytes: number;
}

const CONTENT_TYPES: Record<ExportFormat, string> = {
  domains: 'text/plain; charset=utf-8',
  hosts: 'text/plain; charset=utf-8',
  adguard: 'text/plain; charset=utf-8',
  rpz: 'text/dns; charset=utf-8',
  suricata: 'text/plain; charset=utf-8',
  metamask: 'application/json',
  stix: 'application/stix+json;version=2.1',
  csv: 'text/csv; charset=utf-8',
  jsonl: 'application/jsonl; charset=utf-8',
};

export interface FeedHandler {
  handle(request: IncomingMessage, response: ServerResponse): void;
  close(): void;
}

export function createFeedHandler(options: FeedOptions): FeedHandler {
  const files = new FeedFiles(options);
  const feedBudget = new InFlightBudget(MAX_FEEDS_IN_FLIGHT, 0);
  const handle = (request: IncomingMessage, response: ServerResponse): void => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const format = decodeURIComponent(url.pathname.slice('/v1/exports/'.length));
    if (request.method !== 'GET' && request.method !== 'HEAD') return sendJson(response, 405, { error: 'method not allowed; use GET' });
    if (!isExportFormat(format)) return sendJson(response, 404, { error: `no feed "${format}"; formats: ${EXPORT_FORMATS.join(', ')}` });
    const unknown = [...url.searchParams.keys()].find((key) => key !== 'org');
    if (unknown !== undefined) return sendJson(response, 400, { error: `unknown query parameter "${unknown}"; use org=NAME or nothing` });
    if (!admit(response, feedBudget, options.budget)) {
      const error = `busy (${options.budget.requests} requests in flight, ${feedBudget.requests} of them feeds); retry in ${RETRY_AFTER_SECONDS} s`;
      return sendJson(response, 503, { error }, { 'retry-after': String(RETRY_AFTER_SECONDS) });
    }
    const organization = url.searchParams.get('org') ?? undefined;
    const problem = organization === undefined ? undefined : files.organizationProblem(organization);
    if (problem !== undefined) return sendJson(response, 404, { error: problem });
    files.current(format, organization).then(
      (feed) => serveFeed(request, response, feed, CONTENT_TYPES[format], options.maxAgeSeconds),
      (error: unknown) => {
        options.onError(error);
        if (!response.headersSent) sendJson(response, 500, { error: 'the feed could not be built; see the daemon log' });
      },
    );
  };
  return { handle, close: () => files.close() };
}

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
  response.end(`${JSON.stringify(body)}\n`);
}

/** Takes a place in both budgets, held until the response is done (or its client gone); false: none free. */
function admit(response: ServerResponse, feeds: InFlightBudget, requests: InFlightBudget): boolean {
  const feed = feeds.admit();
  const request = feed === undefined ? undefined : requests.admit();
  if (feed === undefined || request === undefined) {
    feed?.release();
    return false;
  }
  response.once('close', () => {
    request.release();
    feed.release();
  });
  return true;
}

/** Each feed's file, built once per version of what it is made of. */
class FeedFiles {
  readonly #options: FeedOptions;
  readonly #feeds = new Map<string, Feed>();
  readonly #building = new Map<string, Promise<Feed>>();
  /** One build at a time (see build()). */
  #queue: Promise<unknown> = Promise.resolve();
  readonly #mirror: Database;

  constructor(options: FeedOptions) {
    this.#options = options;
    this.#mirror = openReadOnly(options.dbPath, { busyTimeoutMs: 5000, smallPageCache: true });
  }

  async current(format: ExportFormat, organization: string | undefined): Promise<Feed> {
    const key = `${format}\u0000${organization ?? ''}`;
    const version = this.#versionOf(format, organization);
    const known = this.#feeds.get(key);
    if (known !== undefined && known.version === version) return known;
    let pending = this.#building.get(key);
    if (pending === undefined) {
      const path = join(this.#options.folder, `${format}${organization === undefined ? '' : `.${organization}`}`);
      pending = this.#build(format, organization, version, known, path).finally(() => this.#building.delete(key));
      this.#building.set(key, pending);
    }
    const feed = await pending;
    this.#feeds.set(key, feed);
    return feed;
  }

  /** Why there is no feed of this organization (unknown, or retired); undefined when there is. */
  organizationProblem(organization: string): string | undefined {
    return organizationProblem(this.#mirror, organization);
  }

  close(): void {
    this.#mirror.close();
  }

  #versionOf(format: ExportFormat, organization: string | undefined): string {
    const indexPath = this.#options.indexPath();
    if (indexPath !== undefined && organization === undefined && isHostFormat(format)) {
      return withIndex(indexPath, (view) => `index:${view.state().hostsVersion}:${view.state().serial}`);
    }
    const changeSeq = this.#mirror.prepare('SELECT coalesce(max(change_seq), 0) FROM threats').pluck().get() as number;
    return `mirror:${changeSeq}:${this.#options.allowlist()?.version ?? 'none'}`;
  }

  async #build(format: ExportFormat, organization: string | undefined, version: string, previous: Feed | undefined, path: string): Promise<Feed> {
    const options = this.#options;
    await mkdir(options.folder, { recursive: true });
    // On a thread of its own, one build at a time: a feed of a million threats is seconds of CPU
    // that would otherwise hold up lookups and zone transfers on this thread, and several at once
    // would each hold their own snapshot and buffers.
    const job = { kind: 'feed', dbPath: options.dbPath, indexPath: options.indexPath(), format, organization, path, timers: options.timers, allowlist: options.allowlist() } as const;
    const built = this.#queue.then(() => runExportJob(job, () => undefined));
    this.#queue = built.catch(() => undefined);
    const rendered = await built;
    // Same entries as the file served now: keep it (and its ETag and date); only comment lines moved.
    if (previous !== undefined && previous.etag === `"${rendered.digest.slice(0, 32)}"`) {
      await discardTempFile(rendered);
      previous.version = version;
      return previous;
    }
    await commitTempFile(rendered, path);
    return { path, version, etag: `"${rendered.digest.slice(0, 32)}"`, lastModified: new Date(Math.floor(Date.now() / 1000) * 1000), bytes: rendered.bytes };
  }
}

function withIndex<T>(indexPath: string, read: (view: IndexView) => T): T {
  const db = openReadOnly(indexPath, { busyTimeoutMs: 0, smallPageCache: true });
  try {
    db.exec('BEGIN');
    return read(new IndexView(db));
  } finally {
    db.close();
  }
}

function serveFeed(request: IncomingMessage, response: ServerResponse, feed: Feed, contentType: string, maxAgeSeconds: number): void {
  const headers = {
    etag: feed.etag,
    'last-modified': feed.lastModified.toUTCString(),
    'cache-control': `public, max-age=${maxAgeSeconds}`,
  };
  if (notModified(request, feed)) {
    response.writeHead(304, headers);
    response.end();
    return;
  }
  response.writeHead(200, { ...headers, 'content-type': contentType, 'content-length': feed.bytes });
  if (request.method === 'HEAD') {
    response.end();
    return;
  }
  const body = createReadStream(feed.path);
  body.on('error', () => response.destroy());
  body.pipe(response);
}

/** RFC 9110 13.1: If-None-Match decides when present (weak comparison); If-Modified-Since only without it. */
function notModified(request: IncomingMessage, feed: Feed): boolean {
  const noneMatch = request.headers['if-none-match'];
  if (noneMatch !== undefined) {
    return noneMatch.split(',').map((tag) => tag.trim().replace(/^W\//, '')).some((tag) => tag === '*' || tag === feed.etag);
  }
  const since = Date.parse(request.headers['if-modified-since'] ?? '');
  return !Number.isNaN(since) && feed.lastModified.getTime() <= since;
}
