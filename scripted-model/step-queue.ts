import type { ChatRequest } from './chat-request';
import { explainMismatch } from './matcher';
import type { ScriptedStep } from './scenario';

interface QueuedStep {
  step: ScriptedStep;
  /** 1-based position in the lane's script, stable across `script()` calls. */
  position: number;
  remaining: number;
}

interface Lane {
  queue: QueuedStep[];
  scripted: number;
}

export type TakeResult =
  | { kind: 'step'; step: ScriptedStep; stepName: string }
  | { kind: 'unexpected'; reason: string };

export interface PendingStep {
  lane: string;
  description: string;
  remaining: number;
}

export function describeStep(step: ScriptedStep, position: number): string {
  return step.name === undefined ? `step #${position}` : `step #${position} "${step.name}"`;
}

/**
 * One strict FIFO of steps per lane. Only the head may answer: a script is
 * a claim about the order of model calls, and letting a later step match
 * would hide exactly the reordering bugs the tests exist to catch.
 */
export class StepQueues {
  private readonly lanes = new Map<string, Lane>();

  append(lane: string, steps: readonly ScriptedStep[]): void {
    const entry = this.lane(lane);
    for (const step of steps) {
      entry.scripted += 1;
      entry.queue.push({ step, position: entry.scripted, remaining: step.times ?? 1 });
    }
  }

  take(lane: string, request: ChatRequest): TakeResult {
    const entry = this.lane(lane);
    const head = entry.queue[0];
    if (head === undefined) {
      return {
        kind: 'unexpected',
        reason: `expected no more requests on lane "${lane}" (all ${entry.scripted} scripted steps consumed)`,
      };
    }
    const mismatch = explainMismatch(head.step.match, request);
    if (mismatch !== undefined) {
      return { kind: 'unexpected', reason: `expected ${describeStep(head.step, head.position)} but ${mismatch}` };
    }
    head.remaining -= 1;
    if (head.remaining === 0) entry.queue.shift();
    return { kind: 'step', step: head.step, stepName: head.step.name ?? `#${head.position}` };
  }

  pending(lane?: string): PendingStep[] {
    const names = lane === undefined ? [...this.lanes.keys()] : [lane];
    return names.flatMap((name) =>
      (this.lanes.get(name)?.queue ?? []).map((queued) => ({
        lane: name,
        description: describeStep(queued.step, queued.position),
        remaining: queued.remaining,
      })),
    );
  }

  clear(): void {
    this.lanes.clear();
  }

  private lane(name: string): Lane {
    let entry = this.lanes.get(name);
    if (entry === undefined) {
      entry = { queue: [], scripted: 0 };
      this.lanes.set(name, entry);
    }
    return entry;
  }
}
