import type { InputAction, InputAnsweredBy, InputContent, InputState, PendingInput } from './input-request';
import { INPUT_LIMITS } from './input-request';

/** The running tool calls, as the workflow knows them (see `ToolProgressGate.call`). */
export interface RunningCalls {
  call(toolCallId: string): { turnId: string; toolName: string; step: number } | undefined;
}

export interface InputAnswer {
  action: InputAction;
  content?: InputContent;
  answeredBy: InputAnsweredBy;
}

interface InputEntry {
  pending: PendingInput;
  /** The step of the call that asked: a model may reuse a call id in a later step, which is another call. */
  step: number;
  answer?: InputAnswer;
}

/**
 * The questions servers asked during tool calls, and their answers, for as
 * long as the call that asked is running. A retried attempt of the call (a
 * new worker after a crash) asks again under the same input id and finds the
 * question still open, or already answered: nobody is asked twice, and no
 * answer is lost. Once the call has ended its questions are forgotten, so a
 * later call that reuses the id starts afresh.
 */
export class InputBook {
  private readonly entries = new Map<string, InputEntry>();

  constructor(private readonly calls: RunningCalls) {}

  /** True while the call that asked is the one running under its id. */
  private live(entry: InputEntry): boolean {
    const call = this.calls.call(entry.pending.toolCallId);
    return call !== undefined && call.turnId === entry.pending.turnId && call.step === entry.step;
  }

  /** Drops the questions of calls that have ended. */
  prune(): void {
    for (const [id, entry] of this.entries) if (!this.live(entry)) this.entries.delete(id);
  }

  has(inputId: string): boolean {
    const entry = this.entries.get(inputId);
    return entry !== undefined && this.live(entry);
  }

  add(pending: PendingInput, step: number): boolean {
    this.prune();
    if (this.entries.size >= INPUT_LIMITS.remembered) return false;
    this.entries.set(pending.inputId, { pending, step });
    return true;
  }

  /** The question when it is open (asked by a running call, not answered yet). */
  open(inputId: string): PendingInput | undefined {
    const entry = this.entries.get(inputId);
    return entry && !entry.answer && this.live(entry) ? entry.pending : undefined;
  }

  answer(inputId: string, answer: InputAnswer): void {
    const entry = this.entries.get(inputId);
    if (entry && !entry.answer) entry.answer = answer;
  }

  answered(inputId: string): InputAnswer | undefined {
    return this.entries.get(inputId)?.answer;
  }

  /** Whether the wait for this question is over: answered, or its call ended. */
  settled(inputId: string): boolean {
    const entry = this.entries.get(inputId);
    return !entry || entry.answer !== undefined || !this.live(entry);
  }

  forget(inputId: string): void {
    this.entries.delete(inputId);
  }

  state(inputId: string): InputState {
    const entry = this.entries.get(inputId);
    if (!entry || !this.live(entry)) return { state: 'unknown' };
    if (!entry.answer) return { state: 'pending', expiresAt: entry.pending.expiresAt };
    return { state: 'answered', ...entry.answer };
  }

  pendingInputs(): PendingInput[] {
    return [...this.entries.values()].filter((e) => !e.answer && this.live(e)).map((e) => e.pending);
  }
}
