// The one place secrets are taken out of text that can leave the process: log lines, stderr,
// anything stored in the database (sync_runs.error, rejected_records, settings), status output
// and metric labels. It knows every API key (each Secret registers itself) and strips the
// credentials part of any URL, registered or not.

export const REDACTED = '[redacted]';

/** Every form a registered value may take in text: as is, JSON-escaped, percent-encoded. */
const forms = new Set<string>();
let ordered: string[] = [];

/** Credentials in a URL: `scheme://user:password@` or `scheme://token@`. */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>]*@/gi;

/**
 * Shorter values are not registered: replacing every "k" or "abc" would make every message
 * unreadable, and no real key is that short. (URL credentials are removed by their form anyway.)
 */
export const MIN_SECRET_LENGTH = 4;

/** Makes `value` unprintable from now on, in this thread. */
export function registerSecret(value: string): void {
  if (value.length < MIN_SECRET_LENGTH) return;
  const before = forms.size;
  for (const form of [value, JSON.stringify(value).slice(1, -1), encodeURIComponent(value)]) forms.add(form);
  // Longest first, so a key that contains another is removed whole.
  if (forms.size !== before) ordered = [...forms].sort((a, b) => b.length - a.length);
}

/** The text with every registered value and every URL credential replaced by [redacted]. */
export function redact(text: string): string {
  return redactRegistered(text.includes('@') ? text.replace(URL_CREDENTIALS, `$1${REDACTED}@`) : text);
}

/**
 * Only our own secrets (the registered keys) replaced: for what the CLI prints on stdout, which
 * shows the mirror's data (a threat's content as stored, `user:pass@` in a phishing URL included)
 * and must not alter it. Messages (stderr, logs, stored errors) go through redact().
 */
export function redactRegistered(text: string): string {
  let result = text;
  for (const form of ordered) {
    if (result.includes(form)) result = result.split(form).join(REDACTED);
  }
  return result;
}

