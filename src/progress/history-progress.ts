// How far an organization's mirror reaches back, and how far its walk toward the configured start
// has come (sync/history.ts): what `status` shows, read from the file alone.
import { historyDaysMissing } from '../db/read/history-reads.js';
import type { HistoryRow } from '../db/read/status-reads.js';
import { daysBetween } from '../lib/days.js';
import { formatDuration } from './plan-progress.js';

export interface HistoryProgress {
  /** The days the mirror holds whole: sync_status.history_from through complete_through; null before a first complete run. */
  readonly heldFrom: string | null;
  readonly heldThrough: string | null;
  /** The first day it must hold, as the last run read the configuration; null before a walk was ever considered. */
  readonly target: string | null;
  /** The last run found the walk off (THREAT_MIRROR_HISTORY_MAX_REQUESTS=0). */
  readonly walkOff: boolean;
  /** Days walked toward the target since the walk began, of how many; null when no walk is under way. */
  readonly daysDone: number | null;
  readonly daysTotal: number | null;
  /**
   * Seconds until the history is whole, at the pace the walk kept from its start to its last run
   * (waits between runs included); null with no walk under way or no day walked yet.
   */
  readonly etaSeconds: number | null;
}

export function historyProgress(row: HistoryRow | undefined): HistoryProgress {
  const heldFrom = row?.historyFrom ?? null;
  const heldThrough = row?.completeThrough ?? null;
  const target = row?.target ?? null;
  const walkOff = row?.walkOff === 1;
  const none = { heldFrom, heldThrough, target, walkOff, daysDone: null, daysTotal: null, etaSeconds: null };
  if (!row || target === null || heldFrom === null || heldFrom <= target || row.walkStartedAt === null || walkOff) return none;
  // Days before the first held at the walk's start (or the first held now, if later).
  const startedFrom = row.heldFromAtStart !== null && row.heldFromAtStart > heldFrom ? row.heldFromAtStart : heldFrom;
  const daysTotal = daysBetween(target, startedFrom) - 1;
  const daysDone = daysTotal - historyDaysMissing(target, heldFrom, heldThrough ?? heldFrom);
  const elapsedSeconds = row.lastRunAt === null ? 0 : (Date.parse(row.lastRunAt) - Date.parse(row.walkStartedAt)) / 1000;
  const etaSeconds = daysDone > 0 && elapsedSeconds > 0 ? Math.round((elapsedSeconds * (daysTotal - daysDone)) / daysDone) : null;
  return { heldFrom, heldThrough, target, walkOff, daysDone, daysTotal, etaSeconds };
}

/** `2026-01-15 through 2026-03-14`, and the walk toward the target when one is under way. */
export function describeHistory(progress: HistoryProgress): { holds: string; walk: string | null } {
  const holds = progress.heldFrom === null || progress.heldThrough === null ? '(no complete run yet)' : `${progress.heldFrom} through ${progress.heldThrough}`;
  const { target, heldFrom } = progress;
  if (target === null || heldFrom === null) return { holds, walk: null };
  if (heldFrom <= target) return { holds, walk: `whole from ${target}, the configured start` };
  if (progress.walkOff) return { holds, walk: `the configured start is ${target}; no walk toward it (THREAT_MIRROR_HISTORY_MAX_REQUESTS=0)` };
  // Lookups fail closed until the walk ends (lookup/verdict.ts): the operator reads why here.
  const misses = 'a lookup miss is unknown until then';
  if (progress.daysDone === null || progress.daysTotal === null) return { holds, walk: `the configured start is ${target}; the walk toward it has not begun (${misses})` };
  const eta = progress.etaSeconds === null ? 'no pace yet' : `ETA ${formatDuration(progress.etaSeconds)}`;
  return { holds, walk: `walking back to ${progress.target}: ${progress.daysDone}/${progress.daysTotal} days, ${eta} (${misses})` };
}
