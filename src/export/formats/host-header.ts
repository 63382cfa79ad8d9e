// The comment lines at the top of host lists: what the file is and what was left out of it.
// Nothing time-dependent, so two exports of the same mirror are byte-identical.
import { describeLeftOut, type HostSelection } from '../host-selection.js';
import type { ZoneTimers } from '../../lib/rpz-zone.js';

export interface HostListContext {
  readonly selection: HostSelection;
  /** undefined: every configured organization. */
  readonly organization: string | undefined;
  /** rpz: the SOA's timers (from the daemon's schedule); undefined: those of the default schedule. */
  readonly timers?: ZoneTimers | undefined;
}

export function headerLines(title: string, { selection, organization }: HostListContext): string[] {
  const lines = [
    `threat-mirror ${title}`,
    `organizations: ${organization ?? 'all'}`,
    `${selection.hostCount} hosts from ${selection.hostThreats} URL/PAGE threats that block a whole host`,
    `left out: ${describeLeftOut(selection.leftOut)}`,
  ];
  if (selection.allowlist !== undefined) lines.push(`${selection.allowlist.threats} threats allowed locally (THREAT_MIRROR_ALLOWLIST), left out`);
  return lines;
}
