// GET /v1/lookup?value=V (repeatable) and POST /v1/lookup {"values": [...]}: the lookup command over
// HTTP, for services that do not link SQLite. Answers from its own read-only connection, within
// the HTTP thread's budget of requests and bytes in flight (http-limits.ts).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AllowMatcher } from '../allowlist/allow-matcher.js';
import { refreshDocument } from '../lookup/fresh-document.js';
import type { FreshAnswer, FreshJudgement } from '../lookup/fresh-lookup.js';
import type { OrganizationSync } from '../lookup/sync-judgement.js';
import { checkLookupValues, type LookupDocument, lookupValues, type ThreatLookup } from '../lookup/threat-lookup.js';
import { vouch } from '../lookup/verdict.js';
import { type Admission, InFlightBudget, RETRY_AFTER_SECONDS } from './http-limits.js';

/** A request body above this is refused: 1,000 values of a long URL each fit with room to spare. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** A refused body is read to its end up to this size, so the client gets its answer (see below). */
const MAX_DRAINED_BYTES = 64 * 1024 * 1024;

const TOO_LARGE = { error: `request body over ${MAX_BODY_BYTES} bytes; send at most 1,000 values` };

export type LookupHandler = (request: IncomingMessage, response: ServerResponse) => void;

type Send = (status: number, body: unknown, headers?: Record<string, string>) => void;

export interface LookupEndpoint {
  readonly lookup: ThreatLookup;
  /** The organizations the daemon mirrors: an answer is for all of them, or for one (`org=NAME`). */
  readonly organizations: readonly string[];
  /** Those asked about, judged now: what each answer's verdicts vouch by (lookup/verdict.ts). */
  readonly sync: (organizations: readonly string[]) => readonly OrganizationSync[];
  readonly onError: (error: unknown) => void;
  readonly budget?: InFlightBudget | undefined;
  /** THREAT_MIRROR_ALLOWLIST as it is when a request is answered (undefined: none). */
  readonly allowlist?: (() => AllowMatcher | undefined) | undefined;
  /**
   * With `fresh=1`, a value the mirror does not block is asked of the service through it (the main
   * thread holds the keys), with the organizations asked about as the verdict judges them; without
   * it, `fresh=1` is refused.
   */
  readonly askFresh?: ((values: readonly string[], judged: readonly FreshJudgement[]) => Promise<readonly FreshAnswer[]>) | undefined;
}

export function createLookupHandler({ lookup, organizations, sync, onError, budget = new InFlightBudget(), allowlist = () => undefined, askFresh }: LookupEndpoint): LookupHandler {
  const busy = (): { error: string } => ({
    error: `the lookup endpoint is busy (${budget.requests} requests, ${budget.bytes} body bytes in flight); retry in ${RETRY_AFTER_SECONDS} s`,
  });
  const busyHeaders = { 'retry-after': String(RETRY_AFTER_SECONDS) };
  return (request, response) => {
    const send: Send = (status, body, headers = {}) => {
      response.writeHead(status, { 'content-type': 'application/json', 'cache-control': 'no-store', ...headers });
      response.end(`${JSON.stringify(body)}\n`);
    };
    if (request.method !== 'GET' && request.method !== 'HEAD' && request.method !== 'POST') {
      return send(405, { error: 'method not allowed; use GET ?value=V or POST {"values": [...]}' });
    }
    const admission = budget.admit();
    if (admission === undefined) {
      if (request.method === 'POST') return drainThen(request, response, () => send(503, busy(), busyHeaders));
      return send(503, busy(), busyHeaders);
    }
    // Held until the answer is sent (or the client is gone): the answer is in the heap until then.
    response.once('close', () => admission.release());
    const url = new URL(request.url ?? '/', 'http://localhost');
    const organization = url.searchParams.get('org') ?? undefined;
    // As `lookup --org` exits 2: a misspelt organization is never answered "not blocked".
    if (organization !== undefined && !organizations.includes(organization)) {
      return send(400, { error: `org: "${organization}" is not an organization this daemon mirrors (${organizations.join(', ')})` });
    }
    const refresh = refresherOf(url, askFresh);
    if (typeof refresh === 'string') return send(400, { error: refresh });
    const answer = (values: unknown): void => {
      const problem = checkLookupValues(values);
      if (problem !== null) return send(400, { error: problem });
      const matcher = allowlist();
      // Judged once, before the lookup, for the verdict and the service alike: a run that ends
      // meanwhile only makes the answer fresher than its verdict says.
      const judged = sync(organization === undefined ? organizations : [organization]);
      lookupValues(lookup, values as string[], { allowlist: matcher, organization }).then((document) => refresh(document, matcher, judged)).then(
        // 200 for every answered lookup, whatever its verdicts: the verdicts are in the body.
        (document) => send(200, vouch(document.results, judged, matcher)),
        (error: unknown) => {
          onError(error);
          send(500, { error: 'lookup failed; see the daemon log' });
        },
      );
    };
    if (request.method !== 'POST') {
      const unknown = [...url.searchParams.keys()].find((key) => key !== 'value' && key !== 'fresh' && key !== 'org');
      if (unknown !== undefined) return send(400, { error: `unknown query parameter "${unknown}"; use value=V, repeated for several values (and fresh=1, org=NAME)` });
      return answer(url.searchParams.getAll('value'));
    }
    readBody(request, response, admission, (outcome) => {
      if (outcome === 'too-large') return send(413, TOO_LARGE);
      if (outcome === 'busy') return send(503, busy(), busyHeaders);
      const values = valuesOfBody(outcome);
      if (typeof values === 'string') return send(400, { error: values });
      answer(values.values);
    });
  };
}

/** The `values` of a POST body, or what is wrong with the body. */
function valuesOfBody(body: Buffer): { readonly values: unknown } | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return 'body must be JSON: {"values": ["…"]}';
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || !('values' in parsed)) return 'body must be an object with "values": ["…"]';
  return { values: (parsed as { values: unknown }).values };
}

type Refresh = (document: LookupDocument, allowlist: AllowMatcher | undefined, judged: readonly FreshJudgement[]) => Promise<LookupDocument>;

/** What `fresh=1` makes of the mirror's answer (fresh=0 or none: the answer itself), or why the parameter is refused. */
function refresherOf(url: URL, askFresh: LookupEndpoint['askFresh']): Refresh | string {
  const fresh = url.searchParams.get('fresh');
  if (fresh !== null && fresh !== '0' && fresh !== '1') return `fresh must be 1 (ask the service about values the mirror does not block) or 0, not "${fresh}"`;
  if (fresh !== '1') return (document) => Promise.resolve(document);
  if (askFresh === undefined) return 'fresh lookups are not available here';
  return (document, allowlist, judged) => refreshDocument(document, (values) => askFresh(values, judged), allowlist);
}

/**
 * Reads a POST body into memory, claiming its bytes from the budget first (its declared length at
 * once, chunks beyond it as they come). A body over MAX_BODY_BYTES, or one the budget cannot hold,
 * is dropped as it arrives and its claim given back at once: only its answer waits for its end.
 */
function readBody(request: IncomingMessage, response: ServerResponse, admission: Admission, done: (outcome: Buffer | 'too-large' | 'busy') => void): void {
  const declared = Number(request.headers['content-length']);
  if (Number.isInteger(declared) && declared > MAX_BODY_BYTES) return refuse('too-large');
  let claimed = Number.isInteger(declared) && declared > 0 ? declared : 0;
  if (claimed > 0 && !admission.claim(claimed)) return refuse('busy');
  let chunks: Buffer[] = [];
  let size = 0;
  const onData = (chunk: Buffer): void => {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return stop('too-large');
    if (size > claimed) {
      if (!admission.claim(size - claimed)) return stop('busy');
      claimed = size;
    }
    chunks.push(chunk);
  };
  const stop = (outcome: 'too-large' | 'busy'): void => {
    chunks = [];
    request.off('data', onData);
    request.off('end', onEnd);
    admission.release();
    // The bytes already read count toward the drain's cap.
    drainThen(request, response, () => done(outcome), size);
  };
  const onEnd = (): void => done(Buffer.concat(chunks));
  request.on('data', onData);
  request.once('end', onEnd);

  function refuse(outcome: 'too-large' | 'busy'): void {
    admission.release();
    drainThen(request, response, () => done(outcome));
  }
}

/**
 * Reads the rest of a refused body and drops it, then answers: a client still sending when the
 * connection closed would see a broken pipe (EPIPE) instead of the answer. A body that goes on
 * past MAX_DRAINED_BYTES is answered at once and its connection closed.
 */
function drainThen(request: IncomingMessage, response: ServerResponse, answer: () => void, alreadyRead = 0): void {
  let size = alreadyRead;
  const onData = (chunk: Buffer): void => {
    size += chunk.length;
    if (size <= MAX_DRAINED_BYTES || response.headersSent) return;
    request.off('data', onData);
    response.setHeader('connection', 'close');
    answer();
  };
  request.on('data', onData);
  request.once('end', () => {
    if (!response.headersSent) answer();
  });
}
