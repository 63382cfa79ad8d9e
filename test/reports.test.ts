// The reports stream: GET /organization/reports mirrored into reports, report_proposals and
// rejected_proposals, in either response shape the service's documentation shows.
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { generateReports, generateThreats, type ReportsVariant, type Standin, type StandinReport } from '../src/standin/index.js';
import { runCli } from './support/cli.js';
import { withDb } from './support/mirror-db.js';
import { mirrorEnvFor, startTestStandin } from './support/service.js';
import { tempDbPath } from './support/temp.js';

const NOW = '2026-03-15T12:00:00.000Z';
const TODAY = NOW.slice(0, 10);
const KEY = 'acme-key';
const USER_KEY = 'user-key';

interface StartOptions {
  variant?: ReportsVariant;
  enabled?: boolean;
  count?: number;
  /** Changes the generated reports before the stand-in serves them. */
  change?: (reports: StandinReport[]) => StandinReport[];
  cursorBase?: bigint;
}

function start(options: StartOptions = {}): Promise<Standin> {
  const threats = generateThreats({ seed: 21, organizations: ['acme', 'globex'], count: 400, fromDay: addDays(TODAY, -19), toDay: TODAY });
  const reports = generateReports({ seed: 22, organizations: ['acme', 'globex'], count: options.count ?? 500, fromDay: addDays(TODAY, -19), toDay: TODAY, threats });
  return startTestStandin({
    threats,
    reports: options.change?.(reports) ?? reports,
    ...(options.cursorBase === undefined ? {} : { reportsCursorBase: options.cursorBase }),
    reportsVariant: options.variant ?? 'cursor',
    reportsEnabled: options.enabled ?? true,
    keys: { organizationKeys: { [KEY]: 'acme' }, userKeys: { [USER_KEY]: [{ organization: 'acme', active: true }] } },
    now: () => new Date(NOW),
  });
}

const env = mirrorEnvFor(KEY, NOW, { THREAT_MIRROR_REPORTS: '1', THREAT_MIRROR_RETRY_MIN_MS: '5', THREAT_MIRROR_RETRY_MAX_MS: '20' });

interface ProposalRow {
  report_id: string;
  id: string;
  review_status: string;
  asset_type: string;
  asset_content: string;
  asset_status: string;
  threat_id: number | null;
}

function proposalsOf(reports: readonly StandinReport[]): Array<Omit<ProposalRow, 'threat_id'>> {
  return reports
    .flatMap((report) =>
      report.proposals.map((proposal) => ({
        report_id: String(report.id),
        id: String(proposal.id),
        review_status: proposal.reviewStatus,
        asset_type: proposal.asset.type,
        asset_content: proposal.asset.content,
        asset_status: proposal.asset.status,
      })),
    )
    .sort((a, b) => (a.report_id + a.id < b.report_id + b.id ? -1 : 1));
}

function mirroredProposals(dbPath: string): ProposalRow[] {
  return withDb(
    dbPath,
    (db) =>
      db
        .prepare("SELECT report_id, id, review_status, asset_type, asset_content, asset_status, threat_id FROM report_proposals WHERE organization = 'acme' ORDER BY report_id || id")
        .all() as ProposalRow[],
  );
}

describe('reports', () => {
  for (const variant of ['cursor', 'nextCursor'] as const) {
    it(`are mirrored exactly through several pages when the service answers with "${variant}"`, async () => {
      const service = await start({ variant });
      const dbPath = tempDbPath();
      const result = await runCli(['--once'], env(service, dbPath));
      expect(result.stderr).toBe('');
      expect(result.code).toBe(0);
      const want = service.reportsOf('acme');
      expect(want.length).toBeGreaterThan(200);
      const rows = withDb(dbPath, (db) => db.prepare("SELECT id, created_at, status, raw FROM reports WHERE organization = 'acme'").all()) as Array<{
        id: string;
        created_at: string;
        status: string;
        raw: string;
      }>;
      expect(new Set(rows.map((row) => row.id))).toEqual(new Set(want.map((report) => String(report.id))));
      for (const row of rows) {
        const report = want.find((candidate) => String(candidate.id) === row.id);
        expect(row.created_at).toBe(report?.createdAt);
        const raw = JSON.parse(row.raw) as Record<string, unknown>;
        // Everything the service sent is kept, extra fields included.
        if (variant === 'nextCursor') expect(raw).toMatchObject({ id: row.id, title: report?.title, reporter: { name: 'analyst' } });
        else expect(raw).toMatchObject({ id: report?.id, status: report?.status });
      }
      expect(mirroredProposals(dbPath).map(({ threat_id: _threat, ...proposal }) => proposal)).toEqual(proposalsOf(want));
      // Proposals naming a mirrored threat's content point at it.
      const linked = mirroredProposals(dbPath).filter((proposal) => proposal.threat_id !== null);
      expect(linked.length).toBeGreaterThan(0);
      for (const proposal of linked) {
        expect(withDb(dbPath, (db) => db.prepare('SELECT content FROM threats WHERE id = ?').pluck().get(proposal.threat_id))).toBe(proposal.asset_content);
      }
      const pages = service.stats.requests.filter((request) => request.path === '/organization/reports').length;
      expect(pages).toBe(Math.ceil(want.length / 100));
    });
  }

  it('picks up status changes of recent reports, and rejected_proposals holds exactly the rejected proposals', async () => {
    const service = await start();
    const dbPath = tempDbPath();
    expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);
    const recent = service.reportsOf('acme').filter((report) => report.createdAt >= `${addDays(TODAY, -3)}`);
    const target = recent.find((report) => report.proposals.some((proposal) => proposal.reviewStatus !== 'REJECTED'));
    expect(target).toBeDefined();
    service.updateReport(target?.id ?? 0, (report) => {
      for (const proposal of report.proposals) proposal.reviewStatus = 'REJECTED';
      report.status = 'REJECTED';
    });
    const second = await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_REPORTS_RECENT_DAYS: '7' }));
    expect(second.code).toBe(0);
    expect(second.logs.find((line) => line.msg === 'reports of organization "acme" succeeded')).toMatchObject({ updated: 1, inserted: 0 });
    const rejected = withDb(dbPath, (db) => db.prepare("SELECT report_id, proposal_id FROM rejected_proposals WHERE organization = 'acme' ORDER BY report_id || proposal_id").all());
    const want = proposalsOf(service.reportsOf('acme'))
      .filter((proposal) => proposal.review_status === 'REJECTED')
      .map((proposal) => ({ report_id: proposal.report_id, proposal_id: proposal.id }));
    expect(rejected).toEqual(want);
    // Not every proposal of a report with a rejected one: the view is per proposal.
    const mixed = service.reportsOf('acme').filter((report) => report.proposals.some((p) => p.reviewStatus === 'REJECTED') && report.proposals.some((p) => p.reviewStatus !== 'REJECTED'));
    expect(mixed.length).toBeGreaterThan(0);
  });

  it('--backfill reads the reports of its date range only, whole', async () => {
    const service = await start();
    const dbPath = tempDbPath();
    const from = addDays(TODAY, -12);
    const to = addDays(TODAY, -6);
    expect((await runCli(['--backfill', '--from', from, '--to', to], env(service, dbPath))).code).toBe(0);
    const want = service
      .reportsOf('acme')
      .filter((report) => report.createdAt >= `${from}T00:00:00.000Z` && report.createdAt <= `${to}T23:59:59.999Z`)
      .map((report) => String(report.id))
      .sort();
    expect(want.length).toBeGreaterThan(50);
    expect(withDb(dbPath, (db) => db.prepare("SELECT id FROM reports WHERE organization = 'acme' ORDER BY id").pluck().all())).toEqual(want);
    const asked = service.stats.requests.filter((request) => request.path === '/organization/reports');
    expect(asked.every((request) => (request.body as { startDate?: string }).startDate === `${from}T00:00:00.000Z`)).toBe(true);
  });

  it('a deployment without the endpoint (404) leaves threats syncing and says why reports are skipped', async () => {
    const service = await start({ enabled: false });
    const dbPath = tempDbPath();
    const result = await runCli(['--once'], env(service, dbPath));
    expect(result.code).toBe(0);
    const warning = result.logs.find((line) => typeof line.msg === 'string' && line.msg.includes('reports of organization "acme" skipped'));
    expect(String(warning?.msg)).toMatch(/404.*threats still sync/);
    expect(withDb(dbPath, (db) => db.prepare("SELECT stream, status FROM sync_runs ORDER BY id").all())).toEqual([
      { stream: 'threats', status: 'succeeded' },
      { stream: 'reports', status: 'skipped' },
    ]);
    expect(withDb(dbPath, (db) => db.prepare('SELECT count(*) FROM threats').pluck().get())).toBeGreaterThan(0);
    const asked = service.stats.requests.filter((request) => request.path === '/organization/reports').length;
    expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);
    // Left alone for a day: no second request.
    expect(service.stats.requests.filter((request) => request.path === '/organization/reports').length).toBe(asked);
  });

  it('keeps every digit of report, proposal and asset ids and of cursors beyond 2^53', async () => {
    // Two ids that one double cannot tell apart, on reports, their proposals and their assets.
    const twin = (report: StandinReport, id: bigint): StandinReport => ({
      ...report,
      id,
      organization: 'acme',
      proposals: report.proposals.map((proposal, index) => ({ ...proposal, id: id + BigInt(index), asset: { ...proposal.asset, id: id + 10n + BigInt(index) } })),
    });
    const service = await start({
      count: 260,
      change: (reports) => reports.map((report, index) => (index === 0 ? twin(report, 2n ** 53n + 1n) : index === 1 ? twin(report, 2n ** 53n) : report)),
    });
    const dbPath = tempDbPath();
    expect((await runCli(['--once'], env(service, dbPath))).code).toBe(0);
    const want = service.reportsOf('acme');
    expect(withDb(dbPath, (db) => db.prepare("SELECT id FROM reports WHERE organization = 'acme' ORDER BY id").pluck().all())).toEqual(want.map((report) => String(report.id)).sort());
    for (const id of ['9007199254740993', '9007199254740992']) {
      const proposals = withDb(dbPath, (db) => db.prepare("SELECT id, asset_id FROM report_proposals WHERE organization = 'acme' AND report_id = ? ORDER BY id").all(id));
      const report = want.find((candidate) => String(candidate.id) === id);
      expect(proposals).toEqual(report?.proposals.map((proposal) => ({ id: String(proposal.id), asset_id: String(proposal.asset.id) })));
    }

    // Numeric cursors beyond 2^53 (the "nextCursor" shape): each is sent back exactly as received.
    const base = 2n ** 53n + 1n;
    const paged = await start({ variant: 'nextCursor', count: 500, cursorBase: base });
    const pagedDb = tempDbPath();
    expect((await runCli(['--once'], env(paged, pagedDb))).code).toBe(0);
    const acmeReports = paged.reportsOf('acme');
    const cursors = paged.stats.requests.filter((request) => request.path === '/organization/reports').map((request) => (request.body as { cursor?: string }).cursor);
    const pages = Math.ceil(acmeReports.length / 100);
    expect(cursors).toEqual([undefined, ...Array.from({ length: pages - 1 }, (_, index) => String(base + BigInt(100 * (index + 1))))]);
    expect(withDb(pagedDb, (db) => db.prepare("SELECT id FROM reports WHERE organization = 'acme' ORDER BY id").pluck().all())).toEqual(acmeReports.map((report) => String(report.id)).sort());
  });

  it('a key without access to reports fails that stream with a message saying so, and never prints the key', async () => {
    const service = await start();
    const dbPath = tempDbPath();
    const result = await runCli(['--once'], env(service, dbPath, { THREAT_MIRROR_API_KEY: USER_KEY }));
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/organization "acme" failed: organization "acme" reports: the API key is invalid or lacks permission \(HTTP 401\)/);
    expect(result.stdout + result.stderr).not.toContain(USER_KEY);
    expect(withDb(dbPath, (db) => db.prepare('SELECT count(*) FROM threats').pluck().get())).toBeGreaterThan(0);
  });
});
