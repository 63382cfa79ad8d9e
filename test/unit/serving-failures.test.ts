// What the main thread makes of the failures the serving thread's guard reports
// (src/daemon/serving-failures.ts): each counted; each route's logged at most once every 10 s, the
// next line saying how many came between; a malformed request a warning, anything else an error.
import { Writable } from 'node:stream';
import { type Logger, pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { ServingFailureLog } from '../../src/daemon/serving-failures.js';
import type { ServingFailure } from '../../src/serve/guard.js';

function capture(): { lines: Array<Record<string, unknown>>; logger: Logger } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { lines, logger: pino({ level: 'info' }, stream) };
}

const malformed: ServingFailure = { listener: 'http', route: '/v1/exports/', answer: '400', message: 'URI malformed' };
const broken: ServingFailure = { listener: 'dns-tcp', route: 'axfr', answer: 'closed', message: 'disk I/O error' };

describe('ServingFailureLog', () => {
  it('counts every failure and logs each route at most once every 10 s, with how many came between', async () => {
    const { lines, logger } = capture();
    const counted: ServingFailure[] = [];
    let now = 1_000_000;
    const log = new ServingFailureLog(logger, { servingFailed: (failure) => counted.push(failure) }, () => now);
    for (let index = 0; index < 500; index += 1) log.report(malformed);
    log.report(broken);
    now += 10_000;
    log.report(malformed);
    await new Promise((resolve) => setImmediate(resolve));
    expect(counted).toHaveLength(502);
    expect(lines.map((line) => [line.level, line.route, line.answer, line.sinceLastLogged])).toEqual([
      [40, '/v1/exports/', '400', undefined],
      [50, 'axfr', 'closed', undefined],
      [40, '/v1/exports/', '400', 499],
    ]);
    expect(lines[0]).toMatchObject({ msg: 'a request to the serving thread failed', listener: 'http', err: { message: 'URI malformed' } });
  });
});
