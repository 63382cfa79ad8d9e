// The export formats by name: a leaf beside the config, so THREAT_MIRROR_EXPORTS and the CLI can
// check a name without loading the writers.

/** Formats whose entries are host names: only threats that block a whole host become entries. */
export const HOST_FORMATS = ['domains', 'hosts', 'adguard', 'rpz', 'suricata', 'metamask'] as const;
/** Formats whose entries are threats. */
export const RECORD_FORMATS = ['stix', 'csv', 'jsonl'] as const;
export const EXPORT_FORMATS = [...HOST_FORMATS, ...RECORD_FORMATS] as const;

export type HostFormat = (typeof HOST_FORMATS)[number];
export type RecordFormat = (typeof RECORD_FORMATS)[number];
export type ExportFormat = (typeof EXPORT_FORMATS)[number];

export function isExportFormat(name: string): name is ExportFormat {
  return (EXPORT_FORMATS as readonly string[]).includes(name);
}

export function isHostFormat(format: ExportFormat): format is HostFormat {
  return (HOST_FORMATS as readonly string[]).includes(format);
}
