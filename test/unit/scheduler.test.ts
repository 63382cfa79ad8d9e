// The daemon's scheduler: `prepare` runs between one run and the next tick, so that what a run
// needs (the writer thread, which ends after each run) is started before the run begins.
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { startScheduler } from '../../src/daemon/scheduler.js';

describe('startScheduler', () => {
  it('calls prepare after each run and before the next one begins, and never once stopped', async () => {
    const events: string[] = [];
    const shutdown = new AbortController();
    let runs = 0;
    const scheduler = startScheduler({
      schedule: '* * * * * *',
      jitterSeconds: 0,
      logger: pino({ level: 'silent' }),
      signal: shutdown.signal,
      run: async () => {
        runs += 1;
        events.push(`run ${runs}`);
        if (runs === 3) shutdown.abort();
        await Promise.resolve();
        events.push(`end ${runs}`);
      },
      prepare: () => events.push('prepare'),
    });
    await scheduler.stopped;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(events.slice(0, 2)).toEqual(['run 1', 'end 1']);
    // The next tick is at most a second away, nearer than the lead prepare takes: it is called at once.
    expect(events.indexOf('prepare')).toBeGreaterThan(events.indexOf('end 1'));
    expect(events.lastIndexOf('prepare')).toBeLessThan(events.indexOf('run 3'));
    expect(events.at(-1)).toBe('end 3');
  });

  it('does not call prepare long before a tick weeks away (a Node timer longer than 2^31 ms fires at once)', async () => {
    const events: string[] = [];
    const shutdown = new AbortController();
    const warnings: string[] = [];
    const onWarning = (warning: Error): number => warnings.push(warning.name);
    process.on('warning', onWarning);
    const scheduler = startScheduler({
      schedule: '0 0 1 1 *',
      jitterSeconds: 0,
      logger: pino({ level: 'silent' }),
      signal: shutdown.signal,
      run: async () => {
        events.push('run');
      },
      prepare: () => events.push('prepare'),
    });
    try {
      // The first run (at start) is over, and the 1 ms a too-long timer is cut to has passed many times over.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(events).toEqual(['run']);
      expect(warnings).not.toContain('TimeoutOverflowWarning');
    } finally {
      process.off('warning', onWarning);
      shutdown.abort();
      await scheduler.stopped;
    }
  });
});
