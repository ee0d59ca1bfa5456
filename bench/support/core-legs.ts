import { native } from '@temporalio/core-bridge';
import { coresdk } from '@temporalio/proto';
import { median, round } from './stats';

/*
 * `bench:loop -- --legs`: where a step's time goes, leg by leg, for the
 * session and the floor alike. The worker and the SDK core talk through a
 * handful of native functions (poll and complete a workflow activation, poll
 * and complete an activity task, local ones included). Wrapped, they give the
 * moment each activation and task reaches the worker and the moment the
 * worker hands back its answer; the time between two such moments of one run
 * is a leg. A leg from a hand-back to the next arrival is the SDK core, the
 * server and the queues between them; the others are the worker's own.
 *
 * Each moment also notes how long the process's main thread had been busy
 * so far (its event loop's active time), so a leg says how much of it the
 * main thread spent working (`legs_main_thread_ms`): a leg the main thread
 * was mostly idle through waited on something else (the server, the model's
 * process, another thread, a core).
 *
 * This wraps functions of `@temporalio/core-bridge` that are not public API
 * (the pinned SDK version is the one it was written against), decodes every
 * activation and task once more (a few µs each, paid by both contenders),
 * and is on only when asked for.
 */

/** `busy`: ms the main thread's event loop had been active when the moment was noted. */
type Moment = { at: number; what: string; busy: number };

const mainThreadBusy = (): number => performance.eventLoopUtilization().active;

/** Names a leg's ends alike for the session and the floor: the model call's activity and the tool's local one. */
function kindOf(activityType: string, local: boolean): string {
  if (local) return activityType === 'executeTool' || activityType === 'floorNoop' ? 'tool' : `local ${activityType}`;
  return activityType === 'callModel' || activityType === 'floorNoop' ? 'model' : activityType;
}

function jobsOf(activation: coresdk.workflow_activation.IWorkflowActivation): string {
  const names = (activation.jobs ?? []).map((job) => {
    if (job.resolveActivity) return job.resolveActivity.isLocal ? 'tool/local result' : 'activity result';
    const set = Object.entries(job).find(([key, value]) => key !== 'toJSON' && value != null);
    return set ? set[0] : 'job';
  });
  return names.join(', ');
}

export class CoreLegs {
  private readonly queues = new WeakMap<object, string>();
  /** Per task queue, per run: the moments in order. */
  private readonly runs = new Map<string, Map<string, Moment[]>>();
  /** An activity task's run, by task token, until the task is completed. */
  private readonly taskRuns = new Map<string, { run: string; what: string }>();

  /** Wraps the native functions; call before any worker is created. */
  install(): void {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- replacing native functions of any signature
    const n = native as unknown as Record<string, (...args: any[]) => unknown>;
    const newWorker = n.newWorker as (client: unknown, options: { taskQueue: string }) => object;
    n.newWorker = (client: unknown, options: unknown) => {
      const worker = newWorker(client, options as { taskQueue: string });
      this.queues.set(worker, (options as { taskQueue: string }).taskQueue);
      return worker;
    };
    const pollActivation = n.workerPollWorkflowActivation as (worker: object) => Promise<Buffer>;
    n.workerPollWorkflowActivation = async (worker: object) => {
      const buffer = await pollActivation(worker);
      const at = performance.now();
      this.safely(() => {
        const activation = coresdk.workflow_activation.WorkflowActivation.decode(buffer);
        this.note(worker, activation.runId, at, `activation (${jobsOf(activation)})`);
      });
      return buffer;
    };
    const completeActivation = n.workerCompleteWorkflowActivation as (worker: object, result: Buffer) => Promise<void>;
    n.workerCompleteWorkflowActivation = (worker: object, result: Buffer) => {
      const at = performance.now();
      this.safely(() => {
        const completion = coresdk.workflow_completion.WorkflowActivationCompletion.decodeDelimited(result);
        this.note(worker, completion.runId, at, 'activation done');
      });
      return completeActivation(worker, result);
    };
    const pollTask = n.workerPollActivityTask as (worker: object) => Promise<Buffer>;
    n.workerPollActivityTask = async (worker: object) => {
      const buffer = await pollTask(worker);
      const at = performance.now();
      this.safely(() => {
        const task = coresdk.activity_task.ActivityTask.decode(buffer);
        const run = task.start?.workflowExecution?.runId;
        if (task.start && run) {
          const what = kindOf(task.start.activityType ?? '', task.start.isLocal === true);
          this.taskRuns.set(Buffer.from(task.taskToken ?? []).toString('base64'), { run, what });
          this.note(worker, run, at, `${what} task`);
        }
      });
      return buffer;
    };
    const completeTask = n.workerCompleteActivityTask as (worker: object, result: Buffer) => Promise<void>;
    n.workerCompleteActivityTask = (worker: object, result: Buffer) => {
      const at = performance.now();
      this.safely(() => {
        const completion = coresdk.ActivityTaskCompletion.decodeDelimited(result);
        const token = Buffer.from(completion.taskToken ?? []).toString('base64');
        const task = this.taskRuns.get(token);
        this.taskRuns.delete(token);
        if (task) this.note(worker, task.run, at, `${task.what} done`);
      });
      return completeTask(worker, result);
    };
  }

  /** Timing never breaks the worker: a buffer it cannot read is a moment missed, counted in `missed`. */
  private safely(look: () => void): void {
    try {
      look();
    } catch {
      this.missed += 1;
    }
  }

  /** Moments not noted because their buffer could not be decoded. */
  missed = 0;

  private note(worker: object, run: string, at: number, what: string): void {
    const queue = this.queues.get(worker) ?? 'unknown';
    let runs = this.runs.get(queue);
    if (!runs) this.runs.set(queue, (runs = new Map()));
    let moments = runs.get(run);
    if (!moments) runs.set(run, (moments = []));
    moments.push({ at, what, busy: mainThreadBusy() });
  }

  /** Forgets what was seen so far: the warm-up turns. */
  reset(): void {
    this.runs.clear();
    this.missed = 0;
  }

  /** Each leg of a task queue's runs (`from -> to`): its durations in ms, and the main thread's busy ms in each. */
  legs(taskQueue: string): Map<string, { ms: number[]; busy: number[] }> {
    const out = new Map<string, { ms: number[]; busy: number[] }>();
    for (const moments of this.runs.get(taskQueue)?.values() ?? []) {
      for (let i = 1; i < moments.length; i++) {
        const [from, to] = [moments[i - 1] as Moment, moments[i] as Moment];
        const key = `${from.what} -> ${to.what}`;
        let leg = out.get(key);
        if (!leg) out.set(key, (leg = { ms: [], busy: [] }));
        leg.ms.push(to.at - from.at);
        leg.busy.push(to.busy - from.busy);
      }
    }
    return out;
  }
}

/** The legs a step of both contenders goes through, in order, and each one's median per contender. */
export const STEP_LEGS = [
  'activation (activity result) -> activation done',
  'activation done -> tool task',
  'tool task -> tool done',
  'tool done -> activation (tool/local result)',
  'activation (tool/local result) -> activation done',
  'activation done -> model task',
  'model task -> model done',
  'model done -> activation (activity result)',
] as const;

/** Each step leg's median duration, and the median of the main thread's busy ms in it. */
export interface LegMedians {
  ms: Record<string, number | null>;
  mainThread: Record<string, number | null>;
}

export function legMedians(legs: Map<string, { ms: number[]; busy: number[] }>): LegMedians {
  const of = (pick: 'ms' | 'busy'): Record<string, number | null> =>
    Object.fromEntries(STEP_LEGS.map((leg) => {
      const values = legs.get(leg)?.[pick] ?? [];
      return [leg, values.length > 0 ? round(median(values)) : null];
    }));
  return { ms: of('ms'), mainThread: of('busy') };
}
