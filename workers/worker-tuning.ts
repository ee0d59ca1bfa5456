import type { WorkerOptions } from '@temporalio/worker';
import { z } from 'zod';
import { DEFAULT_V8_INTERRUPT_BUDGET } from './v8-tiering';

/**
 * Defaults measured with `npm run bench:concurrency` (docs/scale-out.md,
 * "Worker tuning"): what one worker process may hold and run at once.
 */
export const WORKER_TUNING_DEFAULTS = {
  maxCachedWorkflows: 150,
  maxConcurrentWorkflowTasks: 40,
  maxConcurrentActivities: 100,
  maxConcurrentLocalActivities: 100,
  stickyQueueTimeoutMs: 10_000,
  shutdownGraceMs: 0,
  workflowStackTraces: false,
  deadlockCheck: 'activation',
  v8InterruptBudget: DEFAULT_V8_INTERRUPT_BUDGET,
} as const;

const SLOT_FIELDS = ['maxConcurrentWorkflowTasks', 'maxConcurrentActivities', 'maxConcurrentLocalActivities'] as const;

/** The worker's cache and task slots: fixed counts, or the SDK's resource-based tuner when both of its targets are set. */
export const WorkerTuning = z.object({
  /** Sessions kept in memory between workflow tasks; an evicted one is replayed from its history on its next task. 0: no cache. */
  maxCachedWorkflows: z
    .number()
    .int()
    .min(0)
    .refine((n) => n !== 1, 'must be 0 (no cache) or at least 2')
    .default(WORKER_TUNING_DEFAULTS.maxCachedWorkflows),
  /** Workflow tasks (session activations) run at once. */
  maxConcurrentWorkflowTasks: z.number().int().min(2).default(WORKER_TUNING_DEFAULTS.maxConcurrentWorkflowTasks),
  /** Activities (model calls, tools that are not local, archive, memory) run at once. */
  maxConcurrentActivities: z.number().int().positive().default(WORKER_TUNING_DEFAULTS.maxConcurrentActivities),
  /** Local activities (short read-only tools) run at once. */
  maxConcurrentLocalActivities: z.number().int().positive().default(WORKER_TUNING_DEFAULTS.maxConcurrentLocalActivities),
  /**
   * How long a session's next workflow task waits on this worker's own (sticky) queue before any
   * worker may take it: after a worker dies, its sessions pause this long once. Lower it to fail
   * over faster; too low and a busy worker hands its sessions to others, which then replay them.
   */
  stickyQueueTimeoutMs: z.number().int().min(1_000, 'must be at least 1000 ms').default(WORKER_TUNING_DEFAULTS.stickyQueueTimeoutMs),
  /**
   * On SIGTERM, how long running activities may go on before they are cancelled (and retried on
   * another worker). 0 cancels them at once: a side-effecting tool with one attempt then fails.
   */
  shutdownGraceMs: z.number().int().min(0).default(WORKER_TUNING_DEFAULTS.shutdownGraceMs),
  /**
   * Keep the SDK's stack trace of every workflow promise (the Web UI's "Stack Trace" tab, stacks on
   * errors thrown in workflow code). Off, workflow tasks skip that work (workflows/stack-trace-limit.ts).
   * Applies where the worker bundles the workflows; a prebuilt bundle keeps what it was built with.
   */
  workflowStackTraces: z.boolean().default(WORKER_TUNING_DEFAULTS.workflowStackTraces),
  /**
   * How workflow code that never yields is caught (it fails its workflow task after the SDK's
   * `isolateExecutionTimeout`, 5 s, either way). `activation`: one watchdog around each activation,
   * and no promise hook while stack traces are off (workers/sandbox/). `call`: the SDK's own
   * workflow threads, unchanged, with a watchdog thread for every call into the sandbox.
   */
  deadlockCheck: z.enum(['activation', 'call']).default(WORKER_TUNING_DEFAULTS.deadlockCheck),
  /**
   * V8's budget before code is optimized (`--interrupt-budget`), set for the whole worker process
   * when the worker is created (workers/v8-tiering.ts). 0 leaves V8's default.
   */
  v8InterruptBudget: z.number().int().min(0).max(1_000_000_000).default(WORKER_TUNING_DEFAULTS.v8InterruptBudget),
  /** Resource-based tuner: the share of the machine's memory (0-1] the worker hands out slots up to. */
  tunerTargetMemoryUsage: z.number().gt(0).max(1).optional(),
  /** Resource-based tuner: the share of the machine's CPU (0-1] the worker hands out slots up to. */
  tunerTargetCpuUsage: z.number().gt(0).max(1).optional(),
});
export type WorkerTuning = z.infer<typeof WorkerTuning>;

/** A problem with one field of a parsed WorkerTuning, found across fields. */
export interface WorkerTuningProblem {
  field: keyof WorkerTuning;
  message: string;
}

const usesTuner = (t: WorkerTuning): boolean => t.tunerTargetMemoryUsage !== undefined || t.tunerTargetCpuUsage !== undefined;

/**
 * What the SDK would otherwise refuse at worker start or quietly change:
 * `given` lists the fields set explicitly (not defaulted), since the tuner
 * excludes slot counts only when someone asked for both.
 */
export function workerTuningProblems(t: WorkerTuning, given: readonly string[]): WorkerTuningProblem[] {
  const problems: WorkerTuningProblem[] = [];
  if (usesTuner(t)) {
    if (t.tunerTargetMemoryUsage === undefined) problems.push({ field: 'tunerTargetMemoryUsage', message: 'is required when WORKER_TUNER_TARGET_CPU_USAGE is set' });
    if (t.tunerTargetCpuUsage === undefined) problems.push({ field: 'tunerTargetCpuUsage', message: 'is required when WORKER_TUNER_TARGET_MEMORY_USAGE is set' });
    for (const field of SLOT_FIELDS) {
      if (given.includes(field)) problems.push({ field, message: 'cannot be set together with the resource-based tuner (WORKER_TUNER_TARGET_*), which sizes the slots itself' });
    }
  } else if (t.maxCachedWorkflows > 0 && t.maxConcurrentWorkflowTasks > t.maxCachedWorkflows) {
    // The SDK would silently lower it: a workflow task runs only for a session it can cache.
    problems.push({
      field: 'maxConcurrentWorkflowTasks',
      message: `is above worker.maxCachedWorkflows (${t.maxConcurrentWorkflowTasks} > ${t.maxCachedWorkflows}); each running workflow task needs its session cached`,
    });
  }
  return problems;
}

/** The Temporal worker options for a parsed WorkerTuning. */
export function workerTuningOptions(t: WorkerTuning): Partial<WorkerOptions> {
  const sticky = { stickyQueueScheduleToStartTimeout: t.stickyQueueTimeoutMs, shutdownGraceTime: t.shutdownGraceMs };
  if (t.tunerTargetMemoryUsage !== undefined && t.tunerTargetCpuUsage !== undefined) {
    return {
      ...sticky,
      maxCachedWorkflows: t.maxCachedWorkflows,
      tuner: { tunerOptions: { targetMemoryUsage: t.tunerTargetMemoryUsage, targetCpuUsage: t.tunerTargetCpuUsage } },
    };
  }
  return {
    ...sticky,
    maxCachedWorkflows: t.maxCachedWorkflows,
    maxConcurrentWorkflowTaskExecutions: t.maxConcurrentWorkflowTasks,
    maxConcurrentActivityTaskExecutions: t.maxConcurrentActivities,
    maxConcurrentLocalActivityExecutions: t.maxConcurrentLocalActivities,
  };
}

/** Heap a worker needs besides its cached sessions (after a full GC, models loaded; bench:concurrency). */
export const WORKER_BASE_HEAP_MB = 180;
/** Heap an idle cached session of a few turns holds (bench:concurrency; longer sessions hold more). */
export const CACHED_SESSION_HEAP_MB = 1.5;

/**
 * A warning when a full cache of sessions would not fit this process's heap
 * limit with room to spare: V8 would then run out of memory and the worker
 * crash (and, restarted, fill its cache and crash again). npm run worker
 * sets the limit from WORKER_HEAP_MB (default 512; docs/scale-out.md).
 */
export function heapWarning(maxCachedWorkflows: number, heapLimitBytes: number): string | undefined {
  const limitMb = Math.floor(heapLimitBytes / 1_048_576);
  const needMb = Math.ceil(WORKER_BASE_HEAP_MB + maxCachedWorkflows * CACHED_SESSION_HEAP_MB);
  // A quarter of the limit is left for the garbage of the sessions running at once.
  if (needMb <= limitMb * 0.75) return undefined;
  return (
    `a full cache of ${maxCachedWorkflows} sessions needs about ${needMb} MB of heap (${WORKER_BASE_HEAP_MB} MB + ${CACHED_SESSION_HEAP_MB} MB a session, more for long ones), ` +
    `close to or over this process's limit of ${limitMb} MB: raise the limit (WORKER_HEAP_MB for npm run worker, else node --max-old-space-size) ` +
    `to at least ${Math.ceil(needMb / 0.75)} MB, or lower WORKER_MAX_CACHED_WORKFLOWS`
  );
}
