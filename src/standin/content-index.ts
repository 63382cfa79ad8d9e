// The stand-in's index for the `query` filter (case-insensitive substring of the content), as a
// real service would have one: a removal's confirmation asks for one threat's content over all
// days, and scanning a million contents for each of a thousand confirmations made the stand-in,
// not the mirror, what a benchmark measured.
//
// Contents are cut into tokens, runs of [a-z0-9] (lowercased). If a query is a substring of a
// content, each of its inner tokens is a whole token of that content; its last token begins one,
// and its first token ends one. So the threats under the query's rarest such key are a superset of
// the matches, which are then checked against the lowercased contents the index keeps:
// - an inner token: the threats holding that token;
// - a last (first) token of 4 characters or more: those holding a token that begins (ends) with
//   its first (last) 12 characters, or 4 when it is shorter than 12;
// - a query that is one token: those holding it whole, and those holding a longer token that
//   contains it (found among the distinct tokens longer than it).
// A query no key narrows is answered by the usual scan.
import type { StandinThreat } from './data.js';

const SEPARATORS = /[^a-z0-9]+/;
/** A token at least this long is also indexed by its first and its last this-many characters. */
const EDGES = [12, 4] as const;

export class ContentIndex {
  #version = -1;
  #keys = new Map<string, StandinThreat[]>();
  /** Distinct tokens, longest first. */
  #tokensByLength: string[] = [];
  readonly #lowercased = new Map<StandinThreat, string>();

  /**
   * The threats whose content holds `query`, any case, or undefined when the index cannot narrow
   * it down (then scan). Rebuilt when the store's version has moved since the last call.
   */
  matching(query: string, threats: () => Iterable<StandinThreat>, version: number): StandinThreat[] | undefined {
    const lowered = query.toLowerCase();
    const candidates = this.#candidates(lowered, threats, version);
    return candidates?.filter((threat) => (this.#lowercased.get(threat) as string).includes(lowered));
  }

  #candidates(query: string, threats: () => Iterable<StandinThreat>, version: number): readonly StandinThreat[] | undefined {
    const pieces = query.split(SEPARATORS);
    if (pieces.every((piece) => piece === '')) return undefined;
    if (version !== this.#version) this.#rebuild(threats(), version);
    if (pieces.length === 1) return this.#holdingWithin(pieces[0] as string);
    const keys = pieces.slice(1, -1).filter((piece) => piece !== '');
    const first = pieces[0] as string;
    const last = pieces.at(-1) as string;
    const edge = (piece: string): number | undefined => EDGES.find((length) => piece.length >= length);
    const firstEdge = edge(first);
    const lastEdge = edge(last);
    if (firstEdge !== undefined) keys.push(`<${first.slice(-firstEdge)}`);
    if (lastEdge !== undefined) keys.push(`>${last.slice(0, lastEdge)}`);
    if (keys.length === 0) return undefined;
    let best: readonly StandinThreat[] | undefined;
    for (const key of keys) {
      const posting = this.#keys.get(key) ?? [];
      if (best === undefined || posting.length < best.length) best = posting;
    }
    return best;
  }

  /** Threats holding a token that contains `piece`. */
  #holdingWithin(piece: string): StandinThreat[] {
    const found = new Set(this.#keys.get(piece) ?? []);
    for (const token of this.#tokensByLength) {
      if (token.length <= piece.length) break;
      if (token.includes(piece)) for (const threat of this.#keys.get(token) ?? []) found.add(threat);
    }
    return [...found];
  }

  #rebuild(threats: Iterable<StandinThreat>, version: number): void {
    this.#keys = new Map();
    this.#lowercased.clear();
    const add = (key: string, threat: StandinThreat): void => {
      const posting = this.#keys.get(key);
      if (!posting) this.#keys.set(key, [threat]);
      else if (posting.at(-1) !== threat) posting.push(threat);
    };
    for (const threat of threats) {
      const content = threat.content.toLowerCase();
      this.#lowercased.set(threat, content);
      for (const token of content.split(SEPARATORS)) {
        if (token === '') continue;
        add(token, threat);
        for (const length of EDGES) {
          if (token.length < length) continue;
          add(`>${token.slice(0, length)}`, threat);
          add(`<${token.slice(-length)}`, threat);
        }
      }
    }
    this.#tokensByLength = [...this.#keys.keys()].filter((key) => key[0] !== '<' && key[0] !== '>').sort((a, b) => b.length - a.length);
    this.#version = version;
  }
}
