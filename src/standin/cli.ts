#!/usr/bin/env node
// `threat-mirror-standin`: the local stand-in of the service, for demos and users' own integration tests.
import { parseArgs } from 'node:util';
import { addDays, dayOf } from '../lib/days.js';
import { generateThreats } from './data.js';
import { generateReports } from './reports.js';
import { startStandin } from './server.js';

const USAGE = `threat-mirror-standin: a local stand-in of the threat service (POST /threats/list) over generated data.

Usage: threat-mirror-standin [--host 127.0.0.1] [--port 8787] [--orgs acme,globex] [--threats 5000]
                             [--days 30] [--seed 1] [--latency-ms 0] [--rate-limit-share 0] [--reports 200]

Prints one JSON line when listening: {"url", "keys": {org: key}, "userKey", "threats", "reports"}.
Also serves GET /organization/reports (--reports of them, with proposals naming some threats).
Organization keys are standin-<org>-key; the user key is an active member of every organization.
Admin routes (no key): POST /__standin/threats [threats], POST /__standin/faults {"fault":{...},"times":N}
or {"fault":{...},"probability":P} or {"clear":true}, GET /__standin/stats, GET /__standin/requests (each
request's key, body, status and threat count, in order). Stops on SIGTERM or SIGINT.
`;

function fail(message: string): never {
  process.stderr.write(`threat-mirror-standin: ${message}\n`);
  process.exit(2);
}

function positiveNumber(flag: string, value: string, allowZero = false): number {
  const number = Number(value);
  if (!Number.isFinite(number) || number < 0 || (!allowZero && number === 0)) fail(`--${flag}: "${value}" must be a ${allowZero ? 'non-negative' : 'positive'} number`);
  return number;
}

async function main(): Promise<void> {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        host: { type: 'string', default: '127.0.0.1' },
        port: { type: 'string', default: '8787' },
        orgs: { type: 'string', default: 'acme,globex' },
        threats: { type: 'string', default: '5000' },
        days: { type: 'string', default: '30' },
        seed: { type: 'string', default: '1' },
        'latency-ms': { type: 'string', default: '0' },
        'rate-limit-share': { type: 'string', default: '0' },
        reports: { type: 'string', default: '200' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }));
  } catch (error) {
    fail(`${error instanceof Error ? error.message.split('.')[0] : String(error)}; see --help`);
  }
  if (values.help) {
    process.stdout.write(USAGE);
    return;
  }
  const organizations = values.orgs.split(',').map((name) => name.trim()).filter(Boolean);
  if (organizations.length === 0) fail('--orgs: name at least one organization');
  const port = positiveNumber('port', values.port, true);
  const count = positiveNumber('threats', values.threats, true);
  const days = positiveNumber('days', values.days);
  const share = positiveNumber('rate-limit-share', values['rate-limit-share'], true);
  if (share > 1) fail('--rate-limit-share: must be between 0 and 1');
  const today = dayOf(new Date());
  const threats = generateThreats({ seed: positiveNumber('seed', values.seed, true), organizations, count, fromDay: addDays(today, -(days - 1)), toDay: today });
  const reports = generateReports({ seed: 7, organizations, count: positiveNumber('reports', values.reports, true), fromDay: addDays(today, -(days - 1)), toDay: today, threats });
  const keys = Object.fromEntries(organizations.map((organization) => [organization, `standin-${organization}-key`]));
  const standin = await startStandin({
    host: values.host,
    port,
    threats,
    reports,
    latencyMs: positiveNumber('latency-ms', values['latency-ms'], true),
    keys: {
      organizationKeys: Object.fromEntries(organizations.map((organization) => [keys[organization] as string, organization])),
      userKeys: { 'standin-user-key': organizations.map((organization) => ({ organization, active: true })) },
    },
  });
  if (share > 0) standin.faults.setRandom({ kind: 'rateLimit', retryAfter: '1' }, share);
  process.stdout.write(`${JSON.stringify({ url: standin.url, keys, userKey: 'standin-user-key', threats: threats.length, reports: reports.length })}\n`);
  const stop = (): void => {
    void standin.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => fail(error instanceof Error ? error.message : String(error)));
