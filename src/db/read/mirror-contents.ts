// What the file holds of an organization, as the sync asks before it trusts an empty answer.
import type { Database, Statement } from '../sqlite.js';

export class MirrorContents {
  readonly #anyThreat: Statement;
  readonly #anyReport: Statement;

  constructor(sqlite: Database) {
    this.#anyThreat = sqlite.prepare('SELECT 1 FROM organization_threats WHERE organization = ? LIMIT 1');
    this.#anyReport = sqlite.prepare('SELECT 1 FROM reports WHERE organization = ? LIMIT 1');
  }

  /** True when the organization has no threats at all in the file (removed ones count as held). */
  hasNoThreats(organization: string): boolean {
    return this.#anyThreat.get(organization) === undefined;
  }

  hasNoReports(organization: string): boolean {
    return this.#anyReport.get(organization) === undefined;
  }
}
