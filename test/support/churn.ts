// Random changes to the stand-in's threats, as a busy service makes them: blocks, unblocks, moves to
// another day and changes of content or type, from a seeded generator so a failing run repeats.
import { addDays, daysBetween } from '../../src/lib/days.js';
import { contentFor, seededRandom, type StandinThreat } from '../../src/standin/index.js';
import type { ThreatStore } from '../../src/standin/threat-store.js';

export type ChurnKind = 'block' | 'unblock' | 'move' | 'change';

export interface ChurnOptions {
  readonly seed: number;
  /** The organization key whose threats change, and the organization new blocks belong to. */
  readonly key: string;
  readonly organization: string;
  /** Days the changes keep to: the days the mirror mirrors. */
  readonly fromDay: string;
  readonly toDay: string;
  /** The first id a new block may take; ids only go up, as the service's do. */
  readonly nextId: number;
}

export class Churn {
  readonly #random: () => number;
  readonly #options: ChurnOptions;
  #nextId: number;
  /**
   * A threat is moved, or changed, never both: a threat re-dated and re-worded since the mirror
   * last saw it cannot be found by its old content, and is marked removed until its new day is
   * walked (docs/reconciliation.md, "What a confirmation cannot see"). Kept apart here.
   */
  readonly #moved = new Set<number>();
  readonly #changed = new Set<number>();
  readonly counts: Record<ChurnKind, number> = { block: 0, unblock: 0, move: 0, change: 0 };

  constructor(options: ChurnOptions) {
    this.#options = options;
    this.#random = seededRandom(options.seed);
    this.#nextId = options.nextId;
  }

  /** With probability `chance`, one random change. */
  maybe(threats: ThreatStore, chance: number): void {
    if (this.#random() < chance) this.once(threats);
  }

  once(threats: ThreatStore): void {
    const roll = this.#random();
    const kind: ChurnKind = roll < 0.35 ? 'unblock' : roll < 0.6 ? 'block' : roll < 0.8 ? 'move' : 'change';
    const listed = threats.visibleTo(this.#options.key);
    const pick = (exclude: ReadonlySet<number>): StandinThreat | undefined => {
      for (let attempt = 0; attempt < 10; attempt += 1) {
        const threat = listed[Math.floor(this.#random() * listed.length)];
        if (threat && !exclude.has(threat.id)) return threat;
      }
      return undefined;
    };
    if (kind === 'block') {
      const type = this.#random() < 0.7 ? 'URL' : 'ADDRESS';
      threats.add([{ id: this.#nextId++, content: contentFor(type, this.#random), type, blockedAt: this.#instant(), organization: this.#options.organization }]);
    } else if (kind === 'unblock') {
      const threat = pick(new Set());
      if (!threat) return;
      threats.remove([threat.id]);
    } else if (kind === 'move') {
      const threat = pick(this.#changed);
      if (!threat) return;
      this.#moved.add(threat.id);
      threats.update(threat.id, { blockedAt: this.#instant() });
    } else {
      const threat = pick(this.#moved);
      if (!threat) return;
      this.#changed.add(threat.id);
      threats.update(threat.id, this.#random() < 0.5 ? { content: `${threat.content}#${this.#nextId++}` } : { type: threat.type === 'URL' ? 'PAGE' : 'URL' });
    }
    this.counts[kind] += 1;
  }

  /** A moment on one of the days, at random. */
  #instant(): string {
    const day = addDays(this.#options.fromDay, Math.floor(this.#random() * daysBetween(this.#options.fromDay, this.#options.toDay)));
    return new Date(Date.parse(`${day}T00:00:00.000Z`) + Math.floor(this.#random() * 86_400_000)).toISOString();
  }
}
