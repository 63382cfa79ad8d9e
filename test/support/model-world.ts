// The world of the model-based randomized test (test/random-model.test.ts): the service (the
// stand-in, changed at random as a busy service changes), the configuration (the organizations
// configured, scopes, allowlist, budget) and the model's clock, from one seeded generator so that
// a failing run repeats.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { addDays, dayOf } from '../../src/lib/days.js';
import { seededRandom, type Standin, type StandinThreat } from '../../src/standin/index.js';
import { mirrorEnvFor, startTestStandin } from './service.js';
import { tempDir } from './temp.js';

/** acme reads its own threats with its key; all reads acme's and beta's with a user key. */
export const ORGANIZATIONS = ['acme', 'all'] as const;
export type Organization = (typeof ORGANIZATIONS)[number];
export const KEYS: Readonly<Record<Organization, string>> = { acme: 'model-acme-key', all: 'model-user-key' };
export const LOOKBACK_DAYS = 2;
export const INITIAL_DAYS = 10;
const TYPES = ['URL', 'URL', 'PAGE', 'ADDRESS', 'EMAIL'] as const;
const SCOPES: ReadonlyArray<readonly string[] | null> = [null, ['URL'], ['PAGE', 'URL'], ['ADDRESS', 'PAGE'], ['EMAIL', 'URL']];
const BUDGETS = [1, 2, 5, 20, 100_000];
/** THREAT_MIRROR_HISTORY_MAX_REQUESTS: the smallest allowed, a few, and the default. */
/** 0: the walk off (an unfinished one is dropped, and what it wrote is re-walked by the reconciliation). */
const HISTORY_BUDGETS = [0, 2, 3, 10, 1_000];

export interface ModelConfig {
  /** THREAT_MIRROR_ORGS: one of the organizations at least; one left out is retired by the next writer. */
  organizations: Organization[];
  /** Per organization; null: THREAT_MIRROR_ASSET_TYPES_<ORG> unset (every type). */
  readonly scopes: Record<Organization, readonly string[] | null>;
  /** THREAT_MIRROR_ALLOWLIST's lines. */
  readonly allowlist: string[];
  /** THREAT_MIRROR_RECONCILE_MAX_REQUESTS. */
  budget: number;
  /** THREAT_MIRROR_HISTORY_FROM; null: unset (the last INITIAL_DAYS days). */
  historyFrom: string | null;
  /** THREAT_MIRROR_HISTORY_MAX_REQUESTS. */
  historyBudget: number;
}

export class ModelWorld {
  readonly random: () => number;
  readonly service: Standin;
  readonly dbPath: string;
  readonly allowlistPath: string;
  readonly config: ModelConfig = { organizations: [...ORGANIZATIONS], scopes: { acme: null, all: null }, allowlist: [], budget: 20, historyFrom: null, historyBudget: 1_000 };
  /** The model's clock: the service's "now", and THREAT_MIRROR_NOW of every command. */
  now: Date;
  /** The first day a complete run or backfill mirrored, per organization: a backfill walks those configured. */
  readonly firstDays: Record<Organization, string>;
  /** Changes of the service so far (a false statement's bound grows with those made meanwhile). */
  changes = 0;
  /** The days each change touched (a threat's day before and after), by its number in `changes`. */
  readonly touched: string[][] = [];
  #nextId: number;
  readonly #unblocked = new Map<number, StandinThreat>();
  /** Moved or re-worded, never both: a threat re-dated and re-worded is out of reach (docs/reconciliation.md). */
  readonly #moved = new Set<number>();
  readonly #reworded = new Set<number>();

  private constructor(random: () => number, service: Standin, now: Date, threats: readonly StandinThreat[]) {
    this.random = random;
    this.service = service;
    this.now = now;
    const folder = tempDir();
    this.dbPath = join(folder, 'mirror.db');
    this.allowlistPath = join(folder, 'allow.txt');
    const first = addDays(dayOf(now), -(INITIAL_DAYS - 1));
    this.firstDays = { acme: first, all: first };
    this.#nextId = Math.max(...threats.map((threat) => threat.id)) + 1;
    this.writeAllowlist();
  }

  static async start(seed: number, start: string): Promise<ModelWorld> {
    const random = seededRandom(seed);
    const now = new Date(start);
    const threats: StandinThreat[] = [];
    const first = addDays(dayOf(now), -(INITIAL_DAYS + 4));
    let id = 1_000;
    for (; threats.length < 160; id += 1 + Math.floor(random() * 3)) {
      threats.push(threatOf(id, random, instantOn(addDays(first, Math.floor(random() * (INITIAL_DAYS + 5))), random), random() < 0.7 ? 'acme' : 'beta'));
    }
    // Two dense days a week before the first mirrored: only the history walk (or a long backfill)
    // reaches them, and a small budget cuts them short.
    for (const back of [7, 8]) {
      const day = addDays(dayOf(now), -(INITIAL_DAYS - 1) - back);
      for (let n = 0; n < 260; n += 1, id += 1) threats.push(threatOf(id, random, instantOn(day, random), random() < 0.7 ? 'acme' : 'beta'));
    }
    let world: ModelWorld | undefined;
    const service = await startTestStandin({
      threats,
      keys: { organizationKeys: { [KEYS.acme]: 'acme' }, userKeys: { [KEYS.all]: [{ organization: 'acme', active: true }, { organization: 'beta', active: true }] } },
      now: () => world?.now ?? now,
    });
    world = new ModelWorld(random, service, now, threats);
    return world;
  }

  get today(): string {
    return dayOf(this.now);
  }

  /** The earliest first day of any organization. */
  get firstDay(): string {
    return ORGANIZATIONS.map((organization) => this.firstDays[organization]).sort()[0] as string;
  }

  /** A backfill from `from` finished: the organizations configured hold from there. */
  backfilled(from: string): void {
    for (const organization of this.config.organizations) if (from < this.firstDays[organization]) this.firstDays[organization] = from;
  }

  pick<T>(items: readonly T[]): T | undefined {
    return items.length === 0 ? undefined : items[Math.floor(this.random() * items.length)];
  }

  /** The environment of a command now; `without`: an organization whose scope variable is left out. */
  env(extra: Record<string, string> = {}, without?: Organization): Record<string, string> {
    const scopes: Record<string, string> = {};
    // Only the configured: a scope variable of another organization is a configuration error (exit 2).
    for (const organization of this.config.organizations) {
      const types = this.config.scopes[organization];
      if (types !== null && organization !== without) scopes[`THREAT_MIRROR_ASSET_TYPES_${organization.toUpperCase()}`] = types.join(',');
    }
    const keys = Object.fromEntries(this.config.organizations.map((organization) => [organization, KEYS[organization]]));
    return mirrorEnvFor(keys, this.now.toISOString())(this.service, this.dbPath, {
      THREAT_MIRROR_INITIAL_DAYS: String(INITIAL_DAYS),
      THREAT_MIRROR_LOOKBACK_DAYS: String(LOOKBACK_DAYS),
      THREAT_MIRROR_RECONCILE_DAYS: '0',
      THREAT_MIRROR_RECONCILE_MAX_REQUESTS: String(this.config.budget),
      THREAT_MIRROR_HISTORY_MAX_REQUESTS: String(this.config.historyBudget),
      ...(this.config.historyFrom === null ? {} : { THREAT_MIRROR_HISTORY_FROM: this.config.historyFrom }),
      THREAT_MIRROR_ALLOWLIST: this.allowlistPath,
      THREAT_MIRROR_RETRY_MIN_MS: '5',
      THREAT_MIRROR_RETRY_MAX_MS: '20',
      LOG_LEVEL: 'info',
      ...scopes,
      ...extra,
    });
  }

  /** One random change of the service; returns what it did, for the step log. */
  changeService(): string {
    this.changes += 1;
    const state = (): Map<number, string> => new Map(this.service.threatsVisibleTo(KEYS.all).map((threat) => [threat.id, JSON.stringify([threat.blockedAt, threat.type, threat.content, threat.organization])]));
    const before = state();
    const done = this.#changeService();
    const after = state();
    const days = new Set<string>();
    for (const id of new Set([...before.keys(), ...after.keys()])) {
      if (before.get(id) === after.get(id)) continue;
      for (const was of [before.get(id), after.get(id)]) if (was !== undefined) days.add((JSON.parse(was) as string[])[0]?.slice(0, 10) as string);
    }
    this.touched[this.changes] = [...days];
    return done;
  }

  #changeService(): string {
    const listed = this.service.threatsVisibleTo(KEYS.all);
    const roll = this.random();
    const threat = this.pick(listed);
    if (roll < 0.22 || threat === undefined) {
      const added = threatOf(this.#nextId++, this.random, instantOn(this.#someDay(), this.random), this.random() < 0.7 ? 'acme' : 'beta');
      this.service.addThreats([added]);
      return `add ${added.id} ${added.type} ${added.organization} ${added.blockedAt}`;
    }
    if (roll < 0.42) {
      this.service.removeThreats([threat.id]);
      this.#unblocked.set(threat.id, threat);
      return `unblock ${threat.id}`;
    }
    const again = this.pick([...this.#unblocked.values()]);
    if (roll < 0.5 && again !== undefined) {
      this.service.addThreats([again]);
      this.#unblocked.delete(again.id);
      return `re-block ${again.id}`;
    }
    if (roll < 0.68 && !this.#reworded.has(threat.id)) {
      // Sometimes to a day before the mirrored range.
      const day = this.random() < 0.3 ? addDays(this.firstDay, -1 - Math.floor(this.random() * 60)) : this.#someDay();
      this.#moved.add(threat.id);
      this.service.updateThreat(threat.id, { blockedAt: instantOn(day, this.random) });
      return `move ${threat.id} to ${day}`;
    }
    if (roll < 0.8 && (threat.type === 'URL' || threat.type === 'PAGE')) {
      const type = threat.type === 'URL' ? 'PAGE' : 'URL';
      this.service.updateThreat(threat.id, { type });
      return `retype ${threat.id} to ${type}`;
    }
    if (roll < 0.9 && !this.#moved.has(threat.id) && (threat.type === 'URL' || threat.type === 'PAGE')) {
      this.#reworded.add(threat.id);
      this.service.updateThreat(threat.id, { content: urlOf(this.#nextId++, this.random) });
      return `reword ${threat.id}`;
    }
    const organization = threat.organization === 'acme' ? 'beta' : 'acme';
    this.service.updateThreat(threat.id, { organization });
    return `transfer ${threat.id} to ${organization}`;
  }

  /** One random change of the configuration; takes effect at the next command. */
  changeConfig(): string {
    const roll = this.random();
    if (roll < 0.25) {
      const organization = this.pick(ORGANIZATIONS) as Organization;
      const scope = this.pick(SCOPES) ?? null;
      this.config.scopes[organization] = scope;
      return `scope ${organization} ${scope?.join(',') ?? 'every type'}`;
    }
    if (roll < 0.45) {
      this.config.budget = this.pick(BUDGETS) as number;
      return `budget ${this.config.budget}`;
    }
    if (roll < 0.7) {
      // Up to three weeks before the first day mirrored, or a little after it (what is mirrored stays), or unset.
      this.config.historyFrom = this.random() < 0.25 ? null : addDays(this.firstDay, 2 - Math.floor(this.random() * 24));
      this.config.historyBudget = this.pick(HISTORY_BUDGETS) as number;
      return `history from ${this.config.historyFrom ?? 'the last INITIAL_DAYS days'}, ${this.config.historyBudget} requests a run`;
    }
    if (roll < 0.82) {
      // One organization left out of THREAT_MIRROR_ORGS (never both), or configured again.
      const organization = this.pick(ORGANIZATIONS) as Organization;
      const configured = this.config.organizations.includes(organization);
      if (configured && this.config.organizations.length === 1) return `organizations ${organization} kept (the last configured)`;
      this.config.organizations = configured ? this.config.organizations.filter((name) => name !== organization) : ORGANIZATIONS.filter((name) => name === organization || this.config.organizations.includes(name));
      return `organizations ${this.config.organizations.join(',')} (${organization} ${configured ? 'left out' : 'configured again'})`;
    }
    const threat = this.pick(this.service.threatsVisibleTo(KEYS.all));
    if (this.config.allowlist.length > 3 || threat === undefined) {
      this.config.allowlist.splice(Math.floor(this.random() * this.config.allowlist.length), 1);
    } else {
      // An exact content, or a URL threat's host: well-formed entries only (hostile spellings are issue 37's).
      const host = /^https:\/\/([^/]+)\//.exec(threat.content)?.[1];
      this.config.allowlist.push(host !== undefined && this.random() < 0.5 ? host : threat.content);
    }
    this.writeAllowlist();
    return `allowlist ${JSON.stringify(this.config.allowlist)}`;
  }

  advanceClock(): string {
    const hours = 3 + Math.floor(this.random() * 28);
    this.now = new Date(this.now.getTime() + hours * 3_600_000);
    return `clock +${hours} h to ${this.now.toISOString()}`;
  }

  writeAllowlist(): void {
    writeFileSync(this.allowlistPath, this.config.allowlist.map((line) => `${line}\n`).join(''));
  }

  /** A day between a few days before the first mirrored one and today. */
  #someDay(): string {
    const span = Math.round((Date.parse(this.today) - Date.parse(this.firstDay)) / 86_400_000) + 4;
    return addDays(this.firstDay, Math.floor(this.random() * span) - 3);
  }
}

function threatOf(id: number, random: () => number, blockedAt: string, organization: string): StandinThreat {
  const type = TYPES[Math.floor(random() * TYPES.length)] as string;
  return { id, type, blockedAt, organization, content: contentOf(type, id, random) };
}

function contentOf(type: string, id: number, random: () => number): string {
  if (type === 'ADDRESS') return `eip155:1:0x${id.toString(16).padStart(8, '0')}${Math.floor(random() * 1e8).toString(16).padStart(32, '0')}`;
  if (type === 'EMAIL') return `phish${id}@mail${id % 7}.example`;
  return urlOf(id, random);
}

/** A well-formed URL; a few share a host, so a host entry of the allowlist covers several. */
function urlOf(id: number, random: () => number): string {
  return `https://site${Math.floor(random() * 40)}.example/p${id}`;
}

function instantOn(day: string, random: () => number): string {
  return new Date(Date.parse(`${day}T00:00:00.000Z`) + Math.floor(random() * 86_400_000)).toISOString();
}
