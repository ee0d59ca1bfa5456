import type { Breakdown } from './history-breakdown';
import { median, percentile, ratioOfMediansInterval, round } from './stats';
import type { HistogramTotals } from './worker-metrics';
import type { LegMedians } from './core-legs';

export interface BenchSamples {
  turns: number;
  stepsPerTurn: number;
  targetMs: number;
  /** Turn durations in ms, one per measured turn, same order for all three. */
  plainMs: number[];
  workflowMs: number[];
  floorMs: number[];
  breakdown: Breakdown;
  /** Sessions whose histories `breakdown` read; each should hold one archive (`breakdown.archives`). */
  sessionsMeasured: number;
  workerMetrics: HistogramTotals;
  /** CPU time each process used during each contender's measured turns, in ms, by contender then process. */
  cpu: Record<'plain' | 'session' | 'floor', Map<string, number>>;
  /** With `--legs`: each leg's median in ms and the main thread's busy ms in it, session and floor (core-legs.ts). */
  legs?: { session: LegMedians; floor: LegMedians };
}

/** Issue 15: a session step costs at most 1.2 times the bare Temporal workflow of the same shape. */
export const FLOOR_RATIO_TARGET = 1.2;

const col = (n: number) => n.toFixed(2).padStart(10);

/** Prints the table and the breakdowns, then the JSON line, which is always last. */
export function printReport(s: BenchSamples, out: (line: string) => void): void {
  const k = s.stepsPerTurn;
  const steps = s.turns * k;
  const perStepOf = (turns: number[]) => turns.map((ms) => ms / k);
  const plainStep = perStepOf(s.plainMs);
  const workflowStep = perStepOf(s.workflowMs);
  const floorStep = perStepOf(s.floorMs);
  // Paired by turn: each workflow turn against the plain turn run right beside it.
  const overhead = workflowStep.map((ms, i) => ms - (plainStep[i] as number));
  const aboveFloor = workflowStep.map((ms, i) => ms - (floorStep[i] as number));
  // The floor's activity is a no-op, the session's calls the model over HTTP: what the session spends beyond
  // the floor and the model call itself (the plain loop's step, the same request to the same model process).
  const aboveFloorAndModel = workflowStep.map((ms, i) => ms - (floorStep[i] as number) - (plainStep[i] as number));

  out('');
  out(`ReAct loop overhead: ${s.turns} turns x ${k} steps (${k - 1} no-op tool calls + a final answer), model answering instantly`);
  out(`${''.padEnd(26)}${'step p50'.padStart(10)}${'step p95'.padStart(10)}${'turn p50'.padStart(10)}${'turn p95'.padStart(10)}  (ms)`);
  const row = (name: string, step: number[], turn?: number[]) =>
    out(`${name.padEnd(26)}${col(median(step))}${col(percentile(step, 95))}${turn ? col(median(turn)) + col(percentile(turn, 95)) : ''}`);
  row('plain loop', plainStep, s.plainMs);
  row('session workflow', workflowStep, s.workflowMs);
  row('overhead (workflow-plain)', overhead);
  row('bare Temporal floor', floorStep, s.floorMs);
  row('workflow above the floor', aboveFloor);
  row('above floor + model call', aboveFloorAndModel);
  out('(the floor is Temporal alone in a step\'s shape: a no-op regular activity where the model call goes and a no-op');
  out(' local activity where the tool goes; its step time is the least overhead any session can have on this server)');

  const perStep = (total: number) => `${(total / steps).toFixed(2).padStart(8)} ms`;
  out('');
  out('where a workflow step goes, from the sessions\' histories (mean per step):');
  for (const [type, total] of [...s.breakdown.activityRun].sort(([a], [b]) => a.localeCompare(b))) {
    out(`  ${`activity ${type}`.padEnd(44)}${perStep(total)}`);
  }
  out(`  ${'activity dispatch (scheduled -> started)'.padEnd(44)}${perStep(s.breakdown.activityDispatch)}`);
  out(`  ${'workflow task queue (scheduled -> started)'.padEnd(44)}${perStep(s.breakdown.workflowTaskQueue)}`);
  out(
    `  ${'workflow task run + record (started -> done)'.padEnd(44)}${perStep(s.breakdown.workflowTaskRun)}` +
      `  (${(s.breakdown.workflowTasks / steps).toFixed(1)} workflow tasks, ${(s.breakdown.activities / steps).toFixed(1)} activities per step)`,
  );
  out('and from the workers\' own metrics (mean per step; "floor:" is the bare workflow\'s worker):');
  for (const [key, total] of [...s.workerMetrics].sort(([a], [b]) => a.localeCompare(b))) {
    if (total.count <= 0) continue;
    const label = key.replace('temporal_', '').replace(/\{[a-z_]+=(.*)\}$/, ' $1');
    out(`  ${label.padEnd(44)}${perStep(total.sum)}  (${(total.count / steps).toFixed(1)} per step)`);
  }

  // Every measured session has ended by now (loop.ts), so each history holds its archive's input once.
  const archiveBytesPerSession = s.breakdown.archives > 0 ? Math.round(s.breakdown.archiveInputBytes / s.breakdown.archives) : 0;
  out(
    `history: ${(s.breakdown.historyBytes / steps).toFixed(0)} bytes per step, of which model call inputs ${(s.breakdown.modelInputBytes / steps).toFixed(0)}` +
      ` and the sessions' archive inputs ${(s.breakdown.archiveInputBytes / steps).toFixed(0)} (${archiveBytesPerSession} bytes a session, ${s.breakdown.archives} archived)`,
  );
  const cpu = cpuPerStep(s.cpu, steps);
  out('CPU time per step while each ran (ms; "bench" is this process: the client, both workers and the plain loop):');
  const names = Object.keys(cpu.session ?? {});
  out(`  ${''.padEnd(24)}${names.map((n) => n.padStart(10)).join('')}${'total'.padStart(10)}`);
  for (const [who, used] of Object.entries(cpu)) {
    out(`  ${who.padEnd(24)}${names.map((n) => col(used[n] ?? 0)).join('')}${col(Object.values(used).reduce((a, b) => a + b, 0))}`);
  }

  if (s.legs) {
    out('a step leg by leg, as the worker meets the SDK core (median ms; "done" is the worker handing back its answer; "main" is how long its main thread was busy in it):');
    out(`  ${''.padEnd(52)}${'session'.padStart(10)}${'floor'.padStart(10)}${'main: s'.padStart(12)}${'main: f'.padStart(10)}`);
    const cell = (v: number | null | undefined) => (v === null || v === undefined ? '-'.padStart(10) : col(v));
    const { session, floor } = s.legs;
    for (const leg of Object.keys(session.ms)) {
      out(`  ${leg.padEnd(52)}${cell(session.ms[leg])}${cell(floor.ms[leg])}  ${cell(session.mainThread[leg])}${cell(floor.mainThread[leg])}`);
    }
  }

  const overheadMedian = median(overhead);
  const ratio = median(workflowStep) / median(plainStep);
  const floorRatio = median(workflowStep) / median(floorStep);
  // How far this run's ratio could be from the same code's on the same machine, from the turns it timed.
  const floorRatioCi = ratioOfMediansInterval(workflowStep, floorStep);
  // The floor_ratio of a session that added nothing to the bare workflow but its model calls.
  const modelFloorRatio = (median(floorStep) + median(plainStep)) / median(floorStep);
  out('');
  out(`ratio workflow/plain per step (medians): ${ratio.toFixed(1)}x`);
  out(`floor ratio workflow/bare floor per step (medians): ${floorRatio.toFixed(2)}x, 95% interval ${floorRatioCi[0].toFixed(2)} to ${floorRatioCi[1].toFixed(2)} (target <= ${FLOOR_RATIO_TARGET}); with nothing but the model call added to the floor: ${modelFloorRatio.toFixed(2)}x`);
  out(`target: median overhead <= ${s.targetMs} ms per step -> ${overheadMedian <= s.targetMs ? 'met' : 'NOT met'}`);
  out(
    JSON.stringify({
      overhead_ms_median: round(overheadMedian),
      overhead_ms_p95: round(percentile(overhead, 95)),
      steps,
      turns: s.turns,
      steps_per_turn: k,
      plain_step_ms_median: round(median(plainStep)),
      workflow_step_ms_median: round(median(workflowStep)),
      workflow_step_ms_p95: round(percentile(workflowStep, 95)),
      floor_step_ms_median: round(median(floorStep)),
      above_floor_ms_median: round(median(aboveFloor)),
      ratio: round(ratio),
      floor_ratio: round(floorRatio),
      floor_ratio_ci95: floorRatioCi.map((v) => round(v)),
      floor_ratio_target: FLOOR_RATIO_TARGET,
      floor_ratio_met: floorRatio <= FLOOR_RATIO_TARGET,
      model_floor_ratio: round(modelFloorRatio),
      above_floor_and_model_ms_median: round(median(aboveFloorAndModel)),
      history_bytes_per_step: Math.round(s.breakdown.historyBytes / steps),
      cpu_ms_per_step: cpu,
      ...(s.legs
        ? {
            legs_ms: { session: s.legs.session.ms, floor: s.legs.floor.ms },
            legs_main_thread_ms: { session: s.legs.session.mainThread, floor: s.legs.floor.mainThread },
          }
        : {}),
      model_input_bytes_per_step: Math.round(s.breakdown.modelInputBytes / steps),
      archive_input_bytes_per_session: archiveBytesPerSession,
      sessions_measured: s.sessionsMeasured,
      sessions_archived: s.breakdown.archives,
      target_ms: s.targetMs,
      target_met: overheadMedian <= s.targetMs,
    }),
  );
}

/** Each contender's CPU time by process, per step, rounded. */
function cpuPerStep(cpu: BenchSamples['cpu'], steps: number): Record<string, Record<string, number>> {
  return Object.fromEntries(Object.entries(cpu).map(([who, used]) => [who, Object.fromEntries([...used].map(([name, ms]) => [name, round(ms / steps)]))]));
}
