// `node dist/test/bench/page-bounds.js`: what the bounds of issue 32 cost per page on the hot path,
// apart from the network and the database: the shape pre-scan before JSON.parse, and reading each
// blockedAt as its UTC instant, measured against JSON.parse and the whole page parse of the same
// 100-record pages (the stand-in's generated data, every blockedAt already in the canonical form,
// as the service sends it, and at an offset, the slow path).
import { jsonShapeProblem } from '../../src/api/json-shape.js';
import { parseThreatPage } from '../../src/api/threat-client.js';
import { generateThreats } from '../../src/standin/index.js';
import { atOffset } from '../../src/standin/timestamps.js';

const PAGES = 200;
const ROUNDS = 25;

function pages(offset: string | undefined): string[] {
  const threats = generateThreats({ seed: 7, organizations: ['acme'], count: PAGES * 100, fromDay: '2026-01-01', toDay: '2026-03-31', hostile: true });
  const texts: string[] = [];
  for (let page = 0; page < PAGES; page += 1) {
    const records = threats.slice(page * 100, page * 100 + 100).map(({ id, content, type, blockedAt }) => ({ id, content, type, blockedAt: offset === undefined ? blockedAt : atOffset(blockedAt, offset) }));
    texts.push(JSON.stringify({ threats: records, next_page: String(page + 2) }));
  }
  return texts;
}

/** Median over rounds of the microseconds one page takes. */
function perPage(texts: readonly string[], work: (text: string) => unknown): number {
  const rounds: number[] = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const started = performance.now();
    for (const text of texts) work(text);
    rounds.push(((performance.now() - started) * 1000) / texts.length);
  }
  rounds.sort((a, b) => a - b);
  return rounds[Math.floor(rounds.length / 2)] as number;
}

for (const [label, offset] of [['canonical Z timestamps', undefined], ['+05:00 offsets', '+05:00']] as const) {
  const texts = pages(offset);
  const bytes = texts.reduce((sum, text) => sum + text.length, 0) / texts.length;
  const scan = perPage(texts, (text) => jsonShapeProblem(text));
  const parse = perPage(texts, (text) => JSON.parse(text));
  const whole = perPage(texts, (text) => parseThreatPage(JSON.parse(text), 'bench', text));
  console.log(`${label}: ${Math.round(bytes)} characters a page; shape pre-scan ${scan.toFixed(1)} µs, JSON.parse ${parse.toFixed(1)} µs, parse + validation ${whole.toFixed(1)} µs a page`);
}
