// blockedAt at a UTC offset: ISO 8601 lets a service write the same instant as
// 2026-11-20T20:00:00.000Z or 2026-11-21T01:00:00.000+05:00, and a mirror must read both alike.

const OFFSET = /^([+-])([01]\d|2[0-3]):([0-5]\d)$/;

export function isOffset(text: string): boolean {
  return OFFSET.test(text);
}

export function assertOffset(text: string): string {
  if (!isOffset(text)) throw new Error(`"${text}" is not a UTC offset such as +05:00 or -09:30`);
  return text;
}

/** The instant of `timestamp` written at `offset`, milliseconds kept. */
export function atOffset(timestamp: string, offset: string): string {
  const [, sign, hours, minutes] = OFFSET.exec(offset) as unknown as [string, string, string, string];
  const shiftMs = (sign === '-' ? -1 : 1) * (Number(hours) * 60 + Number(minutes)) * 60_000;
  const instant = Date.parse(timestamp);
  if (Number.isNaN(instant)) return timestamp;
  return `${new Date(instant + shiftMs).toISOString().slice(0, 23)}${offset}`;
}
