// `adguard`: AdGuard/uBlock network rules; `||host^` blocks the host and all its subdomains.
import { headerLines, type HostListContext } from './host-header.js';

export function* renderAdguard(context: HostListContext): Generator<string> {
  yield '! Title: threat-mirror blocked hosts\n';
  for (const line of headerLines('AdGuard list', context)) yield `! ${line}\n`;
  for (const host of context.selection.hosts.sorted()) yield `||${host}^\n`;
}
