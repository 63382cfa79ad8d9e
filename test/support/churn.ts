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
  /** The run the changes now belong to (set by the test before each run). */
  epoch = 0;
  /** The epoch of each threat's last move and last change. */
  readonly #movedIn = new Map<number, number>();
  readonly #changedIn = new Map<number, number>();
  /**
   * Threats re-dated and re-worded within two epochs, by the epoch of the change that made them so.
   * Such a threat cannot be found by its old content: it is marked removed until its new day is
   * walked (docs/reconciliation.md, "What a walk cannot see"), the one documented false removal.
   */
  readonly rewordedIn = new Map<number, number>();
  readonly counts: Record<ChurnKind | 'reworded', number> = { block: 0, unblock: 0, move: 0, change: 0, reworded: 0 };

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
      const threat = this.#pickRecent(listed, this.#changedIn) ?? pick(new Set());
      if (!threat) return;
      this.#movedIn.set(threat.id, this.epoch);
      threats.update(threat.id, { blockedAt: this.#instant() });
      this.#noteReworded(threat.id);
    } else {
      const threat = this.#pickRecent(listed, this.#movedIn) ?? pick(new Set());
      if (!threat) return;
      this.#changedIn.set(threat.id, this.epoch);
      // Half of the changes are of the content: a suffix (the old content still finds it by text
      // search) or a new content altogether (it does not); the other half, of the type.
      const roll = this.#random();
      const change = roll < 0.25 ? { content: `${threat.content}#${this.#nextId++}` } : roll < 0.5 ? { content: contentFor(threat.type, this.#random) } : { type: threat.type === 'URL' ? 'PAGE' : 'URL' };
      threats.update(threat.id, change);
      this.#noteReworded(threat.id);
    }
    this.counts[kind] += 1;
  }

  /**
   * Now and then (2 in 5) a threat the other kind of change touched in this epoch or the last one:
   * aimed at the re-dated and re-worded case, which picks at random would almost never reach.
   */
  #pickRecent(listed: readonly StandinThreat[], touchedIn: ReadonlyMap<number, number>): StandinThreat | undefined {
    if (this.#random() >= 0.4) return undefined;
    const recent = listed.filter((threat) => (touchedIn.get(threat.id) ?? -Infinity) >= this.epoch - 1);
    return recent[Math.floor(this.#random() * recent.length)];
  }

  #noteReworded(id: number): void {
    const moved = this.#movedIn.get(id);
    const changed = this.#changedIn.get(id);
    if (moved === undefined || changed === undefined || Math.min(moved, changed) < this.epoch - 1) return;
    this.rewordedIn.set(id, this.epoch);
    this.counts.reworded += 1;
  }

  /** A moment on one of the days, at random. */
  #instant(): string {
    const day = addDays(this.#options.fromDay, Math.floor(this.#random() * daysBetween(this.#options.fromDay, this.#options.toDay)));
    return new Date(Date.parse(`${day}T00:00:00.000Z`) + Math.floor(this.#random() * 86_400_000)).toISOString();
  }
}
