// The daemon's clock: one run at start, then one per cron tick, never two at once.
import { setTimeout as sleep } from 'node:timers/promises';
import cron, { type ScheduledTask } from 'node-cron';
import type { Logger } from 'pino';
import { errorMessage } from '../lib/errors.js';

export interface SchedulerOptions {
  readonly schedule: string;
  readonly jitterSeconds: number;
  readonly logger: Logger;
  /** One sync of every organization; resolves when it has finished (it never throws). */
  readonly run: (signal: AbortSignal) => Promise<void>;
  /** Aborted on shutdown: no new run starts and the one in progress stops at its next page. */
  readonly signal: AbortSignal;
  readonly random?: () => number;
  /**
   * Called PREPARE_MS before each scheduled tick (at once if the tick is nearer): what the next
   * run needs started ahead of it (the daemon's writer thread, which ends after each run).
   */
  readonly prepare?: () => void;
}

/** How long before a tick `prepare` is called: a thread's start on a loaded 2-core machine takes 50-150 ms. */
export const PREPARE_MS = 1000;
/** The longest delay a Node timer takes (a longer one fires after 1 ms, with a warning). */
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface Scheduler {
  /** Resolves once the scheduler has stopped and no run is in progress. */
  readonly stopped: Promise<void>;
}

export function startScheduler(options: SchedulerOptions): Scheduler {
  const { logger, signal } = options;
  const random = options.random ?? Math.random;
  let inProgress: Promise<void> | undefined;
  let preparing: NodeJS.Timeout | undefined;
  const prepareNext = (): void => {
    const next = task.getNextRun();
    if (options.prepare === undefined || next === null || signal.aborted) return;
    clearTimeout(preparing);
    const delay = Math.max(0, next.getTime() - Date.now() - PREPARE_MS);
    // A tick weeks away (a yearly schedule) is waited for in steps.
    preparing = delay > MAX_TIMER_MS ? setTimeout(prepareNext, MAX_TIMER_MS).unref() : setTimeout(options.prepare, delay).unref();
  };

  const tick = (trigger: 'start' | 'schedule'): void => {
    if (signal.aborted) return;
    if (inProgress) {
      logger.warn({ trigger }, 'scheduled run skipped: the previous run is still in progress');
      return;
    }
    inProgress = (async () => {
      const jitterMs = trigger === 'schedule' ? Math.floor(random() * options.jitterSeconds * 1000) : 0;
      if (jitterMs > 0) {
        logger.debug({ jitterMs }, 'waiting a random delay before the run');
        await sleep(jitterMs, undefined, { signal }).catch(() => undefined);
      }
      if (!signal.aborted) await options.run(signal);
    })()
      // A run reports its own failures; this catches what escapes it (the database failing, say),
      // so the daemon logs it and tries again at the next tick instead of dying.
      .catch((error: unknown) => logger.error({ err: error }, `run failed unexpectedly: ${errorMessage(error)}; next attempt at the next tick`))
      .finally(() => {
        inProgress = undefined;
        prepareNext();
      });
  };

  const task: ScheduledTask = cron.schedule(options.schedule, () => tick('schedule'), { timezone: 'Etc/UTC', name: 'threat-mirror-sync' });
  logger.info({ schedule: options.schedule, nextRun: task.getNextRun()?.toISOString() }, 'daemon started');
  tick('start');

  const stopped = new Promise<void>((resolve) => {
    const stop = async (): Promise<void> => {
      clearTimeout(preparing);
      await task.stop();
      await task.destroy();
      await inProgress;
      resolve();
    };
    if (signal.aborted) void stop();
    else signal.addEventListener('abort', () => void stop(), { once: true });
  });
  return { stopped };
}
