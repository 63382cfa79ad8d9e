// The stand-in's threats, indexed by organization and day, and who may see them.
import { addDays, daysBetween } from '../lib/days.js';
import { ContentIndex } from './content-index.js';
import type { StandinThreat } from './data.js';
import type { ThreatPatch } from './list-events.js';
import { compareBy, matches, type ThreatQuery, utcDayOf } from './threat-query.js';
import type { StandinKeys } from './types.js';

const CACHE_ENTRIES = 64;
/** Below this many threats a query scans them (well under a millisecond) rather than keep an index up. */
const INDEXED_FROM = 10_000;

export class ThreatStore {
  readonly #keys: StandinKeys;
  readonly #byId = new Map<number, StandinThreat>();
  /** organization → day → threats of that day */
  readonly #byDay = new Map<string, Map<string, StandinThreat[]>>();
  /** Bumped on every change: a cached list of an older version is stale. */
  #version = 0;
  /** Sorted lists by query, least recently used first: a sync asks for the same list page after page. */
  readonly #cache = new Map<string, { version: number; list: StandinThreat[] }>();
  /** For the `query` filter (content-index.ts). */
  readonly #contents = new ContentIndex();

  constructor(keys: StandinKeys, threats: readonly StandinThreat[]) {
    this.#keys = keys;
    this.add(threats);
  }

  get size(): number {
    return this.#byId.size;
  }

  /** Adds threats, replacing those with the same id. */
  add(threats: readonly StandinThreat[]): void {
    for (const threat of threats) {
      const previous = this.#byId.get(threat.id);
      if (previous) this.#unindex(previous);
      this.#byId.set(threat.id, threat);
      this.#index(threat);
    }
    this.#version += 1;
  }

  remove(ids: readonly number[]): void {
    for (const id of ids) {
      const threat = this.#byId.get(id);
      if (!threat) continue;
      this.#unindex(threat);
      this.#byId.delete(id);
    }
    this.#version += 1;
  }

  update(id: number, patch: ThreatPatch): void {
    const threat = this.#byId.get(id);
    if (!threat) throw new Error(`no threat ${id}`);
    this.add([{ ...threat, ...patch }]);
  }

  /** The organizations a key may read, or undefined for a key the service does not accept. */
  visibleOrganizations(key: string): string[] | undefined {
    const organization = this.#keys.organizationKeys[key];
    if (organization !== undefined) return [organization];
    const memberships = this.#keys.userKeys[key]?.filter((membership) => membership.active).map((membership) => membership.organization);
    return memberships && memberships.length > 0 ? memberships : undefined;
  }

  /** Everything a key may see, all dates, by id. */
  visibleTo(key: string): StandinThreat[] {
    const organizations = new Set(this.visibleOrganizations(key) ?? []);
    return [...this.#byId.values()].filter((threat) => organizations.has(threat.organization)).sort((a, b) => a.id - b.id);
  }

  /** The whole sorted list a query selects, before paging. */
  list(organizations: string[], query: ThreatQuery): StandinThreat[] {
    const cacheKey = JSON.stringify([organizations, query.startDate, query.endDate, query.assetType, query.query, query.sorting]);
    const hit = this.#cache.get(cacheKey);
    if (hit && hit.version === this.#version) {
      this.#cache.delete(cacheKey);
      this.#cache.set(cacheKey, hit);
      return hit.list;
    }
    const indexed = query.query !== undefined && this.#byId.size >= INDEXED_FROM;
    const byContent = indexed ? this.#contents.matching(query.query as string, () => this.#byId.values(), this.#version) : undefined;
    const list = byContent ? this.#selectFrom(byContent, organizations, query) : this.#selectByDay(organizations, query);
    list.sort(compareBy(query.sorting));
    this.#cache.set(cacheKey, { version: this.#version, list });
    if (this.#cache.size > CACHE_ENTRIES) this.#cache.delete(this.#cache.keys().next().value as string);
    return list;
  }

  /** The threats of the organizations and days the query selects, day by day. */
  #selectByDay(organizations: string[], query: ThreatQuery): StandinThreat[] {
    const list: StandinThreat[] = [];
    const days = daysBetween(query.startDate, query.endDate);
    for (const organization of organizations) {
      const perDay = this.#byDay.get(organization);
      if (!perDay) continue;
      if (days > perDay.size) {
        // A range longer than the days held: by the days held.
        for (const [day, threats] of perDay) {
          if (day >= query.startDate && day <= query.endDate) for (const threat of threats) if (matches(threat, query)) list.push(threat);
        }
        continue;
      }
      for (let offset = 0; offset < days; offset += 1) {
        for (const threat of perDay.get(addDays(query.startDate, offset)) ?? []) if (matches(threat, query)) list.push(threat);
      }
    }
    return list;
  }

  /** Those of `threats` (the content index's answer to the query's text) that the rest of the query selects. */
  #selectFrom(threats: readonly StandinThreat[], organizations: string[], query: ThreatQuery): StandinThreat[] {
    const visible = new Set(organizations);
    return threats.filter((threat) => {
      const day = threat.blockedAt.slice(0, 10);
      return visible.has(threat.organization) && day >= query.startDate && day <= query.endDate && (!query.assetType || query.assetType.includes(threat.type));
    });
  }

  #index(threat: StandinThreat): void {
    let days = this.#byDay.get(threat.organization);
    if (!days) this.#byDay.set(threat.organization, (days = new Map()));
    const day = utcDayOf(threat.blockedAt);
    const list = days.get(day);
    if (list) list.push(threat);
    else days.set(day, [threat]);
  }

  #unindex(threat: StandinThreat): void {
    const list = this.#byDay.get(threat.organization)?.get(utcDayOf(threat.blockedAt));
    if (!list) return;
    const position = list.indexOf(threat);
    if (position >= 0) list.splice(position, 1);
  }
}
