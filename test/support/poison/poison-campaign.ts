import { Delivery, type PoisonCase } from './poison-case';
import { PoisonSession, runStartCase, type CaseOutcome, type FreezeReport, type PoisonRunnerOptions, type PoisonTarget, type SessionCheck } from './poison-runner';

export interface CampaignOptions extends PoisonRunnerOptions {
  /** Cases sent to a session between two checks of it. */
  batchSize: number;
  /** Cases of frozen batches re-run one by one, each in a new session, to name the culprit (default 40). */
  isolateBudget?: number;
  log?: (line: string) => void;
}

/** The suite's result; `toJSON` is the one line the test and the bench print. */
export interface PoisonTally {
  cases: number;
  accepted: number;
  /** Refused by an update validator or the SDK (unknown handler), plus tool calls the session refused. */
  rejected: number;
  /** Signals the session dropped and counted (`counters.signalsIgnored`). */
  ignored: number;
  /** Refused by the server or gRPC before reaching the workflow (size limits). */
  refused: number;
  timedOut: number;
  toolCallsRejected: number;
  frozen: number;
  workflowTaskFailures: number;
  benignTaskFailures: number;
  unparseableEvents: number;
  foreignEvents: number;
  sessions: number;
  checks: number;
  /** Checks that could not be made (not a verdict on the session). */
  checkErrors: number;
  rejectedBy: Record<string, number>;
  freezes: FreezeReport[];
  /** The cases that got no answer in time, with what was waited for. */
  slowCases: string[];
  /** Checks that found unparseable or foreign events, with the first reason. */
  streamProblems: string[];
  /** Wall time spent per case kind and on checks, in ms: where the suite's minutes go. */
  msBy: Record<string, number>;
}

export const emptyTally = (): PoisonTally => ({
  cases: 0,
  accepted: 0,
  rejected: 0,
  ignored: 0,
  refused: 0,
  timedOut: 0,
  toolCallsRejected: 0,
  frozen: 0,
  workflowTaskFailures: 0,
  benignTaskFailures: 0,
  unparseableEvents: 0,
  foreignEvents: 0,
  sessions: 0,
  checks: 0,
  checkErrors: 0,
  rejectedBy: {},
  freezes: [],
  slowCases: [],
  streamProblems: [],
  msBy: {},
});

/** Adds `from` into `into`: counts summed, lists joined. */
export function addTally(into: PoisonTally, from: PoisonTally): PoisonTally {
  for (const key of Object.keys(into) as Array<keyof PoisonTally>) {
    const value = from[key];
    if (typeof value === 'number') (into[key] as number) += value;
  }
  into.freezes.push(...from.freezes);
  into.slowCases.push(...from.slowCases);
  into.streamProblems.push(...from.streamProblems);
  for (const [type, n] of Object.entries(from.rejectedBy)) into.rejectedBy[type] = (into.rejectedBy[type] ?? 0) + n;
  for (const [what, ms] of Object.entries(from.msBy)) into.msBy[what] = (into.msBy[what] ?? 0) + ms;
  return into;
}

/** The fields of the JSON line, without the long lists. */
export function summaryLine(tally: PoisonTally, extra: Record<string, unknown> = {}): string {
  const { freezes, streamProblems, rejectedBy, slowCases, msBy, ...counts } = tally;
  return JSON.stringify({
    ...counts,
    ...extra,
    rejectedBy,
    msBy: Object.fromEntries(Object.entries(msBy).map(([k, v]) => [k, Math.round(v)])),
    frozenCases: freezes.flatMap((f) => f.cases).slice(0, 20),
    slowCases: slowCases.slice(0, 20),
    streamProblems: streamProblems.slice(0, 5),
  });
}

function countOutcome(tally: PoisonTally, outcome: CaseOutcome): void {
  tally.cases += 1;
  switch (outcome.delivery) {
    case Delivery.accepted:
      tally.accepted += 1;
      break;
    case Delivery.rejected: {
      tally.rejected += 1;
      const type = outcome.case.kind === 'toolCalls' ? 'tool turn failed' : (outcome.detail.split(':')[0] ?? 'unknown');
      tally.rejectedBy[type] = (tally.rejectedBy[type] ?? 0) + 1;
      break;
    }
    case Delivery.refused:
      tally.refused += 1;
      break;
    case Delivery.timedOut:
      tally.timedOut += 1;
      tally.slowCases.push(`${outcome.case.id} ${outcome.case.label.slice(0, 120)}: ${outcome.detail}`);
      break;
    default: {
      const never: never = outcome.delivery;
      throw new Error(`unknown delivery ${String(never)}`);
    }
  }
}

function countCheck(tally: PoisonTally, check: SessionCheck): void {
  tally.checks += 1;
  tally.ignored += check.signalsIgnored;
  tally.workflowTaskFailures += check.taskFailures.length;
  tally.benignTaskFailures += check.benignTaskFailures;
  tally.unparseableEvents += check.unparseable.length;
  tally.foreignEvents += check.foreignEvents;
  tally.toolCallsRejected += check.toolResults.filter((r) => !r.ok && r.errorType === 'ToolInputInvalid').length;
  tally.rejected += check.toolResults.filter((r) => !r.ok && r.errorType === 'ToolInputInvalid').length;
  if (check.unparseable.length > 0 || check.foreignEvents > 0) {
    tally.streamProblems.push(check.unparseable[0]?.why ?? `${check.foreignEvents} foreign event(s)`);
  }
}

/**
 * Runs cases against sessions in batches: deliver a batch, then check the
 * session (it answers, its stream parses, no run failed a workflow task).
 * A session found frozen is recorded with its batch and the failures in its
 * history, terminated, and replaced; the batch's cases are then re-run one
 * by one in new sessions (within `isolateBudget`) to name the case that did it.
 */
export async function runCampaign(target: PoisonTarget, cases: PoisonCase[], options: CampaignOptions): Promise<PoisonTally> {
  const tally = emptyTally();
  const log = options.log ?? (process.env.POISON_TRACE ? (line: string) => process.stderr.write(`${line}\n`) : () => undefined);
  const timeouts = { caseMs: options.caseTimeoutMs ?? 10_000, turnMs: options.turnTimeoutMs ?? 30_000 };
  let isolateBudget = options.isolateBudget ?? 40;
  let sessionSeq = 0;
  const newSession = async (): Promise<PoisonSession> => {
    sessionSeq += 1;
    tally.sessions += 1;
    const sessionId = `${options.prefix}-${sessionSeq}`;
    const session = new PoisonSession(target, sessionId, options.sessionOptions(sessionId), timeouts);
    await session.start();
    return session;
  };

  const isolate = async (batch: PoisonCase[]): Promise<string[]> => {
    const culprits: string[] = [];
    for (const c of batch) {
      if (isolateBudget <= 0) break;
      isolateBudget -= 1;
      const alone = await newSession();
      await alone.deliver(c);
      const check = await alone.check();
      if (!check.answered || check.taskFailures.length > 0) {
        culprits.push(c.id);
        await alone.terminate('poison suite: frozen by one case');
      }
    }
    return culprits;
  };

  let session = await newSession();
  let batch: PoisonCase[] = [];
  for (let i = 0; i < cases.length; i++) {
    const c = cases[i]!;
    if (process.env.POISON_TRACE) log(`case ${i} ${c.kind} ${c.label.slice(0, 80)}`);
    const caseStarted = performance.now();
    const timed = (what: string, since: number) => (tally.msBy[what] = (tally.msBy[what] ?? 0) + performance.now() - since);
    if (c.kind === 'start') {
      const r = await runStartCase(target, c, `${options.prefix}-start-${i}`, timeouts.turnMs);
      timed('start', caseStarted);
      countOutcome(tally, r.outcome);
      tally.workflowTaskFailures += r.taskFailures.length;
      if (r.frozen || r.taskFailures.length > 0) {
        tally.frozen += r.frozen ? 1 : 0;
        tally.freezes.push({ sessionId: `${options.prefix}-start-${i}`, cases: [`${c.id} ${c.label}`], why: r.outcome.detail, taskFailures: r.taskFailures });
      }
      continue;
    }
    const outcome = await session.deliver(c);
    timed(c.kind, caseStarted);
    if (process.env.POISON_TRACE) log(`  ${Math.round(performance.now() - caseStarted)} ms ${outcome.delivery} ${outcome.detail.slice(0, 100)}`);
    countOutcome(tally, outcome);
    batch.push(c);
    if (outcome.delivery !== Delivery.timedOut && batch.length < options.batchSize && i < cases.length - 1) continue;

    let check: SessionCheck;
    try {
      if (process.env.POISON_TRACE) log(`checking ${session.sessionId}`);
      const checkStarted = performance.now();
      check = await session.check();
      timed('check', checkStarted);
    } catch (err) {
      // The check itself broke (a history read, say): say so, and do not count the session as frozen for it.
      tally.checkErrors += 1;
      tally.streamProblems.push(`check of ${session.sessionId} failed: ${String(err).slice(0, 300)}`);
      batch = [];
      continue;
    }
    countCheck(tally, check);
    if (!check.answered || check.taskFailures.length > 0) {
      tally.frozen += check.answered ? 0 : 1;
      log(`session ${session.sessionId} ${check.answered ? 'failed a workflow task' : 'froze'}: ${check.why || check.taskFailures[0]?.message}`);
      await session.terminate('poison suite: frozen');
      const culprits = await isolate(batch);
      tally.freezes.push({
        sessionId: session.sessionId,
        cases: batch.filter((b) => culprits.length === 0 || culprits.includes(b.id)).map((b) => `${b.id} ${b.label}`),
        why: check.why,
        taskFailures: check.taskFailures,
      });
      session = await newSession();
    }
    log(`${i + 1}/${cases.length} cases, ${tally.frozen} frozen, ${tally.workflowTaskFailures} task failures`);
    batch = [];
  }
  return tally;
}
