// `domains`: one host per line, under `#` comments (Pi-hole and most list consumers skip them).
import { headerLines, type HostListContext } from './host-header.js';

export function* renderDomains(context: HostListContext): Generator<string> {
  for (const line of headerLines('domains list', context)) yield `# ${line}\n`;
  for (const host of context.selection.hosts.sorted()) yield `${host}\n`;
}
