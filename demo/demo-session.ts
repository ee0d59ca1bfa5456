import type { AgentClient } from '../client/agent-client';
import type { EventRenderer } from '../client/chat/render-events';
import { SessionFeed } from '../client/chat/session-feed';
import type { AgentEvent } from '../workflows/events';
import type { PendingConfirmation, SessionOptionsInput, TurnOutcome } from '../workflows/session-types';
import { DEMO_MESSAGES } from './demo-script';

export type Decide = (confirmation: PendingConfirmation) => Promise<{ approved: boolean; reason?: string }>;

export interface DemoSessionInput {
  agent: AgentClient;
  options: SessionOptionsInput & { sessionId: string };
  renderer: EventRenderer;
  /** Prints a line of narration between the session's own output. */
  narrate: (line: string) => void;
  decide: Decide;
  /** Scripted runs check every beat of the demo; a real model is only held to finishing its turns. */
  strict: boolean;
  /** How long the story streams before the demo interrupts it. */
  interruptAfterMs?: number;
  turnTimeoutMs?: number;
}

export interface DemoSessionResult {
  /** Beats the run did not show; empty on success. */
  problems: string[];
  /** Things worth saying that are not failures (a real model chose another path). */
  notes: string[];
  /** The session's event feed, once the first message started the session. */
  feed: SessionFeed | null;
}

interface TurnRecord {
  turnId: string;
  outcome: TurnOutcome;
  text: string;
  events: AgentEvent[];
}

/** The turn an event belongs to; a decision is matched to its turn through the call it decides. */
function turnOf(event: AgentEvent, callTurns: Map<string, string>): string | undefined {
  if (event.type === 'confirmation_required') return event.confirmation.turnId;
  if (event.type === 'input_required') return event.input.turnId;
  if (event.type === 'confirmation_decided') return callTurns.get(event.toolCallId);
  return event.turnId;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Plays the demo conversation on one session: parallel tools, a write, a
 * destructive call held for confirmation, and an interrupted answer. The
 * events are rendered as they arrive by the feed's `onEvent`.
 */
export async function runDemoSession(input: DemoSessionInput): Promise<DemoSessionResult> {
  const { agent, options, renderer, narrate } = input;
  const { sessionId } = options;
  const turnTimeoutMs = input.turnTimeoutMs ?? 60_000;
  const problems: string[] = [];
  const notes: string[] = [];
  const decisions: Array<Promise<void>> = [];
  const verdicts = new Map<string, boolean>();

  const onConfirmation = (confirmation: PendingConfirmation): void => {
    const decided = input
      .decide(confirmation)
      .then(async ({ approved, reason }) => {
        verdicts.set(confirmation.toolCallId, approved);
        narrate(`  (demo: ${approved ? 'approving' : 'denying'} with client.${approved ? 'approve' : 'deny'}(sessionId, toolCallId))`);
        await (approved ? agent.approve(sessionId, confirmation.toolCallId, reason) : agent.deny(sessionId, confirmation.toolCallId, reason));
      })
      .catch((err: unknown) => {
        problems.push(`deciding ${confirmation.toolName} failed: ${err instanceof Error ? err.message : String(err)}`);
      });
    decisions.push(decided);
  };

  let feed: SessionFeed | null = null;
  const startFeed = (): SessionFeed =>
    new SessionFeed(agent, sessionId, {
      onEvent: (event) => {
        renderer.render(event);
        if (event.type === 'confirmation_required') onConfirmation(event.confirmation);
      },
    });

  const turn = async (text: string, whileRunning?: (turnId: string, feed: SessionFeed) => Promise<void>): Promise<TurnRecord> => {
    narrate('');
    narrate(`you › ${text}`);
    const { turnId } = await agent.send(options, { text });
    feed ??= startFeed();
    const current = feed;
    if (whileRunning) await whileRunning(turnId, current);
    const done = await current.waitFor((e) => e.type === 'turn_completed' && e.turnId === turnId, {
      timeoutMs: turnTimeoutMs,
      what: `end of ${turnId}`,
    });
    const callTurns = new Map(current.events.flatMap((e) => (e.type === 'tool_call_start' ? [[e.toolCallId, e.turnId] as const] : [])));
    const events = current.events.filter((e) => turnOf(e, callTurns) === turnId);
    const outcome = done.type === 'turn_completed' ? done.outcome : 'failed';
    if (outcome === 'failed') {
      // The rest of the demo builds on this turn: stop here and say why.
      const error = events.find((e) => e.type === 'error');
      throw new Error(`${turnId} ("${text}") failed${error?.type === 'error' ? `: ${error.errorType}: ${error.message}` : ''}`);
    }
    return { turnId, outcome, text: done.type === 'turn_completed' ? done.text : '', events };
  };

  const check = (ok: boolean, beat: string): void => {
    if (ok) return;
    (input.strict ? problems : notes).push(beat);
  };

  // 1. Two tool calls in one model response, run in parallel.
  const times = await turn(DEMO_MESSAGES.times);
  const starts = times.events.filter((e) => e.type === 'tool_call_start');
  const sameStep = starts.filter((e) => e.type === 'tool_call_start' && e.toolName === 'local_current_time');
  const steps = new Set(sameStep.map((e) => (e.type === 'tool_call_start' ? e.step : -1)));
  check(sameStep.length >= 2 && steps.size === 1, 'the model did not ask for both clocks in one response');
  check(times.events.filter((e) => e.type === 'tool_call_result' && e.ok).length >= 2, 'the clock tools did not both succeed');
  if (problems.length > 0) return { problems, notes, feed };

  // 2. A write tool, with "tomorrow" resolved from the conversation.
  const book = await turn(DEMO_MESSAGES.book);
  check(
    book.events.some((e) => e.type === 'tool_call_result' && e.toolName === 'local_create_meeting' && e.ok),
    'no meeting was created',
  );

  // 3. A destructive tool: held for confirmation, run only once approved.
  const cancel = await turn(DEMO_MESSAGES.cancel);
  check(
    cancel.events.some((e) => e.type === 'confirmation_required' && e.confirmation.toolName === 'local_cancel_meeting'),
    'cancelling asked for no confirmation',
  );
  const cancelResult = cancel.events.find((e) => e.type === 'tool_call_result' && e.toolName === 'local_cancel_meeting');
  if (cancelResult?.type === 'tool_call_result' && verdicts.get(cancelResult.toolCallId) === false) {
    // A person said no: then the point is that the tool never ran.
    check(cancelResult.errorType === 'ToolDeclined', 'a declined cancellation was not reported as declined');
  } else {
    check(cancelResult?.type === 'tool_call_result' && cancelResult.ok, 'the meeting was not cancelled');
  }

  // 4. A long streamed answer, interrupted mid-way.
  const interruptAfterMs = input.interruptAfterMs ?? 1_000;
  let streamedMs = 0;
  const story = await turn(DEMO_MESSAGES.story, async (turnId, current) => {
    // The last turn: stop reading once it ends, so no poll is left parked when the session is ended.
    current.closeAfter((e) => e.type === 'turn_completed' && e.turnId === turnId);
    await current.waitFor((e) => e.type === 'text_delta' && e.turnId === turnId, { timeoutMs: turnTimeoutMs, what: 'streamed text' });
    const firstDeltaAt = Date.now();
    await sleep(interruptAfterMs);
    streamedMs = Date.now() - firstDeltaAt;
    await agent.interrupt(sessionId, 'the demo pressed stop');
  });
  if (story.outcome === 'interrupted') {
    narrate(
      `  (demo: client.interrupt() was sent ${(streamedMs / 1000).toFixed(1)} s into the answer; ` +
        `the partial answer, ${story.text.length} characters, is kept in the session marked [interrupted])`,
    );
  }
  check(story.outcome === 'interrupted', `the story was not interrupted (outcome ${story.outcome})`);
  check(story.text.length > 0, 'the interrupted story kept no partial text');

  await Promise.all(decisions);
  return { problems, notes, feed };
}
