// Zones as dig prints them, made comparable: one normalized record a line, and RFC 1995's
// incremental transfer applied to a zone, to judge an IXFR against the full zone after it.

/** dig's records, one normalized line each (name TTL class type data), without dig's comments; the SOA once. */
export function recordsOf(text: string): string[] {
  return [...new Set(ixfrRecords(text))].sort();
}

/** dig's records in the order sent (an IXFR's SOAs included). */
export function ixfrRecords(text: string): string[] {
  return text.split('\n').filter((line) => line.trim() !== '' && !line.startsWith(';')).map((line) => line.trim().split(/\s+/).join(' ').toLowerCase());
}

/** The export's zone file as absolute records in dig's form. */
export function zoneFileRecords(text: string, zone: string): string[] {
  const ttl = /^\$TTL (\d+)/m.exec(text)?.[1] ?? '300';
  const records = text.split('\n').filter((line) => line !== '' && !line.startsWith(';') && !line.startsWith('$')).map((line) => {
    const parts = line.split(/\s+/);
    const name = parts[0] === '@' ? `${zone}.` : `${parts[0]}.${zone}.`;
    const rest = parts[1] === 'IN' ? parts.slice(2) : parts.slice(1);
    return [name, ttl, 'in', ...rest].join(' ').toLowerCase();
  });
  return [...new Set(records)].sort();
}

/**
 * The records with the SOA's serial left out: the daemon's zone takes its serial from the clock
 * (nextZoneSerial), `export --format rpz` from the mirror's change_seq; every other field and
 * record is the same.
 */
export function apartFromSerial(records: readonly string[]): string[] {
  return records.map((record) => (record.split(' ')[3] === 'soa' ? record.split(' ').map((field, at) => (at === 6 ? '<serial>' : field)).join(' ') : record));
}

/** A zone file's text with its SOA's serial left out (as apartFromSerial). */
export function zoneFileApartFromSerial(text: string): string {
  return text.replace(/^(@ IN SOA \S+ \S+ )\d+ /m, '$1<serial> ');
}

export function serialOf(records: readonly string[]): number {
  return Number(records.find((record) => record.split(' ')[3] === 'soa')?.split(' ')[6]);
}

/** RFC 1995: new SOA, then per step old SOA + deletions, new SOA + additions, then the new SOA. */
export function applyIxfr(before: readonly string[], ixfr: readonly string[]): string[] {
  const zone = new Set(before.filter((record) => record.split(' ')[3] !== 'soa'));
  // Each SOA switches between deleting (after the old serial's SOA) and adding (after the new one's).
  let adding = true;
  let finalSoa = '';
  for (const record of ixfr.slice(1, -1)) {
    if (record.split(' ')[3] === 'soa') {
      adding = !adding;
      finalSoa = record;
      continue;
    }
    if (adding) zone.add(record);
    else zone.delete(record);
  }
  return [...zone, finalSoa].sort();
}
