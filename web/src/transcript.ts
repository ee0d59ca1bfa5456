import type { Activity, AgentEvent, PendingConfirmation, TurnOutcome } from './api-types';
import { exhausted } from './never';

/*
 * The chat as data: events in, a transcript out. Pure, so a page reloaded
 * mid-answer rebuilds exactly what it showed by replaying the stream from
 * offset 0, and an event seen twice (a resumed connection) changes nothing.
 */

export interface TextPart {
  kind: 'text';
  step: number;
  attempt: number;
  text: string;
  /** The runtime withdrew this answer (it cited a memory it was not given) and asked again. */
  withdrawn?: boolean;
}

export interface ToolPart {
  kind: 'tool';
  step: number;
  toolCallId: string;
  toolName: string;
  argumentsPreview: string;
  progress?: { progress: number; total?: number; message?: string };
  confirmation?: PendingConfirmation;
  decision?: { approved: boolean; reason?: string; decidedBy: 'user' | 'timeout' | 'interrupt'; by?: string };
  result?: { ok: boolean; preview: string; errorType?: string; durationMs: number; waitedMs?: number };
}

export interface InputPart {
  kind: 'input';
  inputId: string;
  toolCallId: string;
  server: string;
  message: string;
  answer?: string;
}

export interface NoticePart {
  kind: 'notice';
  tone: 'error' | 'info';
  title: string;
  message: string;
}

export type TurnPart = TextPart | ToolPart | InputPart | NoticePart;

export interface TurnView {
  turnId: string;
  parts: TurnPart[];
  outcome?: TurnOutcome;
  /** Memory ids recalled for this turn. */
  recalled?: { strong: string[]; weak: string[] };
  citationsRemoved?: boolean;
}

export interface Transcript {
  /** Highest offset applied; -1 before any. */
  lastOffset: number;
  turns: TurnView[];
  activity?: Activity;
  status?: string;
  /** Errors outside any turn (memory extraction, say). */
  sessionNotices: NoticePart[];
}

export const emptyTranscript = (): Transcript => ({ lastOffset: -1, turns: [], sessionNotices: [] });

/** Whether a turn is still running, as far as the events tell. */
export const isRunning = (t: Transcript): boolean => t.turns.some((turn) => turn.outcome === undefined);

const visibleText = (turn: TurnView): TextPart[] => turn.parts.filter((p): p is TextPart => p.kind === 'text' && !p.withdrawn && p.text !== '');

/** The answer of a turn as the person reads it: its text parts, joined as the runtime joins them. */
export const answerText = (turn: TurnView): string => visibleText(turn).map((p) => p.text).join('\n\n');

/** Applies one event at its offset; an offset already applied is ignored. */
export function applyEvent(t: Transcript, offset: number, e: AgentEvent): Transcript {
  if (offset <= t.lastOffset) return t;
  const next: Transcript = { ...t, lastOffset: offset };
  const withTurn = (turnId: string, change: (turn: TurnView) => TurnView): Transcript => {
    const index = next.turns.findIndex((x) => x.turnId === turnId);
    const turns = [...next.turns];
    if (index < 0) turns.push(change({ turnId, parts: [] }));
    else turns[index] = change(turns[index]!);
    return { ...next, turns };
  };
  const withTool = (turnId: string, toolCallId: string, change: (part: ToolPart) => ToolPart, create?: () => ToolPart, step?: number) =>
    withTurn(turnId, (turn) => {
      // Models may reuse a call id in a later step: a call of another step is a card of its own, and an
      // event that names no step means the newest card with the id.
      const index = turn.parts.findLastIndex((p) => p.kind === 'tool' && p.toolCallId === toolCallId && (step === undefined || p.step === step));
      const parts = [...turn.parts];
      if (index >= 0) parts[index] = change(parts[index] as ToolPart);
      else if (create) parts.push(change(create()));
      return { ...turn, parts };
    });
  const turnOfCall = (toolCallId: string): string | undefined =>
    [...next.turns].reverse().find((turn) => turn.parts.some((p) => p.kind === 'tool' && p.toolCallId === toolCallId))?.turnId;

  switch (e.type) {
    case 'text_delta':
      return withTurn(e.turnId, (turn) => {
        const parts = [...turn.parts];
        const index = parts.findLastIndex((p) => p.kind === 'text' && p.step === e.step);
        const part = parts[index] as TextPart | undefined;
        if (!part) parts.push({ kind: 'text', step: e.step, attempt: e.attempt, text: e.delta });
        // A retried model call streams its answer again from the start.
        else if (e.attempt > part.attempt) parts[index] = { ...part, attempt: e.attempt, text: e.delta };
        else if (e.attempt === part.attempt) parts[index] = { ...part, text: part.text + e.delta };
        return { ...turn, parts };
      });
    case 'tool_call_start':
      return withTool(e.turnId, e.toolCallId, (p) => p, () => ({ kind: 'tool', step: e.step, toolCallId: e.toolCallId, toolName: e.toolName, argumentsPreview: e.argumentsPreview }), e.step);
    case 'tool_call_progress':
      return withTool(e.turnId, e.toolCallId, (p) => ({ ...p, progress: { progress: e.progress, ...(e.total !== undefined ? { total: e.total } : {}), ...(e.message ? { message: e.message } : {}) } }));
    case 'tool_call_result':
      return withTool(
        e.turnId,
        e.toolCallId,
        (p) => ({ ...p, result: { ok: e.ok, preview: e.preview, durationMs: e.durationMs, ...(e.errorType ? { errorType: e.errorType } : {}), ...(e.waitedMs !== undefined ? { waitedMs: e.waitedMs } : {}) } }),
        () => ({ kind: 'tool', step: e.step, toolCallId: e.toolCallId, toolName: e.toolName, argumentsPreview: '' }),
        e.step,
      );
    case 'confirmation_required': {
      const c = e.confirmation;
      return withTool(c.turnId, c.toolCallId, (p) => ({ ...p, confirmation: c }), () => ({ kind: 'tool', step: 0, toolCallId: c.toolCallId, toolName: c.toolName, argumentsPreview: '' }));
    }
    case 'confirmation_decided': {
      const turnId = turnOfCall(e.toolCallId);
      if (!turnId) return next;
      const by = e.principal ? `${e.principal.tenant}/${e.principal.user}` : undefined;
      return withTool(turnId, e.toolCallId, (p) => ({ ...p, decision: { approved: e.approved, decidedBy: e.decidedBy, ...(e.reason ? { reason: e.reason } : {}), ...(by ? { by } : {}) } }));
    }
    case 'input_required': {
      const i = e.input;
      return withTurn(i.turnId, (turn) => ({ ...turn, parts: [...turn.parts, { kind: 'input', inputId: i.inputId, toolCallId: i.toolCallId, server: i.server, message: i.message }] }));
    }
    case 'input_answered':
      return withTurn(e.turnId, (turn) => ({
        ...turn,
        parts: turn.parts.map((p) => (p.kind === 'input' && p.inputId === e.inputId ? { ...p, answer: `${e.action} (${e.answeredBy})` } : p)),
      }));
    case 'status_change': {
      const changed = { ...next, status: e.status, activity: e.activity };
      if (!e.turnId || e.activity === 'idle') return changed;
      // A turn is shown from its first sign of life, before any text.
      const known = changed.turns.some((x) => x.turnId === e.turnId);
      return known ? changed : { ...changed, turns: [...changed.turns, { turnId: e.turnId, parts: [] }] };
    }
    case 'turn_completed':
      return withTurn(e.turnId, (turn) => finishTurn(turn, e.outcome, e.text));
    case 'error': {
      const notice: NoticePart = { kind: 'notice', tone: 'error', title: e.errorType, message: e.message };
      if (!e.turnId) return { ...next, sessionNotices: [...next.sessionNotices, notice] };
      return withTurn(e.turnId, (turn) => ({ ...turn, parts: [...turn.parts, notice] }));
    }
    case 'memory_recalled':
      return withTurn(e.turnId, (turn) => ({ ...turn, recalled: { strong: e.strong, weak: e.weak } }));
    case 'citation_flagged':
      return withTurn(e.turnId, (turn) => {
        if (e.action === 'removed') return { ...turn, citationsRemoved: true };
        // The last answer is replaced by the one asked for again.
        const parts = [...turn.parts];
        for (let i = parts.length - 1; i >= 0; i--) {
          const p = parts[i]!;
          if (p.kind === 'text' && !p.withdrawn) {
            parts[i] = { ...p, withdrawn: true };
            break;
          }
        }
        const notice: NoticePart = { kind: 'notice', tone: 'info', title: 'Answer regenerated', message: `It cited memories it was not given (${e.unknownIds.join(', ')}); the model was asked again.` };
        return { ...turn, parts: [...parts, notice] };
      });
    default:
      // A newer server may send event types this console does not know yet: they are skipped.
      exhausted(e);
      return next;
  }
}

/**
 * The final answer is what was streamed, except where the runtime changed it
 * after streaming: citations stripped, or the step-limit note added. Then the
 * text the turn ended with wins for the last part.
 */
function finishTurn(turn: TurnView, outcome: TurnOutcome, text: string): TurnView {
  const done = { ...turn, outcome };
  const shown = visibleText(turn);
  const rewritten = turn.citationsRemoved || outcome === 'step_limit' || (shown.length === 0 && text !== '');
  if (!rewritten || answerText(turn) === text) return done;
  const last = shown[shown.length - 1];
  if (!last) return { ...done, parts: [...turn.parts, { kind: 'text', step: 0, attempt: 1, text }] };
  const earlier = shown.slice(0, -1).map((p) => p.text).join('\n\n');
  const prefix = earlier ? `${earlier}\n\n` : '';
  if (!text.startsWith(prefix)) return done;
  return { ...done, parts: turn.parts.map((p) => (p === last ? { ...last, text: text.slice(prefix.length) } : p)) };
}
