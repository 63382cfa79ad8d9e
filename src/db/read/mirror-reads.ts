// What the sync reads of the mirror, on the main thread's read-only connection: its plans and
// their windows, the ledger, the history walk, whether an organization holds anything yet, the reports stream's state.
import type { Database } from '../sqlite.js';
import { HistoryReads } from './history-reads.js';
import { LedgerReads } from './ledger-reads.js';
import { MirrorContents } from './mirror-contents.js';
import { PlanReads } from './plan-reads.js';
import { ReportStateReads } from './report-state.js';

export class MirrorReads {
  readonly plans: PlanReads;
  readonly ledger: LedgerReads;
  readonly history: HistoryReads;
  readonly contents: MirrorContents;
  readonly reports: ReportStateReads;

  constructor(sqlite: Database) {
    this.plans = new PlanReads(sqlite);
    this.ledger = new LedgerReads(sqlite);
    this.history = new HistoryReads(sqlite);
    this.contents = new MirrorContents(sqlite);
    this.reports = new ReportStateReads(sqlite);
  }
}
