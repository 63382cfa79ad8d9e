// `hosts`: /etc/hosts lines sending each blocked host to 0.0.0.0 (unroutable: fails at once).
import { headerLines, type HostListContext } from './host-header.js';

export function* renderHostsFile(context: HostListContext): Generator<string> {
  for (const line of headerLines('hosts file', context)) yield `# ${line}\n`;
  for (const host of context.selection.hosts.sorted()) yield `0.0.0.0 ${host}\n`;
}
