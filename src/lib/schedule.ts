// The daemon's schedule as spans of time: what "stale" means, and the zone's SOA refresh.
import cron from 'node-cron';

/** The gap between the next two runs of the schedule (UTC): the zone's SOA refresh follows it. */
export function schedulePeriodSeconds(schedule: string): number {
  const task = cron.createTask(schedule, () => undefined, { timezone: 'Etc/UTC' });
  try {
    const [first, second] = task.getNextRuns(2);
    if (!first || !second) return 600;
    return Math.max(1, Math.round((second.getTime() - first.getTime()) / 1000));
  } finally {
    void task.destroy();
  }
}

/** The span of ticks looked at for the longest gap: a week holds every weekday and weekend pattern. */
const SCHEDULE_SPAN_MS = 7 * 86_400_000;
/**
 * Ticks looked at, at most: node-cron computes each in ~40 µs once warm, so this bounds the cost
 * at start-up to ~100 ms. A schedule denser than every ~5 minutes is judged on fewer than 7 days.
 */
const MAX_SCHEDULE_TICKS = 2_048;

/**
 * The longest gap between two runs of the schedule, over its ticks of the next 7 days (and the
 * first one after them), as node-cron computes them: "stale" means two such gaps passed without a
 * success. Twice the first gap alone made /readyz flap on a weekdays-only or irregular schedule.
 */
export function longestScheduleGapSeconds(schedule: string): number {
  const task = cron.createTask(schedule, () => undefined, { timezone: 'Etc/UTC' });
  try {
    let ticks: Date[] = [];
    for (let count = 8; ; count = Math.min(2 * count, MAX_SCHEDULE_TICKS)) {
      ticks = task.getNextRuns(count);
      const first = ticks[0]?.getTime() ?? 0;
      const last = ticks.at(-1)?.getTime() ?? 0;
      if (ticks.length < 2 || last - first >= SCHEDULE_SPAN_MS || count === MAX_SCHEDULE_TICKS) break;
    }
    let longest = 0;
    for (let index = 1; index < ticks.length; index += 1) longest = Math.max(longest, (ticks[index] as Date).getTime() - (ticks[index - 1] as Date).getTime());
    return longest === 0 ? 600 : Math.max(1, Math.round(longest / 1000));
  } finally {
    void task.destroy();
  }
}
