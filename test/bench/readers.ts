// `npm run bench:readers`: with 1,000,000 threats in the file, how fast readers' exact lookups
// answer, what the lookup columns, their indexes and the full-text triggers cost the writer, how
// fast `lookup` answers a URL (all its expressions), and /v1/lookup under load while a backfill writes.
import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Database from 'better-sqlite3';
import { PageWriter } from '../../src/db/writer/page-writer.js';
import { deriveLookupFields } from '../../src/url/lookup-fields.js';
import { openWritableMirror, type WritableMirror } from '../support/writable-mirror.js';
import { generateThreats, type StandinThreat } from '../../src/standin/index.js';
import type { LookupFields } from '../../src/url/lookup-fields.js';
import { ThreatLookup } from '../../src/lookup/threat-lookup.js';
import { loadWhileBackfilling, type LoadResult } from './lookup-under-load.js';

const COUNT = Number(process.env.BENCH_THREATS ?? 1_000_000);
const NO_LOOKUPS: LookupFields = { host: null, registrableDomain: null, addressNamespace: null, addressChain: null, address: null, email: null, emailDomain: null, urlExpression: null, exportHost: null, exportLeftOut: null };

function writeAll(sqlite: Database.Database, writer: PageWriter, threats: readonly StandinThreat[]): number {
  const plan = sqlite.prepare("INSERT INTO sync_plans (organization, mode, range_start, range_end, created_at) VALUES ('bench', 'backfill', '2000-01-01', '2000-01-01', 'x') RETURNING id").get() as { id: number };
  sqlite.prepare("INSERT INTO sync_cursors (plan_id, window_start, window_end) VALUES (?, '2000-01-01', '2000-01-01')").run(plan.id);
  const run = sqlite.prepare("INSERT INTO sync_runs (organization, mode, status, range_start, range_end, started_at) VALUES ('bench', 'backfill', 'running', 'x', 'x', 'x') RETURNING id").get() as { id: number };
  const started = performance.now();
  for (let offset = 0; offset < threats.length; offset += 100) {
    writer.write({
      organization: 'bench',
      runId: run.id,
      window: { planId: plan.id, windowStart: '2000-01-01', windowEnd: '2000-01-01' },
      threats: threats.slice(offset, offset + 100),
      rejected: [],
      nextPage: String(offset / 100 + 2),
      retries: 0,
      now: new Date(1_700_000_000_000 + offset).toISOString(),
      windowSeenIds: null,
      windowDigests: null,
      windowPages: offset / 100 + 1,
    });
  }
  return threats.length / ((performance.now() - started) / 1000);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

function timeLookups(sqlite: Database.Database, sql: string, values: readonly string[]): { medianUs: number; p99Us: number; found: number } {
  const statement = sqlite.prepare(sql);
  const times: number[] = [];
  let found = 0;
  for (const value of values) {
    const started = process.hrtime.bigint();
    const rows = statement.all(value);
    times.push(Number(process.hrtime.bigint() - started) / 1000);
    if (rows.length > 0) found += 1;
  }
  const sorted = [...times].sort((a, b) => a - b);
  return { medianUs: median(times), p99Us: sorted[Math.floor(sorted.length * 0.99)] ?? NaN, found };
}

const dir = mkdtempSync(join(tmpdir(), 'tm-bench-readers-'));
try {
  process.stderr.write(`generating ${COUNT} threats…\n`);
  const threats = generateThreats({ seed: 5, organizations: ['bench'], count: COUNT, fromDay: '2025-01-01', toDay: '2025-12-31' });

  const DROP_FTS_TRIGGERS = 'DROP TRIGGER threats_fts_insert; DROP TRIGGER threats_fts_update; DROP TRIGGER threats_fts_delete;';
  const DROP_LOOKUP_INDEXES = `DROP INDEX threats_content; DROP INDEX threats_host; DROP INDEX threats_registrable_domain;
    DROP INDEX threats_address; DROP INDEX threats_email; DROP INDEX threats_email_domain; DROP INDEX threats_url_expression;`;
  // Each variant writes the same threats into a new file; the difference between them is what
  // one part costs. The last one (everything) stays open for the lookups.
  const allVariants = [
    { name: 'without lookup columns, their indexes and the FTS triggers', drop: DROP_FTS_TRIGGERS + DROP_LOOKUP_INDEXES, derive: () => NO_LOOKUPS },
    { name: 'lookup columns derived and stored, no indexes, no FTS', drop: DROP_FTS_TRIGGERS + DROP_LOOKUP_INDEXES },
    { name: 'lookup columns and FTS triggers, no lookup indexes', drop: DROP_LOOKUP_INDEXES },
    { name: 'lookup columns and their indexes, no FTS triggers', drop: DROP_FTS_TRIGGERS },
    { name: 'with all of them', drop: '' },
  ];
  // BENCH_LOOKUPS_ONLY=1: write only the complete file, for the lookup figures (a third of the time).
  const variants = process.env.BENCH_LOOKUPS_ONLY === '1' ? allVariants.slice(-1) : allVariants;
  const rates: Array<{ name: string; rate: number }> = [];
  let full: WritableMirror | undefined;
  // BENCH_DB_CACHE=FILE (with BENCH_LOOKUPS_ONLY=1): the complete file is kept there after a first
  // run and copied from it by later ones, so that runs of the load (before/after a change, one
  // after another on a shared machine) skip the write, two thirds of a run's time.
  const cache = process.env.BENCH_LOOKUPS_ONLY === '1' ? process.env.BENCH_DB_CACHE : undefined;
  const cached = cache !== undefined && existsSync(cache);
  for (const [index, variant] of variants.entries()) {
    if (cached) {
      process.stderr.write(`copying the complete file from ${cache} (BENCH_DB_CACHE)…\n`);
      copyFileSync(cache, join(dir, `variant-${index}.db`));
      rates.push({ name: `${variant.name} (not measured: the file came from BENCH_DB_CACHE)`, rate: NaN });
      full = await openWritableMirror(join(dir, `variant-${index}.db`));
      continue;
    }
    process.stderr.write(`writing ${variant.name}…\n`);
    const opened = await openWritableMirror(join(dir, `variant-${index}.db`));
    if (variant.drop) opened.sqlite.exec(variant.drop);
    rates.push({ name: variant.name, rate: writeAll(opened.sqlite, new PageWriter(opened.sqlite, { derive: variant.derive ?? deriveLookupFields }), threats) });
    if (index === variants.length - 1) full = opened;
    else opened.close();
  }
  if (!full) throw new Error('no variant written');
  const bareRate = rates[0]?.rate ?? NaN;
  const fullRate = rates[rates.length - 1]?.rate ?? NaN;

  const sample = (pick: (threat: StandinThreat) => string | null): string[] => {
    const values: string[] = [];
    for (let index = 0; values.length < 10_000 && index < threats.length; index += 97) {
      const value = pick(threats[index] as StandinThreat);
      if (value !== null) values.push(value);
    }
    return values;
  };
  const hostOf = (threat: StandinThreat) => (threat.type === 'URL' ? (full.sqlite.prepare('SELECT host FROM threats WHERE id = ?').pluck().get(threat.id) as string | null) : null);
  const addressOf = (threat: StandinThreat) => (threat.type === 'ADDRESS' ? (full.sqlite.prepare('SELECT address FROM threats WHERE id = ?').pluck().get(threat.id) as string | null) : null);
  const results = {
    content: timeLookups(full.sqlite, 'SELECT id, type, blocked_at FROM threats WHERE content = ?', sample((threat) => threat.content)),
    host: timeLookups(full.sqlite, 'SELECT id, content FROM threats WHERE host = ?', sample(hostOf)),
    address: timeLookups(full.sqlite, 'SELECT id, content FROM threats WHERE address = ?', sample(addressOf)),
    'change feed (100 after a seq)': timeLookups(full.sqlite, 'SELECT id FROM threats WHERE change_seq > ? ORDER BY change_seq LIMIT 100', sample((threat) => String(threat.id % 900_000))),
  };
  // What people look up: a blocked URL in another spelling, another page on a blocked URL's host
  // (not blocked), pages under the stand-in's shared page host, and hosts never seen.
  const urlValues = sample((threat) => {
    if (threat.type === 'URL' && URL.canParse(threat.content)) {
      const url = new URL(threat.content);
      return threat.id % 2 === 0 ? `HTTP://${url.host.toUpperCase()}${url.pathname}${url.search}#x` : `https://${url.host}/account/verify/step-2.html?session=${threat.id}`;
    }
    if (threat.type === 'PAGE') return `${threat.content.replace(/\.html$/, '')}/deeper/page.html`;
    return threat.id % 5 === 0 ? `https://never-seen-${threat.id}.example/a/b/c` : null;
  });
  const lookup = new ThreatLookup(full.sqlite);
  const urlTimes: number[] = [];
  let urlBlocked = 0;
  for (const value of urlValues) {
    const started = process.hrtime.bigint();
    const result = lookup.lookup(value);
    urlTimes.push(Number(process.hrtime.bigint() - started) / 1000);
    if (result.blocked) urlBlocked += 1;
  }
  const urlSorted = [...urlTimes].sort((a, b) => a - b);
  const urlLookup = { medianUs: median(urlTimes), p99Us: urlSorted[Math.floor(urlSorted.length * 0.99)] ?? NaN, count: urlValues.length, blocked: urlBlocked };
  const loadValues = urlValues.slice(0, 5_000);
  const dbPath = full.sqlite.name;
  full.close();
  if (cache !== undefined && !cached) copyFileSync(dbPath, cache);
  let load: LoadResult | undefined;
  if (process.env.BENCH_SKIP_HTTP !== '1') {
    process.stderr.write('loading /v1/lookup while a backfill writes…\n');
    load = await loadWhileBackfilling({
      dbPath,
      values: loadValues,
      rate: 500,
      seconds: Number(process.env.BENCH_LOAD_SECONDS ?? 15),
      connections: Number(process.env.BENCH_LOAD_CONNECTIONS ?? 4),
    });
  }

  const cost = 1 - fullRate / bareRate;
  process.stdout.write(`\n| ${COUNT} threats | value |\n|---|---:|\n`);
  for (const { name, rate } of rates) {
    process.stdout.write(`| upsert rows/s ${name} | ${Math.round(rate)} (cost ${((1 - rate / bareRate) * 100).toFixed(0)}%) |\n`);
  }
  for (const [name, result] of Object.entries(results)) {
    process.stdout.write(`| exact lookup by ${name}: median / p99 µs (${result.found} found) | ${result.medianUs.toFixed(1)} / ${result.p99Us.toFixed(1)} |\n`);
  }
  process.stdout.write(`| lookup of a URL, all expressions (ThreatLookup, in-process): median / p99 µs (${urlLookup.blocked} of ${urlLookup.count} blocked) | ${urlLookup.medianUs.toFixed(1)} / ${urlLookup.p99Us.toFixed(1)} |\n`);
  if (load) {
    const { result, floor } = load;
    const latencies = (r: typeof result): string => `${r.latency.p50} / ${r.latency.p90} / ${r.latency.p99} / ${r.latency.max}`;
    process.stdout.write(`| the load generator's floor: the same load against a server that answers {} at once: p50 / p90 / p99 / max ms | ${latencies(floor)} |\n`);
    process.stdout.write(
      `| … the same against that server while the daemon's backfill writes (${load.floorDuringBackfillSeconds} s, just before the load below): p50 / p90 / p99 / max ms | ${latencies(load.floorDuringBackfill)} |\n`,
    );
    process.stdout.write(`| GET /v1/lookup, one value, ${load.rate} req/s for ${load.seconds} s (autocannon, ${load.connections} connections): p50 / p90 / p99 / max ms | ${latencies(result)} |\n`);
    process.stdout.write(`| … requests answered 2xx / non-2xx / errors / timeouts | ${result['2xx']} / ${result.non2xx} / ${result.errors} / ${result.timeouts} |\n`);
    process.stdout.write(`| … rows the daemon's backfill wrote during the load (of ${load.backfillThreats}); backfill still running at the end | ${load.writtenDuringLoad}; ${load.backfillRunningAtEnd ? 'yes' : 'no'} |\n`);
    process.stdout.write(`| … the stand-in's latency per page (BENCH_SERVICE_LATENCY_MS); load average at the end | ${load.serviceLatencyMs} ms; ${load.loadAverage.toFixed(2)} |\n`);
  }
  const lookupsOk = ['content', 'host', 'address'].every((name) => (results[name as keyof typeof results]?.medianUs ?? Infinity) < 50);
  process.stdout.write(`\n${lookupsOk ? 'PASS' : 'FAIL'}  exact lookups by content, host, address under 50 µs at the median\n`);
  if (variants.length > 1) process.stdout.write(`${cost <= 0.3 ? 'PASS' : 'FAIL'}  lookup columns and triggers cost at most 30% of upsert throughput: ${(cost * 100).toFixed(0)}%\n`);
  process.stdout.write(`${urlLookup.medianUs < 100 ? 'PASS' : 'FAIL'}  lookup of a URL (all expressions) under 100 µs at the median: ${urlLookup.medianUs.toFixed(1)} µs\n`);
  if (load) {
    const { result } = load;
    const clean = result.errors === 0 && result.timeouts === 0 && result.non2xx === 0;
    const ok = result.latency.p99 < 5 && clean && result['2xx'] >= load.rate * load.seconds * 0.95;
    process.stdout.write(`${ok ? 'PASS' : 'FAIL'}  /v1/lookup at ${load.rate} req/s with p99 under 5 ms and no errors while a backfill writes: p99 ${result.latency.p99} ms, ${result['2xx']} answered\n`);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
