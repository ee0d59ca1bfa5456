import type { TextDeltasInput } from './session-types';

/** Where the stream of one model call's text stands. */
interface Cursor {
  turnId: string;
  step: number;
  attempt: number;
  seq: number;
}

/**
 * Decides which batches of streamed text reach the event stream: only those
 * of the running turn's current step, newest attempt, in order and once. A
 * batch that fails any of these is dropped with a reason.
 */
export class DeltaGate {
  private cursor: Cursor = { turnId: '', step: 0, attempt: 0, seq: 0 };

  /** Returns null when the signalled batch may be published, else why not. */
  admit(input: TextDeltasInput, running: { turnId: string; step: number } | null): string | null {
    if (!running || running.turnId !== input.turnId) return `text deltas for ${input.turnId}, which is not the running turn`;
    if (running.step !== input.step) return `text deltas for step ${input.step} of ${input.turnId}, which is at step ${running.step}`;
    const c = this.cursor;
    if (c.turnId === input.turnId && c.step === input.step) {
      if (input.attempt < c.attempt) return `text deltas from attempt ${input.attempt}, older than attempt ${c.attempt}`;
      if (input.attempt === c.attempt && input.seq <= c.seq) return `text delta batch ${input.seq} of attempt ${input.attempt} arrived already`;
    }
    this.cursor = { turnId: input.turnId, step: input.step, attempt: input.attempt, seq: input.seq };
    return null;
  }

  /** The model call's result carried the last deltas: nothing signalled later for that attempt is taken. */
  close(turnId: string, step: number, attempt: number): void {
    this.cursor = { turnId, step, attempt, seq: Number.MAX_SAFE_INTEGER };
  }
}

/** A tool call that is running now, and the last progress signal taken from it. */
interface RunningCall {
  turnId: string;
  toolName: string;
  step: number;
  seq: number;
}

/**
 * Decides which `toolProgress` signals become events: only those of a call
 * that is running now, in order, once. The tool's name and step come from
 * the workflow's own record of the call, never from the signal.
 */
export class ToolProgressGate {
  private readonly running = new Map<string, RunningCall>();

  started(turnId: string, toolCallId: string, toolName: string, step: number): void {
    this.running.set(toolCallId, { turnId, toolName, step, seq: 0 });
  }

  finished(toolCallId: string): void {
    this.running.delete(toolCallId);
  }

  /** The running call with this id, if any (its turn, name and step, as the workflow recorded them). */
  call(toolCallId: string): Readonly<Omit<RunningCall, 'seq'>> | undefined {
    return this.running.get(toolCallId);
  }

  /** The call's name and step when the signal may be published, else why not. */
  admit(input: { turnId: string; toolCallId: string; seq: number }): { toolName: string; step: number } | string {
    const call = this.running.get(input.toolCallId);
    if (!call || call.turnId !== input.turnId) return `progress for ${input.toolCallId}, which is not running`;
    if (input.seq <= call.seq) return `progress ${input.seq} of ${input.toolCallId} arrived already`;
    call.seq = input.seq;
    return { toolName: call.toolName, step: call.step };
  }
}
