// How far a run has come, read from the file alone (sync_runs, sync_plans, sync_cursors): what
// `status`, the progress line on a terminal, the `progress` log records and the /metrics gauge
// all show, so they never disagree. Days count once their window is walked to its last page.
import type { OpenPlanRow, PlanRunRow, PlanWindowsRow, ProgressReads } from '../db/read/status-reads.js';
import { daysBetween } from '../lib/days.js';

export interface PlanProgress {
  readonly organization: string;
  readonly mode: string;
  /** running: a run walks the plan now; unfinished: the next run of its mode resumes it. */
  readonly state: 'running' | 'unfinished';
  /** The run walking the plan now; null for an unfinished plan. */
  readonly runId: number | null;
  readonly rangeStart: string;
  readonly rangeEnd: string;
  readonly daysDone: number;
  /** daysDone and the open windows' days as far as their pages went (fractional). */
  readonly daysWalked: number;
  readonly daysTotal: number;
  /** daysWalked / daysTotal, in [0, 1]; and as a percentage, rounded down to a tenth (100 only when done). */
  readonly fraction: number;
  readonly percent: number;
  /** Records the service sent for the plan so far, valid or not (a resumed plan's earlier runs included). */
  readonly threats: number;
  /** The running run's requests (committed pages and their retries), its start, and their rate. */
  readonly requests: number | null;
  readonly startedAt: string | null;
  readonly requestsPerSecond: number | null;
  /**
   * Seconds left at the pace of this run's completed days; null until a window of this run has
   * completed (no pace yet) and for an unfinished plan.
   */
  readonly etaSeconds: number | null;
}

/** The progress of one plan, from its run (if any) and its windows, as of `now`. */
export function planProgress(organization: string, plan: Omit<OpenPlanRow, 'id'>, run: PlanRunRow | undefined, windows: PlanWindowsRow, now: Date): PlanProgress {
  // A reconciliation cuts its (scattered) windows at its start: its days are theirs, not its range's.
  const daysTotal = Math.max(plan.mode === 'reconcile' ? windows.daysPlanned : daysBetween(plan.rangeStart, plan.rangeEnd), windows.daysDone, 1);
  const daysDone = Math.min(windows.daysDone, daysTotal);
  // Progress moves with the pages of the windows under way, not only with windows finished: a long
  // window otherwise held the line still while its ETA grew (issue 41).
  const walked = Math.min(daysDone + windows.partialDays, daysTotal);
  const running = run?.status === 'running';
  const elapsedSeconds = running ? (now.getTime() - Date.parse(run.startedAt)) / 1000 : 0;
  // Another process's clock, or THREAT_MIRROR_NOW in the writer: no rate rather than a wrong one.
  const timed = running && elapsedSeconds > 0;
  const requests = running ? run.pages + run.retries : null;
  const remaining = daysTotal - walked;
  const walkedSince = windows.daysDoneSince + windows.partialDays;
  let etaSeconds: number | null = null;
  if (timed && remaining === 0) etaSeconds = 0;
  else if (timed && walkedSince > 0) etaSeconds = Math.round((elapsedSeconds * remaining) / walkedSince);
  return {
    organization,
    mode: plan.mode,
    state: running ? 'running' : 'unfinished',
    runId: running ? run.id : null,
    rangeStart: plan.rangeStart,
    rangeEnd: plan.rangeEnd,
    daysDone,
    daysWalked: walked,
    daysTotal,
    fraction: walked / daysTotal,
    percent: percentOf(walked / daysTotal),
    threats: windows.records,
    requests,
    startedAt: running ? run.startedAt : null,
    requestsPerSecond: timed && requests !== null ? round(requests / elapsedSeconds, 1) : null,
    etaSeconds,
  };
}

/** An open plan as `status` lists it: the running one also says how fast it goes. */
export function openPlanProgress(reads: ProgressReads, organization: string, plan: OpenPlanRow, now: Date): PlanProgress {
  const run = reads.runOfPlan(organization, plan);
  // Only a running run has a pace; no window completes after the end of time.
  const since = run?.status === 'running' ? run.startedAt : '9999-12-31';
  return planProgress(organization, plan, run, reads.windows(plan.id, since), now);
}

/**
 * The progress of each organization's running threats run, if one runs: `modes` limits it to the
 * runs a command started (a `--once` leaves its reconciliation out of its line).
 */
export function runningProgress(reads: ProgressReads, organizations: readonly string[], now: Date, modes?: readonly string[]): PlanProgress[] {
  const found: PlanProgress[] = [];
  for (const organization of organizations) {
    const run = reads.latestRun(organization);
    if (run?.status !== 'running' || (modes !== undefined && !modes.includes(run.mode))) continue;
    const plan = reads.planOfRun(organization, run);
    if (plan) found.push(planProgress(organization, plan, run, reads.windows(plan.id, run.startedAt), now));
  }
  return found;
}

/** `12/60 days (20%), 4,300 threats, 18.2 requests/s, ETA 42s`: the numbers of one plan or of a total. */
export function describeProgress(progress: Pick<PlanProgress, 'daysDone' | 'daysTotal' | 'fraction' | 'threats' | 'requestsPerSecond' | 'etaSeconds'>): string {
  const parts = [`${progress.daysDone}/${progress.daysTotal} days (${Math.floor(progress.fraction * 100)}%)`, `${progress.threats.toLocaleString('en-US')} threats`];
  if (progress.requestsPerSecond !== null) parts.push(`${progress.requestsPerSecond.toFixed(1)} requests/s`);
  if (progress.etaSeconds !== null) parts.push(`ETA ${formatDuration(progress.etaSeconds)}`);
  return parts.join(', ');
}

/** 42s, 3m05s, 1h02m. */
export function formatDuration(seconds: number): string {
  const whole = Math.max(0, Math.round(seconds));
  if (whole < 60) return `${whole}s`;
  if (whole < 3600) return `${Math.floor(whole / 60)}m${String(whole % 60).padStart(2, '0')}s`;
  return `${Math.floor(whole / 3600)}h${String(Math.floor((whole % 3600) / 60)).padStart(2, '0')}m`;
}

export function percentOf(fraction: number): number {
  return Math.floor(fraction * 1000) / 10;
}

function round(value: number, digits: number): number {
  const scale = 10 ** digits;
  return Math.round(value * scale) / scale;
}
