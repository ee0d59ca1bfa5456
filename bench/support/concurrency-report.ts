import { lostTurns, type BatchResult } from './concurrent-sessions';
import { median, percentile, round } from './stats';

/** CPU ms per step of each process. */
export function cpuPerStep(cpu: Map<string, number>, steps: number): Record<string, number> {
  return Object.fromEntries([...cpu].map(([name, ms]) => [name, round(ms / steps)]));
}

/** One phase's figures, steps timed as their turn's time over its steps. */
export function phaseFigures(batch: BatchResult, steps: number, singleMedian: number) {
  const stepMs = batch.turnMs.map((ms) => ms / steps);
  return {
    failures: batch.failures,
    lost_turns: lostTurns(batch.audit),
    unverified_turns: batch.audit.unverified,
    step_ms_p50: round(median(stepMs)),
    step_ms_p95: round(percentile(stepMs, 95)),
    p95_ratio: round(percentile(stepMs, 95) / singleMedian),
    steps_per_s: round((stepMs.length * steps) / (batch.wallMs / 1000), 1),
  };
}

type Phase = ReturnType<typeof phaseFigures> & { peak_rss_mb: number; wall_s: number; cpu_ms_per_step: Record<string, number> };

export type ConcurrencyFigures = Phase & {
  sessions: number;
  single_step_ms_median: number;
  single_cpu_ms_per_step: Record<string, number>;
  /** Null with a model that takes time (--model-ms): the sessions then wait on it side by side. */
  cpu_bound_step_ms: number | null;
  cores: number;
  /** The bare Temporal workflow of the same shape, alone and as many at once (bench/concurrency.ts `measureFloor`). */
  floor: { single_step_ms_median: number; step_ms_p50: number; step_ms_p95: number; p95_ratio: number; steps_per_s: number } | null;
  idle_rss_mb: number;
  warm_rss_mb: number;
  rss_per_cached_session_mb: number;
  heap_cached_mb: number;
  heap_empty_mb: number;
  heap_per_cached_session_mb: number;
  kill: Phase;
};

const cpuLine = (cpu: Record<string, number>): string =>
  `${Object.entries(cpu).map(([name, ms]) => `${name} ${ms.toFixed(1)}`).join(', ')} (total ${Object.values(cpu).reduce((a, b) => a + b, 0).toFixed(1)})`;

/** The human part of the report: the table, where the CPU went, the worker's memory and the event streams' verdicts. */
export function printConcurrencyReport(f: ConcurrencyFigures, batches: ReadonlyArray<readonly [string, BatchResult]>, out: (line: string) => void): void {
  const row = (name: string, p: Phase) =>
    out(
      `${name.padEnd(28)}${String(p.failures).padStart(9)}${String(p.lost_turns).padStart(6)}${p.step_ms_p50.toFixed(1).padStart(9)}${p.step_ms_p95.toFixed(1).padStart(9)}` +
        `${p.p95_ratio.toFixed(1).padStart(7)}x${p.steps_per_s.toFixed(0).padStart(8)}${p.peak_rss_mb.toFixed(0).padStart(9)}${p.wall_s.toFixed(1).padStart(8)}`,
    );
  out('');
  out(`${f.sessions} sessions at once; a single session's step median is ${f.single_step_ms_median} ms (p95/1 is the step p95 over it)`);
  out(`${''.padEnd(28)}${'failures'.padStart(9)}${'lost'.padStart(6)}${'step p50'.padStart(9)}${'step p95'.padStart(9)}${'p95/1'.padStart(8)}${'steps/s'.padStart(8)}${'peak MB'.padStart(9)}${'wall s'.padStart(8)}`);
  row('one worker', f);
  row('two workers, one SIGKILLed', f.kill);
  if (f.floor) {
    out(
      `${'bare floor, same shape'.padEnd(28)}${''.padStart(15)}${f.floor.step_ms_p50.toFixed(1).padStart(9)}${f.floor.step_ms_p95.toFixed(1).padStart(9)}` +
        `${f.floor.p95_ratio.toFixed(1).padStart(7)}x${f.floor.steps_per_s.toFixed(0).padStart(8)}   (its own single median ${f.floor.single_step_ms_median} ms)`,
    );
  }
  out('');
  out('CPU ms per step, by process:');
  out(`  single session  ${cpuLine(f.single_cpu_ms_per_step)}`);
  out(`  one worker      ${cpuLine(f.cpu_ms_per_step)}`);
  out(`  two workers     ${cpuLine(f.kill.cpu_ms_per_step)}`);
  if (f.cpu_bound_step_ms !== null) out(`  with ${f.sessions} sessions waiting on ${f.cores} cores, a step cannot take less than about ${f.cpu_bound_step_ms} ms at the single session's CPU cost`);
  out(`worker RSS: ${f.idle_rss_mb} MB idle after start, ${f.warm_rss_mb} MB after the single-session baseline, ${f.rss_per_cached_session_mb} MB per cached session at the peak`);
  out(
    `worker heap after a full GC: ${f.heap_cached_mb} MB with the ${f.sessions} sessions cached and idle, ${f.heap_empty_mb} MB once they ended: ` +
      `${f.heap_per_cached_session_mb} MB per cached session`,
  );
  for (const [name, batch] of batches) {
    const a = batch.audit;
    out(`event streams, ${name}: ${a.good} turns as scripted, ${a.missing} missing, ${a.duplicated} answered twice, ${a.incomplete} incomplete, ${a.unverified} unverified (stream unreadable)`);
    for (const error of batch.errors) out(`  failure: ${error}`);
  }
}
