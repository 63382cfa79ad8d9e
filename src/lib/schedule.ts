// The daemon's schedule as a period: what "stale" means, and the zone's SOA refresh.
import cron from 'node-cron';

/** The gap between two runs of the schedule (UTC): "stale" means two of them passed without a success. */
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
