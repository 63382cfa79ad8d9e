// One export of one format from one snapshot: what it renders, how many entries it holds, and the
// summary the command prints. Host formats read the snapshot once (selection); record formats
// stream it while rendering.
import { renderAdguard } from './adguard.js';
import type { ThreatSnapshot } from './current-threats.js';
import { renderDomains } from './domains.js';
import { type ExportFormat, type HostFormat, isHostFormat } from '../config/export-formats.js';
import type { HostListContext } from './host-header.js';
import { describeLeftOut, type HostSelection, selectHosts } from './host-selection.js';
import { renderHostsFile } from './hosts-file.js';
import { metamaskEntries, renderMetamask } from './metamask.js';
import { type RecordCounts, renderCsv, renderJsonl } from './records.js';
import { renderRpz, rpzTooLong } from './rpz.js';
import { type StixCounts, renderStix } from './stix.js';
import { renderSuricataDataset, renderSuricataRules } from './suricata.js';

export interface ExportOptions {
  readonly format: ExportFormat;
  /** undefined: every organization's current threats. */
  readonly organization: string | undefined;
  /** suricata: the sample rules instead of the dataset. */
  readonly rules?: boolean;
  /** The host selection of this snapshot when already made (the daemon makes it once for every host format). */
  readonly selection?: HostSelection;
}

export interface BuiltExport {
  readonly format: ExportFormat;
  /** The mirror's change_seq in the snapshot: an RPZ serial is derived from it. */
  readonly changeSeq: number;
  /** Whether the content carries a serial (RPZ's SOA) that must grow on every change. */
  readonly hasSerial: boolean;
  /** What starts a comment line; comment lines are rendered as chunks of their own and are not compared. */
  readonly commentPrefix: string | undefined;
  /** The content, in chunks; may be called more than once (RPZ: once per serial tried). */
  render(serial: number): Iterable<string>;
  /** Entries in the content; for record formats, known once render has run to the end. */
  entries(): number;
  /** One line for stderr, also complete only after render. */
  summary(): string;
  /** Releases what the export holds outside the heap (a host list it selected itself). */
  close(): void;
}

/** Formats with comments; the suricata dataset, JSON and CSV have none. */
const COMMENT_PREFIXES: Partial<Record<ExportFormat, string>> = { domains: '#', hosts: '#', adguard: '!', rpz: ';' };

export async function buildExport(snapshot: ThreatSnapshot, options: ExportOptions): Promise<BuiltExport> {
  const { format, organization } = options;
  const base: ExportBase = { format, changeSeq: snapshot.changeSeq, hasSerial: format === 'rpz', commentPrefix: COMMENT_PREFIXES[format] };
  if (format === 'suricata' && options.rules) base.commentPrefix = '#';
  if (isHostFormat(format)) return buildHostExport(snapshot, options, format, base);
  if (format === 'stix') {
    let counts: StixCounts = { indicators: 0, leftOut: {} };
    return {
      ...base,
      render: () => {
        counts = { indicators: 0, leftOut: {} };
        return renderStix(snapshot.threats(), counts);
      },
      entries: () => counts.indicators,
      summary: () => {
        const leftOut = Object.entries(counts.leftOut).sort(([a], [b]) => (a < b ? -1 : 1)).map(([type, count]) => `${count} ${type}`);
        return `stix: ${counts.indicators} indicators; left out (no STIX pattern): ${leftOut.length === 0 ? 'none' : leftOut.join(', ')}`;
      },
      close: () => undefined,
    };
  }
  let counts: RecordCounts = { records: 0 };
  const renderRecords = format === 'csv' ? renderCsv : renderJsonl;
  return {
    ...base,
    render: () => {
      counts = { records: 0 };
      return renderRecords(snapshot.threats(), counts);
    },
    entries: () => counts.records,
    summary: () => `${format}: ${counts.records} threats`,
    close: () => undefined,
  };
}

type ExportBase = { -readonly [K in 'format' | 'changeSeq' | 'hasSerial' | 'commentPrefix']: BuiltExport[K] };

/** The host lists: one selection of hosts, rendered in the format's own syntax. */
async function buildHostExport(snapshot: ThreatSnapshot, options: ExportOptions, format: HostFormat, base: ExportBase): Promise<BuiltExport> {
  const { organization } = options;
  const selection = options.selection ?? (await selectHosts(snapshot.threats()));
  const close = options.selection === undefined ? () => selection.hosts.close() : () => undefined;
  const context: HostListContext = { selection, organization };
  const leftOut = `left out: ${describeLeftOut(selection.leftOut)}; ${selection.otherTypes} threats of other types`;
  let entries = selection.hostCount;
  let extra = '';
  let render: (serial: number) => Iterable<string>;
  switch (format) {
    case 'domains':
      render = () => renderDomains(context);
      break;
    case 'hosts':
      render = () => renderHostsFile(context);
      break;
    case 'adguard':
      render = () => renderAdguard(context);
      break;
    case 'rpz': {
      const tooLong = rpzTooLong(context);
      entries -= tooLong;
      extra = `, ${tooLong} too long for a zone`;
      render = (serial) => renderRpz(context, serial);
      break;
    }
    case 'suricata':
      render = options.rules ? () => renderSuricataRules() : () => renderSuricataDataset(context);
      if (options.rules) entries = 2;
      break;
    case 'metamask': {
      const listed = metamaskEntries(context);
      extra = `, ${entries - listed} subdomains of listed hosts`;
      entries = listed;
      render = () => renderMetamask(context);
      break;
    }
  }
  const summary = format === 'suricata' && options.rules ? `suricata: ${entries} sample rules` : `${format}: ${entries} hosts; ${leftOut}${extra}`;
  return { ...base, render, entries: () => entries, summary: () => summary, close };
}
