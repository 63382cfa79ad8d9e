// The stand-in's index for the `query` filter, as a real service would have one: a removal's
// confirmation asks for one threat's content over all days, and scanning a million contents for
// each of a thousand confirmations made the stand-in, not the mirror, what a benchmark measured.
//
// Contents are split into runs of [a-z0-9] (lowercased). A query that is a substring of a content
// holds that content's tokens whole except, perhaps, its own first and last ones (which may be cut);
// so the threats holding the query's rarest inner token are a superset of the matches, which the
// usual filter then narrows. A query without an inner token is answered by the usual scan.
import type { StandinThreat } from './data.js';

const SEPARATORS = /[^a-z0-9]+/;

export class ContentIndex {
  #version = -1;
  #postings = new Map<string, StandinThreat[]>();

  /**
   * The threats whose content may hold `query` (a superset of the matches), or undefined when the
   * index cannot narrow it down. Rebuilt when the store's version has moved since the last call.
   */
  candidates(query: string, threats: () => Iterable<StandinThreat>, version: number): readonly StandinThreat[] | undefined {
    const inner = query.toLowerCase().split(SEPARATORS).slice(1, -1).filter((token) => token !== '');
    if (inner.length === 0) return undefined;
    if (version !== this.#version) this.#rebuild(threats(), version);
    let best: readonly StandinThreat[] | undefined;
    for (const token of inner) {
      const posting = this.#postings.get(token) ?? [];
      if (best === undefined || posting.length < best.length) best = posting;
    }
    return best;
  }

  #rebuild(threats: Iterable<StandinThreat>, version: number): void {
    this.#postings = new Map();
    for (const threat of threats) {
      for (const token of new Set(threat.content.toLowerCase().split(SEPARATORS))) {
        if (token === '') continue;
        const posting = this.#postings.get(token);
        if (posting) posting.push(threat);
        else this.#postings.set(token, [threat]);
      }
    }
    this.#version = version;
  }
}
