// The README is the first page a user reads: it stays short (what it is, the two commands, the
// quick start, five queries, links), and every link of it and of docs/ leads somewhere, anchors
// included, so reference material moved into docs/ is still found.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`)];

/** GitHub's anchor of a heading: lower case, punctuation other than - and _ dropped, spaces as -. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsOf(page: string): Set<string> {
  const text = readFileSync(join(ROOT, page), 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((match) => anchorOf(match[1] ?? '')));
}

/** The relative links of `page` (not http(s), not mailto), as [target path, anchor]. */
function linksOf(page: string): { target: string; anchor: string | undefined; text: string }[] {
  const text = readFileSync(join(ROOT, page), 'utf8').replace(/```[\s\S]*?```/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1] ?? '')
    .filter((href) => !/^[a-z]+:/i.test(href))
    .map((href) => {
      const [path = '', anchor] = href.split('#');
      return { target: path === '' ? page : join(dirname(page), path), anchor, text: href };
    });
}

describe('the README and docs/', () => {
  it('keep the README under 10 KB', () => {
    expect(statSync(join(ROOT, 'README.md')).size).toBeLessThanOrEqual(10 * 1024);
  });

  it('link only to files that exist, and to headings those files have', () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      for (const link of linksOf(page)) {
        if (!existsSync(join(ROOT, link.target))) broken.push(`${page}: ${link.text} (no such file)`);
        else if (link.anchor !== undefined && link.target.endsWith('.md') && !anchorsOf(link.target).has(link.anchor)) broken.push(`${page}: ${link.text} (no such heading)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('index every page of docs/ in docs/README.md', () => {
    const index = readFileSync(join(ROOT, 'docs/README.md'), 'utf8');
    const missing = PAGES.filter((page) => page.startsWith('docs/') && page !== 'docs/README.md' && !index.includes(`](${page.slice('docs/'.length)})`));
    expect(missing).toEqual([]);
  });
});
