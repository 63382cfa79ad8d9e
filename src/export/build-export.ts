// One export of one format from one snapshot: what it renders, how many entries it holds, and the
// summary the command prints. Host formats read the snapshot once (selection); record formats
// stream it while rendering.
import { renderAdguard } from './formats/adguard.js';
import type { ThreatSnapshot } from './current-threats.js';
import { renderDomains } from './formats/domains.js';
import { type ExportFormat, type HostFormat, isHostFormat } from '../config/export-formats.js';
import type { HostListContext } from './formats/host-header.js';
import type { IndexView } from './index/index-view.js';
import { allowedHostsOf, describeLeftOut, HOST_TYPES, type HostSelection, selectHosts } from './host-selection.js';
import { renderHostsFile } from './formats/hosts.js';
import { renderMetamask } from './formats/metamask.js';
import { renderCsv } from './formats/csv.js';
import { renderJsonl } from './formats/jsonl.js';
import { nextRpzSerial, renderRpz, rpzShadowed, rpzTooLong, serialPast, type ZoneTimers } from './formats/rpz.js';
import { renderStix } from './formats/stix.js';
import { isRecordFormat, noBlockCounts } from './parallel/row-blocks.js';
import { renderOnTwoThreads, selectHostsOnTwoThreads } from './parallel/parallel-render.js';
import type { Chunks } from './atomic-file.js';
import { renderSuricataDataset, renderSuricataRules } from './formats/suricata.js';

export interface ExportOptions {
  readonly format: ExportFormat;
  /** undefined: every organization's current threats. */
  readonly organization: string | undefined;
  /** suricata: the sample rules instead of the dataset. */
  readonly rules?: boolean;
  /** The host selection of this snapshot when already made (the daemon makes it once for every host format). */
  readonly selection?: HostSelection;
  /** rpz: the SOA's timers. */
  readonly timers?: ZoneTimers | undefined;
  /** Rendered (CSV, JSONL, STIX) or selected (host formats) on two threads, the second reading the mirror at this path (parallel-render.ts). */
  readonly twoThreads?: { readonly dbPath: string } | undefined;
}

export interface BuiltExport {
  readonly format: ExportFormat;
  /** Whether the content carries a serial (RPZ's SOA) that must grow on every change. */
  readonly hasSerial: boolean;
  /**
   * The serial the content carries when it replaces a zone of serial `previous` (undefined: none),
   * past it (RFC 1982): from a snapshot, its change_seq in seconds (nextRpzSerial); from the
   * daemon's export index, the zone's serial, which its DNS primary serves too.
   */
  nextSerial(previous: number | undefined): number;
  /** What starts a comment line; comment lines are rendered as chunks of their own and are not compared. */
  readonly commentPrefix: string | undefined;
  /** The content, in chunks; may be called more than once (RPZ: once per serial tried). */
  render(serial: number): Chunks;
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
  const base: ExportBase = { format, hasSerial: format === 'rpz', nextSerial: (previous) => nextRpzSerial(snapshot.changeSeq, previous), commentPrefix: COMMENT_PREFIXES[format] };
  if (format === 'suricata' && options.rules) base.commentPrefix = '#';
  if (isHostFormat(format)) {
    const selection = options.selection ?? (await select(snapshot, options));
    const close = options.selection === undefined ? () => selection.hosts.close() : () => undefined;
    return { ...buildHostExport(selection, options, format, base), close };
  }
  // Record formats: on two threads when the caller lets them (the export command), else on this one.
  let counts = noBlockCounts();
  const render = (): Chunks => {
    counts = noBlockCounts();
    if (options.twoThreads !== undefined && isRecordFormat(format)) return renderOnTwoThreads(options.twoThreads.dbPath, snapshot, format, organization, counts);
    if (format === 'stix') return renderStix(snapshot.indicatorSources({}, counts), counts);
    return (format === 'csv' ? renderCsv : renderJsonl)(snapshot.threats({}, counts), counts);
  };
  const allowed = (): string => (snapshot.allowlist === undefined ? '' : `; ${counts.allowed} allowed locally (THREAT_MIRROR_ALLOWLIST)`);
  return {
    ...base,
    render,
    entries: () => (format === 'stix' ? counts.indicators : counts.records),
    summary: () => {
      if (format !== 'stix') return `${format}: ${counts.records} threats${allowed()}`;
      const leftOut = Object.entries(counts.leftOut).sort(([a], [b]) => (a < b ? -1 : 1)).map(([type, count]) => `${count} ${type}`);
      return `stix: ${counts.indicators} indicators; left out (no STIX pattern): ${leftOut.length === 0 ? 'none' : leftOut.join(', ')}${allowed()}`;
    },
    close: () => undefined,
  };
}

/** The host formats' hosts: on two threads when the caller lets them (the export command), else on this one. */
function select(snapshot: ThreatSnapshot, options: ExportOptions): Promise<HostSelection> {
  if (options.twoThreads !== undefined) return selectHostsOnTwoThreads(options.twoThreads.dbPath, snapshot, options.organization);
  return selectSnapshotHosts(snapshot);
}

/**
 * The host formats' hosts of a snapshot on this thread. With an allowlist, every current threat is
 * read (an allowed address or e-mail is counted as allowed, not as another type).
 */
export async function selectSnapshotHosts(snapshot: ThreatSnapshot): Promise<HostSelection> {
  if (snapshot.allowlist === undefined) return selectHosts(snapshot.ofTypes(HOST_TYPES), snapshot.countOtherTypes(HOST_TYPES));
  const skipped = { allowed: 0 };
  const selection = await selectHosts(snapshot.hostSources({}, skipped));
  return { ...selection, allowlist: allowedHostsOf(snapshot.allowlist, skipped.allowed) };
}

type ExportBase = { -readonly [K in 'format' | 'hasSerial' | 'nextSerial' | 'commentPrefix']: BuiltExport[K] };

/** A host format from a version of the daemon's export index; an RPZ gets the index's zone serial. */
export function buildHostExportFromIndex(view: IndexView, format: HostFormat, serial: number, timers: ZoneTimers | undefined): BuiltExport {
  const base: ExportBase = { format, hasSerial: format === 'rpz', nextSerial: (previous) => serialPast(serial, previous), commentPrefix: COMMENT_PREFIXES[format] };
  return buildHostExport(view.selection(), { format, organization: undefined, timers }, format, base);
}

/** The host lists: one selection of hosts, rendered in the format's own syntax. */
function buildHostExport(selection: HostSelection, options: ExportOptions, format: HostFormat, base: ExportBase): BuiltExport {
  const { organization } = options;
  const close = (): void => undefined;
  const context: HostListContext = { selection, organization, timers: options.timers };
  const allowed = selection.allowlist === undefined ? '' : `, ${selection.allowlist.threats} allowed locally (THREAT_MIRROR_ALLOWLIST)`;
  const leftOut = `left out: ${describeLeftOut(selection.leftOut)}; ${selection.otherTypes} threats of other types${allowed}`;
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
      const shadowed = rpzShadowed(context);
      const passthru = selection.allowlist?.passthru.length ?? 0;
      entries += passthru - tooLong - shadowed;
      const allowedHosts = `; ${passthru} allowed hosts let through (rpz-passthru), ${shadowed} blocked hosts left out for them`;
      extra = `, ${tooLong} too long for a zone${selection.allowlist === undefined ? '' : allowedHosts}`;
      render = (serial) => renderRpz(context, serial);
      break;
    }
    case 'suricata':
      render = options.rules ? () => renderSuricataRules() : () => renderSuricataDataset(context);
      if (options.rules) entries = 2;
      break;
    case 'metamask': {
      // Known once rendered: listing the hosts without a listed parent twice (count, then render) took ~0.7 s each at 1M.
      const counts = { entries: 0 };
      render = () => renderMetamask(context, counts);
      const hosts = entries;
      return {
        ...base,
        render,
        entries: () => counts.entries,
        summary: () => `metamask: ${counts.entries} hosts; ${leftOut}, ${hosts - counts.entries} subdomains of listed hosts`,
        close,
      };
    }
  }
  const summary = format === 'suricata' && options.rules ? `suricata: ${entries} sample rules` : `${format}: ${entries} hosts; ${leftOut}${extra}`;
  return { ...base, render, entries: () => entries, summary: () => summary, close };
}
