// Turns argv into one command; every mistake is a ConfigError that names the flag.
import { parseArgs } from 'node:util';
import { ConfigError } from '../lib/errors.js';
import { isDay } from '../lib/days.js';
import { EXPORT_FORMATS, type ExportFormat, isExportFormat } from '../config/export-formats.js';
import type { Command } from '../commands/command.js';

const OPTIONS = {
  once: { type: 'boolean' },
  backfill: { type: 'boolean' },
  from: { type: 'string' },
  to: { type: 'string' },
  org: { type: 'string' },
  json: { type: 'boolean' },
  fresh: { type: 'boolean' },
  format: { type: 'string' },
  out: { type: 'string' },
  rules: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean', short: 'v' },
} as const;

type Flag = keyof typeof OPTIONS;

const SUBCOMMANDS = ['status', 'lookup', 'verify', 'export', 'snapshot'] as const;

/** Which flags each command accepts; anything else is an error, not silently ignored. */
const ALLOWED: Record<Command['kind'], readonly Flag[]> = {
  help: ['help'],
  version: ['version'],
  daemon: [],
  once: ['once', 'org'],
  backfill: ['backfill', 'from', 'to', 'org'],
  status: ['json', 'org'],
  lookup: ['json', 'org', 'fresh'],
  verify: ['from', 'to', 'org'],
  export: ['format', 'org', 'out', 'rules'],
  snapshot: ['out'],
};

export function parseCommandLine(argv: readonly string[]): Command {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true; strict: true; args: string[] }>>;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    throw new ConfigError(describeParseError(error));
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: 'help' };
  if (values.version) return { kind: 'version' };
  const [first, ...rest] = positionals;
  const subcommand = SUBCOMMANDS.find((name) => name === first);
  if (first !== undefined && subcommand === undefined) {
    throw new ConfigError(`unknown command "${first}"; commands are ${SUBCOMMANDS.join(', ')} (or none, with --once or --backfill)`);
  }
  if (values.once && values.backfill) throw new ConfigError('--once and --backfill: choose one');
  const kind: Command['kind'] = subcommand ?? (values.once ? 'once' : values.backfill ? 'backfill' : 'daemon');
  if (subcommand !== undefined && (values.once || values.backfill)) {
    throw new ConfigError(`--${values.once ? 'once' : 'backfill'}: not an option of the ${subcommand} command`);
  }
  for (const flag of Object.keys(values) as Flag[]) {
    if (values[flag] !== undefined && !ALLOWED[kind].includes(flag)) {
      throw new ConfigError(`--${flag}: not an option ${kind === 'daemon' ? 'without --once or --backfill' : `of ${kind === 'once' || kind === 'backfill' ? `--${kind}` : `the ${kind} command`}`}`);
    }
  }
  if (kind !== 'lookup' && rest.length > 0) throw new ConfigError(`unexpected argument "${rest[0]}"`);
  const from = values.from === undefined ? undefined : assertDay('--from', values.from);
  const to = values.to === undefined ? undefined : assertDay('--to', values.to);
  if (from !== undefined && to !== undefined && from > to) throw new ConfigError(`--from ${from} is after --to ${to}`);
  const organization = values.org;
  if (organization !== undefined && organization.trim() === '') throw new ConfigError('--org: needs an organization name');
  switch (kind) {
    case 'backfill':
      if (from === undefined) throw new ConfigError('--backfill needs --from YYYY-MM-DD (and optionally --to YYYY-MM-DD, default today)');
      return { kind, from, to, organization };
    case 'once':
      return { kind, organization };
    case 'status':
      return { kind, json: values.json ?? false, organization };
    case 'lookup':
      if (rest.length === 0) throw new ConfigError('lookup needs at least one value (a URL, domain, address or any content)');
      return { kind, values: rest, json: values.json ?? false, organization, fresh: values.fresh ?? false };
    case 'verify':
      return { kind, from, to, organization };
    case 'export':
      return { kind, ...exportOptions(values), organization };
    case 'snapshot':
      if (values.out === undefined || values.out.trim() === '') throw new ConfigError('snapshot needs --out FILE (where to write the copy; FILE.json gets its manifest)');
      return { kind, out: values.out };
    default:
      return { kind: 'daemon' };
  }
}

function exportOptions(values: { format?: string; out?: string; rules?: boolean }): { format: ExportFormat; out: string | undefined; rules: boolean } {
  const formats = EXPORT_FORMATS.join(', ');
  if (values.format === undefined) throw new ConfigError(`export needs --format FORMAT (one of ${formats})`);
  if (!isExportFormat(values.format)) throw new ConfigError(`--format: "${values.format}" is not a format; formats are ${formats}`);
  if (values.rules && values.format !== 'suricata') throw new ConfigError('--rules: only with --format suricata');
  if (values.out !== undefined && values.out.trim() === '') throw new ConfigError('--out: needs a file path');
  return { format: values.format, out: values.out, rules: values.rules ?? false };
}

function assertDay(flag: string, value: string): string {
  if (!isDay(value)) throw new ConfigError(`${flag}: "${value}" is not a valid date (YYYY-MM-DD)`);
  return value;
}

function describeParseError(error: unknown): string {
  const code = (error as { code?: string }).code;
  const message = error instanceof Error ? error.message : String(error);
  const option = /'(--?[A-Za-z][\w-]*)/.exec(message)?.[1];
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') return `unknown option ${option ?? ''}; see --help`.replace('  ', ' ');
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    return `${option ?? 'an option'}: ${message.includes('argument missing') ? 'needs a value' : 'takes no value'}`;
  }
  return message;
}
