// The model-based randomized test of issue 40: random steps of three kinds drive the service (the
// stand-in: blocks, unblocks, re-blocks, moves across days and before the mirrored range, changes
// of type or content, threats passed between organizations), the configuration (the organizations
// configured, each one's scope, the allowlist, the reconciliation budget, the history's start and
// budget) and the commands (`--once`,
// `verify` with and without the scope, `--backfill`, daemon runs, `kill -9` at random points), and
// after each step the file is held to what the service and the configuration say
// (support/model-invariants.ts):
//   - nothing the service lists in scope on the re-scanned days is missing after a successful run;
//   - nothing stays false (current but not listed so, or listed on a mirrored day and not held so)
//     for more successful runs than the reconciliation's bound (docs/reconciliation.md);
//   - complete_through never covers a day not walked whole;
//   - enforced_threats is current_threats without what the allowlist allows, lookup agrees with
//     it, and so does the JSONL export;
//   - a reader of the change feed, keeping its place, holds every threat as the file does;
//   - the history held whole reaches the configured start within the runs its pages imply;
//   - an organization left out of the configuration is retired by the next writer: nothing of it in
//     force, not in sync_status; configured again, it is held to all of the above again.
// A fixed seed and a few steps in `npm test`; RANDOM_MODEL_SEED=n and RANDOM_MODEL_STEPS=n run
// others and longer (e.g. RANDOM_MODEL_SEED=$RANDOM RANDOM_MODEL_STEPS=300 npx vitest run test/random-model.test.ts),
// RANDOM_MODEL_LOG=1 prints the steps taken.
import { describe, expect, it } from 'vitest';
import { addDays } from '../src/lib/days.js';
import { type CliResult, runCli, startCli } from './support/cli.js';
import {
  allowlistProblems,
  completeThroughProblems,
  cycleBound,
  enforcementProblems,
  exportProblems,
  falseStatements,
  FeedReader,
  historyGaps,
  insertCountProblems,
  missingAfterRun,
  retiredNow,
  retirementProblems,
  succeededRuns,
} from './support/model-invariants.js';
import { ModelWorld, type Organization, ORGANIZATIONS } from './support/model-world.js';

const SEED = Number(process.env.RANDOM_MODEL_SEED ?? 59);
const STEPS = Number(process.env.RANDOM_MODEL_STEPS ?? 14);
const START = '2026-11-15T09:00:00.000Z';

type Outcome = { readonly ran: 'success' } | { readonly ran: 'killed' } | { readonly ran: 'none' };

/** A false statement being watched: since which succeeded run of its organization, and the most runs allowed. */
interface Watched {
  readonly since: number;
  readonly changesAtStart: number;
  bound: number;
  readonly what: string;
}

class ModelRun {
  readonly world: ModelWorld;
  readonly log: string[] = [];
  /** What the steps reached: a run that drew no step of a kind, or never saw the mirror behind the service, checked less than it says. */
  readonly reached = { service: 0, config: 0, clock: 0, command: 0, killed: 0, falseWatched: 0, historyWatched: 0, retired: 0, returned: 0 };
  readonly #watched = new Map<string, Watched>();
  readonly #feed = new FeedReader();
  /** A history walk under way, per organization: toward which start, since which succeeded run, and the most runs allowed. */
  readonly #historyWatched = new Map<Organization, { readonly target: string; readonly since: number; readonly changesAtStart: number; budget: number; bound: number }>();
  /** A writer started under the configuration now and ran to its end in the last step: the organizations retired must be those it left out. */
  #writerStarted = false;
  /** The organizations retired at the last check: one no longer is once a writer configured it again. */
  #retired: Organization[] = [];

  constructor(world: ModelWorld) {
    this.world = world;
  }

  async step(index: number): Promise<void> {
    const { world } = this;
    const roll = world.random();
    let outcome: Outcome = { ran: 'none' };
    if (roll < 0.34) {
      this.reached.service += 1;
      this.log.push(`${index}: service ${world.changeService()}`);
    } else if (roll < 0.46) {
      this.reached.config += 1;
      this.log.push(`${index}: config ${world.changeConfig()}`);
    } else if (roll < 0.52) {
      this.reached.clock += 1;
      this.log.push(`${index}: ${world.advanceClock()}`);
    } else {
      this.reached.command += 1;
      outcome = await this.#command(index, world.random());
      if (outcome.ran === 'killed') this.reached.killed += 1;
    }
    await this.check(index, outcome);
  }

  async #command(index: number, roll: number): Promise<Outcome> {
    const { world } = this;
    if (roll < 0.45) return this.#ran(index, '--once', await runCli(['--once'], world.env()));
    if (roll < 0.55) {
      // Without one organization's scope variable: verify records "every type" for it, as any writer would.
      const without = world.random() < 0.5 ? (world.pick(world.config.organizations) as Organization) : undefined;
      const result = await runCli(['verify'], world.env({}, without));
      if (result.code === 0 && without !== undefined) world.config.scopes[without] = null;
      return this.#ran(index, `verify${without ? ` without the scope of ${without}` : ''}`, result, false);
    }
    if (roll < 0.65) {
      const from = addDays(world.firstDay, -1 - Math.floor(world.random() * 6));
      const result = await runCli(['--backfill', '--from', from, '--to', addDays(world.today, -1)], world.env());
      if (result.code === 0) world.backfilled(from);
      return this.#ran(index, `backfill from ${from}`, result, false);
    }
    if (roll < 0.75) return this.#daemon(index);
    return this.#killed(index);
  }

  #ran(index: number, what: string, result: CliResult, incremental = true): Outcome {
    this.log.push(`${index}: ${what} -> exit ${result.code}`);
    if (result.code !== 0) throw new Error(`${what} exited ${result.code}: ${result.stderr}`);
    this.#writerStarted = true;
    return incremental ? { ran: 'success' } : { ran: 'none' };
  }

  /** The daemon, for two runs of each organization, then SIGTERM, or at times SIGKILL at once. */
  async #daemon(index: number): Promise<Outcome> {
    const daemon = startCli([], this.world.env({ THREAT_MIRROR_SCHEDULE: '* * * * * *' }));
    const finished = (organization: string): number => daemon.logs.filter((line) => line.msg === `sync of organization "${organization}" succeeded`).length;
    await daemon.waitForLog(() => this.world.config.organizations.every((organization) => finished(organization) >= 2));
    if (this.world.random() < 0.3) {
      await daemon.stop('SIGKILL');
      this.log.push(`${index}: daemon, two runs, then SIGKILL`);
      this.#writerStarted = true;
      return { ran: 'killed' };
    }
    daemon.kill('SIGTERM');
    return this.#ran(index, 'daemon, two runs', await daemon.exited);
  }

  /** `--once` (or a backfill) killed with SIGKILL after a random number of requests, or after a random time. */
  async #killed(index: number): Promise<Outcome> {
    const { world } = this;
    const afterRequests = 1 + Math.floor(world.random() * 8);
    const afterMs = world.random() < 0.3 ? 20 + Math.floor(world.random() * 400) : undefined;
    const args = world.random() < 0.3 ? ['--backfill', '--from', addDays(world.firstDay, -3), '--to', addDays(world.today, -1)] : ['--once'];
    const running = startCli(args, world.env());
    let seen = 0;
    if (afterMs === undefined) world.service.onListRequest({ times: afterRequests, change: () => void ((seen += 1) === afterRequests && running.kill('SIGKILL')) });
    const timer = afterMs === undefined ? undefined : setTimeout(() => running.kill('SIGKILL'), afterMs);
    const result = await running.exited;
    clearTimeout(timer);
    this.log.push(`${index}: ${args.join(' ')} killed ${afterMs === undefined ? `after ${afterRequests} requests` : `after ${afterMs} ms`} -> ${result.signal ?? `exit ${result.code}`}`);
    if (result.signal === null && result.code !== 0) throw new Error(`${args.join(' ')} exited ${result.code}: ${result.stderr}`);
    // A backfill that ended before its kill is no incremental run; one that did extended the mirrored range.
    if (result.signal === null && args[0] === '--backfill') world.backfilled(args[2] as string);
    if (result.signal === null) this.#writerStarted = true;
    return result.signal === null && args[0] === '--once' ? { ran: 'success' } : { ran: result.signal === null ? 'none' : 'killed' };
  }

  /** Every invariant after a step; throws with the step log on the first broken one. */
  async check(index: number, outcome: Outcome): Promise<void> {
    const { world } = this;
    const problems: string[] = [];
    if (outcome.ran === 'success') problems.push(...missingAfterRun(world));
    problems.push(...this.#watch());
    problems.push(...this.#watchHistory());
    problems.push(...completeThroughProblems(world));
    problems.push(...insertCountProblems(world));
    problems.push(...retirementProblems(world, this.#writerStarted));
    const retired = retiredNow(world);
    if (retired.length > 0) this.reached.retired += 1;
    if (this.#retired.some((organization) => !retired.includes(organization))) this.reached.returned += 1;
    this.#retired = retired;
    this.#writerStarted = false;
    problems.push(...(await enforcementProblems(world)));
    problems.push(...this.#feed.problems(world));
    if (outcome.ran === 'success') {
      problems.push(...allowlistProblems(world));
      const exported = await runCli(['export', '--format', 'jsonl'], world.env());
      problems.push(...exportProblems(world, exported.stdout));
    }
    if (problems.length > 0) {
      throw new Error(`seed ${SEED}, step ${index}:\n  ${problems.slice(0, 10).join('\n  ')}\nsteps:\n  ${this.log.slice(-25).join('\n  ')}`);
    }
  }

  /** False statements, each allowed as many of its organization's succeeded runs as the reconciliation's bound. */
  #watch(): string[] {
    const { world } = this;
    const now = falseStatements(world);
    const runs = new Map(ORGANIZATIONS.map((organization) => [organization, succeededRuns(world, organization)]));
    const bounds = new Map(ORGANIZATIONS.map((organization) => [organization, cycleBound(world, organization, now.size)]));
    const problems: string[] = [];
    if (now.size > 0) this.reached.falseWatched += 1;
    for (const id of this.#watched.keys()) if (!now.has(id)) this.#watched.delete(id);
    for (const [id, what] of now) {
      const organization = id.split(':')[0] as Organization;
      const watched = this.#watched.get(id) ?? { since: runs.get(organization) as number, changesAtStart: world.changes, bound: 0, what };
      watched.bound = Math.max(watched.bound, (bounds.get(organization) as number) + (world.changes - watched.changesAtStart));
      this.#watched.set(id, watched);
      const after = (runs.get(organization) as number) - watched.since;
      if (after > watched.bound) problems.push(`false for ${after} successful runs, more than the bound ${watched.bound}: ${what}`);
    }
    return problems;
  }

  /**
   * The history walk toward the configured start: each organization is allowed twice the runs the
   * pages of the days it lacks need (a day at least one page) at half the smallest budget seen
   * meanwhile less a probe (the checks of resumed windows take at most half: docs/operations.md,
   * "Every run gets further"; at least a page a run), four runs more, and for each change of the
   * service meanwhile on a day it lacks (a list shifted under a window walks it again) the runs of
   * a window of 8 pages more.
   */
  #watchHistory(): string[] {
    const { world } = this;
    const problems: string[] = [];
    const gaps = new Map(historyGaps(world).map((gap) => [gap.organization, gap]));
    for (const organization of ORGANIZATIONS) {
      const gap = gaps.get(organization);
      const watched = this.#historyWatched.get(organization);
      if (gap === undefined) {
        this.#historyWatched.delete(organization);
        continue;
      }
      this.reached.historyWatched += 1;
      const runs = succeededRuns(world, organization);
      const current = watched?.target === gap.target ? watched : { target: gap.target, since: runs, changesAtStart: world.changes, budget: world.config.historyBudget, bound: 0 };
      current.budget = Math.min(current.budget, world.config.historyBudget);
      const perRun = Math.max(1, Math.floor(current.budget / 2) - 1);
      const lacking = (day: string): boolean => day >= gap.target && day < (gap.heldFrom ?? world.today);
      let shifts = 0;
      for (let change = current.changesAtStart + 1; change <= world.changes; change += 1) if (world.touched[change]?.some(lacking)) shifts += 1;
      current.bound = Math.max(current.bound, 2 * Math.ceil(gap.pages / perRun) + 4 + shifts * (Math.ceil(8 / perRun) + 1));
      this.#historyWatched.set(organization, current);
      const after = runs - current.since;
      if (after > current.bound) problems.push(`${organization}: history held from ${gap.heldFrom ?? 'no day'}, ${after} successful runs after the configuration asked for ${gap.target} (bound ${current.bound}, ${gap.pages} pages left)`);
    }
    return problems;
  }

  /** Quiet at the end: the whole budget, two runs, and nothing false is left. */
  async settle(): Promise<void> {
    this.world.config.budget = 100_000;
    // A history walk under way holds what its unfinished window read until it reaches the window's end (its bound is #watchHistory's).
    if (this.world.config.historyBudget > 0) this.world.config.historyBudget = 100_000;
    for (let run = 0; run < 2; run += 1) this.#ran(STEPS + run, '--once, whole budget', await runCli(['--once'], this.world.env()));
    const left = falseStatements(this.world);
    if (left.size > 0) throw new Error(`seed ${SEED}: still false after two quiet runs with the whole budget:\n  ${[...left.values()].slice(0, 10).join('\n  ')}\nsteps:\n  ${this.log.slice(-25).join('\n  ')}`);
  }
}

describe(`the file under random service changes, configurations and commands (seed ${SEED}, ${STEPS} steps)`, { timeout: 120_000 + STEPS * 10_000 }, () => {
  it('states nothing false beyond the documented bounds, and every reader (enforced_threats, lookup, exports) agrees', async () => {
    const world = await ModelWorld.start(SEED, START);
    const run = new ModelRun(world);
    run.log.push(`0: --once -> exit ${(await runCli(['--once'], world.env())).code}`);
    await run.check(0, { ran: 'success' });
    for (let index = 1; index <= STEPS; index += 1) await run.step(index);
    await run.settle();
    if (process.env.RANDOM_MODEL_LOG) console.log(run.log.join("\n"));
    expect(run.log.length).toBeGreaterThan(STEPS);
    // Floors on what the steps reached (the default seed's 14 steps reach each; more steps, more;
    // seed 40, the default before the history's steps, reached no history walk in 14, and seed 55,
    // the default before the organizations' steps, reached no retirement).
    console.log(`random model, seed ${SEED}, ${STEPS} steps: reached ${JSON.stringify(run.reached)}`);
    expect(run.reached.service, 'service changes').toBeGreaterThanOrEqual(Math.floor(STEPS / 7));
    expect(run.reached.config, 'configuration changes').toBeGreaterThanOrEqual(1);
    expect(run.reached.command, 'commands').toBeGreaterThanOrEqual(Math.floor(STEPS / 4));
    expect(run.reached.falseWatched, 'checks that found the mirror behind the service, within its bound').toBeGreaterThanOrEqual(1);
    // A history start before what is held is drawn rarely (a quarter of the configuration steps,
    // most of them): seed 402 drew none in 150 steps. Held to the default seed only.
    if (process.env.RANDOM_MODEL_SEED === undefined) {
      expect(run.reached.historyWatched, 'checks that found the history short of its configured start, within its bound').toBeGreaterThanOrEqual(1);
      expect(run.reached.retired, 'checks that found an organization retired').toBeGreaterThanOrEqual(1);
      // An organization configured again: the default seed's 14 steps leave one out only; CI's 300 bring it back.
      if (STEPS >= 300) expect(run.reached.returned, 'organizations configured again').toBeGreaterThanOrEqual(1);
    }
  });
});
