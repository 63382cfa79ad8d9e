// What a command line asks for, once parsed (cli/args.ts): the entry hands each kind to its file in commands/.
import type { ExportFormat } from '../config/export-formats.js';

export type Command =
  | { readonly kind: 'help' }
  | { readonly kind: 'version' }
  | { readonly kind: 'daemon' }
  | { readonly kind: 'once'; readonly organization: string | undefined }
  | { readonly kind: 'backfill'; readonly from: string; readonly to: string | undefined; readonly organization: string | undefined }
  | { readonly kind: 'status'; readonly json: boolean; readonly organization: string | undefined }
  | { readonly kind: 'lookup'; readonly values: readonly string[]; readonly json: boolean; readonly organization: string | undefined; readonly fresh: boolean }
  | { readonly kind: 'verify'; readonly from: string | undefined; readonly to: string | undefined; readonly organization: string | undefined }
  | {
      readonly kind: 'export';
      readonly format: ExportFormat;
      readonly organization: string | undefined;
      readonly out: string | undefined;
      readonly rules: boolean;
    }
  | { readonly kind: 'snapshot'; readonly out: string };

export type StatusCommand = Extract<Command, { kind: 'status' }>;
export type LookupCommand = Extract<Command, { kind: 'lookup' }>;
export type ExportCommand = Extract<Command, { kind: 'export' }>;
export type SnapshotCommand = Extract<Command, { kind: 'snapshot' }>;
export type SyncCommand = Extract<Command, { kind: 'once' | 'backfill' | 'daemon' }>;
/** `verify` with its days resolved against the configuration by the entry (cli/command-checks.ts): the days checked are the days run. */
export type VerifyCommand = Omit<Extract<Command, { kind: 'verify' }>, 'from' | 'to'> & { readonly from: string; readonly to: string };
/** The commands that write: the process becomes the database's one writer. */
export type WritingCommand = SyncCommand | Extract<Command, { kind: 'verify' }>;
