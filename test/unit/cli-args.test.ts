import { describe, expect, it } from 'vitest';
import { parseCommandLine } from '../../src/cli/args.js';

function usageError(argv: string[]): string {
  try {
    parseCommandLine(argv);
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`expected ${argv.join(' ')} to be refused`);
}

describe('parseCommandLine', () => {
  it('reads each mode', () => {
    expect(parseCommandLine([])).toEqual({ kind: 'daemon' });
    expect(parseCommandLine(['--once', '--org', 'acme'])).toEqual({ kind: 'once', organization: 'acme' });
    expect(parseCommandLine(['--backfill', '--from', '2024-02-29'])).toEqual({ kind: 'backfill', from: '2024-02-29', to: undefined, organization: undefined });
    expect(parseCommandLine(['status', '--json'])).toEqual({ kind: 'status', json: true, organization: undefined });
    expect(parseCommandLine(['lookup', 'a', 'b'])).toMatchObject({ kind: 'lookup', values: ['a', 'b'] });
    expect(parseCommandLine(['--help'])).toEqual({ kind: 'help' });
  });

  it('refuses bad flags with a message naming them', () => {
    expect(usageError(['--backfill', '--from', '2024-13-01'])).toBe('--from: "2024-13-01" is not a valid date (YYYY-MM-DD)');
    expect(usageError(['--backfill', '--from', '2023-02-29'])).toMatch(/^--from:/);
    expect(usageError(['--backfill', '--from', '2024-05-02', '--to', '2024-05-01'])).toBe('--from 2024-05-02 is after --to 2024-05-01');
    expect(usageError(['--backfill'])).toMatch(/^--backfill needs --from/);
    expect(usageError(['--frobnicate'])).toMatch(/^unknown option --frobnicate/);
    expect(usageError(['--once', '--backfill', '--from', '2024-01-01'])).toMatch(/--once and --backfill/);
    expect(usageError(['--once', '--from', '2024-01-01'])).toMatch(/^--from: not an option of --once/);
    expect(usageError(['--backfill', '--from'])).toBe('--from: needs a value');
    expect(usageError(['sync'])).toMatch(/^unknown command "sync"/);
  });
});
