// The series a PromQL expression names, and the series a /metrics page exposes: so that a test can
// say every series an alert rule or a dashboard panel reads is one the daemon really serves.

/** Words of PromQL that are not series names (aggregation modifiers, set and vector-matching operators). */
const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'atan2', 'inf', 'nan']);

/**
 * The series names in `expr`: every identifier that is not a function (followed by `(`), a keyword,
 * a label (inside `{}` or a `by (…)` list), a string, a duration or a Grafana variable.
 */
export function seriesNamesIn(expr: string): string[] {
  const text = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/gi, ' ')
    .replace(/\$\w+/g, ' ');
  const names = new Set<string>();
  for (const match of text.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*/g)) {
    const word = match[0];
    const before = text[match.index - 1] ?? ' ';
    if (/[0-9.]/.test(before)) continue; // the unit of a duration or the exponent of a number
    if (text.slice(match.index + word.length).trimStart().startsWith('(')) continue;
    if (KEYWORDS.has(word.toLowerCase())) continue;
    names.add(word);
  }
  return [...names];
}

/** Every series name of an exposition: declared (# TYPE, with a histogram's or summary's own series) or sampled. */
export function exposedSeries(metrics: string): Set<string> {
  const names = new Set<string>();
  for (const line of metrics.split('\n')) {
    const declared = /^# TYPE (\S+) (\S+)/.exec(line);
    if (declared) {
      const [, name, type] = declared as unknown as [string, string, string];
      names.add(name);
      if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
      if (type === 'summary') for (const suffix of ['_sum', '_count']) names.add(`${name}${suffix}`);
      continue;
    }
    const sample = /^([A-Za-z_:][A-Za-z0-9_:]*)[{ ]/.exec(line);
    if (sample?.[1]) names.add(sample[1]);
  }
  return names;
}
