// The --help text: every command, flag, environment variable and HTTP endpoint.
import { ENVIRONMENT_VARIABLES, VARIABLE_FORMS } from '../config/variables.js';
import { ENDPOINTS } from '../serve/endpoints.js';

// The commands and flags, as a user reads them first.
const USAGE = `
Usage:
  threat-mirror                         run as a daemon: sync now, then on THREAT_MIRROR_SCHEDULE
  threat-mirror --once [--org NAME]     one incremental sync of every (or one) organization, then exit
  threat-mirror --backfill --from YYYY-MM-DD [--to YYYY-MM-DD] [--org NAME]
                                        sync that range of days (UTC, inclusive; --to defaults to today), then exit
  threat-mirror status [--json] [--org NAME]
                                        how far each organization is complete, runs in progress (percentage, rate, ETA), recent runs and row counts,
                                        read without writing; exit 3 when an organization is not synced and fresh
  threat-mirror lookup VALUE... [--json] [--org NAME] [--fresh]
                                        print the mirrored threats matching URLs, domains, addresses or any content, and
                                        whether the mirror can vouch for the answer (exit 0 blocked, 1 not blocked, 3 cannot vouch)
  threat-mirror verify [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--org NAME]
                                        re-fetch closed days, report drift from the mirror and repair it
  threat-mirror export --format FORMAT [--org NAME] [--out FILE] [--rules]
                                        write the current threats as a block list or feed (read-only):
                                        domains, hosts, adguard, rpz, suricata, metamask, stix, csv, jsonl
  threat-mirror snapshot --out FILE     write a consistent, compacted copy that opens read-only anywhere,
                                        and its manifest FILE.json (sha256, bytes, change_seq, complete_through)

Options:
  --once             one incremental run, then exit
  --backfill         one run over --from..--to, then exit; resumable; never moves complete_through back
  --from YYYY-MM-DD  first day of a backfill or verify range
  --to YYYY-MM-DD    last day (inclusive) of a backfill or verify range
  --org NAME         only this organization (configured, or held by the file; any other name exits 2)
  --json             machine-readable output (status, lookup)
  --fresh            lookup: ask the service about values the mirror does not block (needs the API URL and keys)
  --format FORMAT    export format (see docs/exports.md)
  --out FILE         export: to FILE, replaced atomically and only when its content changed (default stdout);
                     snapshot: where the copy goes (replaced whole, never partially)
  --rules            suricata: the sample rules instead of the dataset
  -h, --help         this text
  -v, --version      the version`;

// What the exit codes mean, the progress output and the signals.
const AFTERWORD = `Exit codes:
  0  every organization synced (or the command did what it was asked); lookup: a value is blocked;
     status: every organization is synced and fresh
  1  at least one organization failed (the others were still synced), or another writer holds the database;
     lookup: nothing is blocked, and every organization asked about is synced and fresh
  2  invalid configuration or arguments (the message names the variable or flag)
  3  lookup: nothing is blocked in the mirror, but it cannot vouch for that (an organization never synced,
     stale, or its last run failed); status: an organization is not synced and fresh

On a terminal, --once, --backfill and verify draw a progress line on stderr (percentage, days,
threats, requests per second, ETA) and end with a summary; when stderr is no terminal, or NO_COLOR or
TERM=dumb asks for plain output, they log a "progress" record every THREAT_MIRROR_PROGRESS_SECONDS.

SIGTERM or SIGINT stops gracefully: pages already fetched commit, requests in flight are abandoned,
the run is marked interrupted, and the next start resumes from the last committed page. A second
signal exits at once.`;

export function helpText(version: string): string {
  const width = Math.max(...ENVIRONMENT_VARIABLES.map((variable) => variable.name.length));
  const variables = ENVIRONMENT_VARIABLES.map(
    (variable) => `  ${variable.name.padEnd(width)}  ${variable.meaning}${variable.default === '' ? '' : ` [default: ${variable.default}]`}`,
  ).join('\n');
  const pathWidth = Math.max(...ENDPOINTS.map((endpoint) => endpoint.path.length));
  const endpoints = ENDPOINTS.map((endpoint) => `  ${endpoint.path.padEnd(pathWidth)}  ${endpoint.meaning}`).join('\n');
  return `threat-mirror ${version}: keeps a SQLite file equal to what the service's POST /threats/list returns.
${USAGE}

Environment:
${variables}
  Their other forms: ${VARIABLE_FORMS.map((variable) => variable.form).join('; ')}

HTTP endpoints (THREAT_MIRROR_HTTP_PORT; /v1/* behind THREAT_MIRROR_HTTP_TOKEN when it is set):
${endpoints}

${AFTERWORD}
`;
}
