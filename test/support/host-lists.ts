// The hosts each host format lists, read back from its text: what tests compare across formats.

export type HostFormatName = 'domains' | 'hosts' | 'adguard' | 'rpz' | 'suricata' | 'metamask';
export const HOST_FORMAT_NAMES: readonly HostFormatName[] = ['domains', 'hosts', 'adguard', 'rpz', 'suricata', 'metamask'];

/** The hosts a format lists (RPZ: its blocked names, not its wildcards nor its passthru names; suricata: its base64 lines decoded; metamask: its blacklist). */
export function listedHosts(format: HostFormatName, text: string): string[] {
  if (format === 'metamask') return (JSON.parse(text) as { blacklist: string[] }).blacklist;
  const lines = text.split('\n').filter((line) => line !== '' && !/^[#!;$@]/.test(line));
  if (format === 'rpz') return lines.filter((line) => line.endsWith(' CNAME .') && !line.startsWith('*.')).map((line) => line.split(' ')[0] as string);
  if (format === 'hosts') return lines.map((line) => line.split(' ')[1] as string);
  if (format === 'adguard') return lines.map((line) => line.replace(/^\|\|/, '').replace(/\^$/, ''));
  if (format === 'suricata') return lines.map((line) => Buffer.from(line, 'base64').toString('utf8'));
  return lines;
}
