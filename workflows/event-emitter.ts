import { ApplicationFailure, log, setHandler } from '@temporalio/workflow';
import { WorkflowStream, workflowStreamPollUpdate, workflowStreamPublishSignal } from '@temporalio/workflow-streams/workflow';
import type { PollInput, PollResult, WorkflowStreamState } from '@temporalio/workflow-streams/workflow';
import { defaultPayloadConverter, type Payload } from '@temporalio/common';
import { CarriedStateUnreadable } from './carried-state-check';
import { z } from 'zod';
import { AgentEvent } from './events';
import { describeZodError, invalidInput } from './input-guard';
import { EVENTS_TOPIC } from './messages';
import { nowIso } from './workflow-clock';
import { MAX_POLLS_PER_RUN, MAX_WAITING_POLLS, tooManyWaiting } from './waiting-budget';
import { payloadBytes } from './payload-budget';

type DistributiveOmit<T, K extends keyof never> = T extends unknown ? Omit<T, K> : never;
export type EventBody = DistributiveOmit<AgentEvent, 'sessionId' | 'at'>;

/** Encoded bytes one event may take on the stream; a larger one is a bug and is dropped, never published. */
export const MAX_EVENT_BYTES = 256_000;

const PollInputSchema = z.object({
  topics: z.array(z.string().max(256)).max(16),
  from_offset: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
});

/** What the emitter needs to tell the session about input it refused. */
export interface EmitterHooks {
  /** A signal was ignored (the library's publish signal, here). */
  onIgnoredSignal(reason: string): void;
  /** An event failed its own schema or size check and was not published. */
  onDroppedEvent(reason: string): void;
}

/**
 * Publishes the session's events on its workflow stream, stamped with
 * session id and workflow time. Every event is checked against `AgentEvent`
 * and a size bound before it goes on the stream, so a reader can never meet
 * one it cannot parse.
 *
 * The stream library registers a publish signal and a poll update of its
 * own. Publishing from outside is closed here (only the workflow publishes
 * events), and polls are checked before the library's handler sees them:
 * either could otherwise fail a workflow task with one malformed input.
 */
export class EventEmitter {
  readonly stream: WorkflowStream;
  private readonly topic;
  /** Polls waiting for events now, and polls this run has taken (handlers run on replay, so both replay alike). */
  private waitingPolls = 0;
  private pollsTaken = 0;

  /**
   * `legacyExternalPublish`: keep the library's publish signal open, as runs
   * recorded before it was closed had it (their replay depends on it).
   */
  constructor(
    private readonly sessionId: string,
    prior: WorkflowStreamState | undefined,
    private readonly hooks: EmitterHooks,
    legacyExternalPublish = false,
  ) {
    const ignorePublish = () => {
      log.warn('Ignoring an external publish to the event stream: only the session publishes its events');
      hooks.onIgnoredSignal('external publish to the event stream');
    };
    // Signals that arrived before this run's first task (sent during a continue-as-new, or with
    // signal-with-start) are handed to the first handler registered for them, at registration:
    // ours takes them here, or the library's constructor below would publish them.
    if (!legacyExternalPublish) setHandler(workflowStreamPublishSignal, ignorePublish);
    try {
      this.stream = new WorkflowStream(prior);
    } catch (err) {
      // The library reads the carried log (decoding each entry) before it registers anything.
      if (prior === undefined) throw err;
      throw new CarriedStateUnreadable(`the event stream's carried log could not be read (${err instanceof Error ? err.message : String(err)})`);
    }
    this.topic = this.stream.topic<AgentEvent>(EVENTS_TOPIC);
    if (legacyExternalPublish) return;
    setHandler(workflowStreamPublishSignal, ignorePublish);
    // The library's own handler, reached through its (TypeScript-private) method.
    // The library's own promise is returned as it was before the counting: an extra await would complete
    // each poll one microtask later, which could reorder it against other commands in histories from before.
    const poll = (input: PollInput): Promise<PollResult> => {
      this.pollsTaken += 1;
      this.waitingPolls += 1;
      const answered = this.stream['onPoll'](input);
      answered.then(
        () => void (this.waitingPolls -= 1),
        () => void (this.waitingPolls -= 1),
      );
      return answered;
    };
    setHandler(workflowStreamPollUpdate, poll, {
      validator: (raw: unknown) => {
        if (this.stream['draining']) {
          throw ApplicationFailure.create({ message: 'Workflow is draining for continue-as-new', type: 'StreamDraining', nonRetryable: true });
        }
        const parsed = PollInputSchema.safeParse(raw);
        if (!parsed.success) throw invalidInput(`Invalid stream poll input: ${describeZodError(parsed.error)}`);
        // Each waiting poll holds one of the server's in-flight updates (waiting-budget.ts).
        if (this.waitingPolls >= MAX_WAITING_POLLS) {
          throw tooManyWaiting(
            `Session ${this.sessionId} already has ${this.waitingPolls} event readers waiting, at most ${MAX_WAITING_POLLS}: the rest of the server's in-flight updates are kept for messages and decisions. Read the events with the readEvents query, or share one reader.`,
          );
        }
        if (this.pollsTaken >= MAX_POLLS_PER_RUN) {
          throw tooManyWaiting(
            `Session ${this.sessionId}'s run has answered ${this.pollsTaken} event polls, at most ${MAX_POLLS_PER_RUN} a run (the server caps a run's updates); it continues as new after its next turn. Read the events with the readEvents query until then.`,
          );
        }
      },
    });
  }

  /** The run has answered as many polls as it may (MAX_POLLS_PER_RUN): it should continue as new. */
  get pollBudgetSpent(): boolean {
    return this.pollsTaken >= MAX_POLLS_PER_RUN;
  }

  /**
   * Events from `fromOffset` on, at most `limit` of them and about
   * `maxBytes` of JSON (one at least): the `readEvents` query, for readers
   * that cannot wait on a poll. An offset the run no longer keeps reads from
   * the earliest it does.
   */
  read(fromOffset: number, limit: number, maxBytes: number): { items: Array<{ offset: number; event: AgentEvent }>; nextOffset: number; earliestOffset: number } {
    const { log: entries, baseOffset: base } = this.logged();
    const items: Array<{ offset: number; event: AgentEvent }> = [];
    let bytes = 0;
    let i = Math.max(fromOffset - base, 0);
    for (; i < entries.length && items.length < limit; i++) {
      const entry = entries[i];
      if (!entry || entry.topic !== EVENTS_TOPIC) continue;
      const event = defaultPayloadConverter.fromPayload<AgentEvent>(entry.payload);
      // UTF-8 bytes, as the answer travels: the server refuses a query answer over 2 MB.
      const size = payloadBytes(event);
      if (items.length > 0 && bytes + size > maxBytes) break;
      bytes += size;
      items.push({ offset: base + i, event });
    }
    return { items, nextOffset: base + i, earliestOffset: base };
  }

  emit(body: EventBody): void {
    this.publish({ ...body, sessionId: this.sessionId, at: nowIso() });
  }

  private publish(candidate: unknown): void {
    const parsed = AgentEvent.safeParse(candidate, { jitless: true });
    if (!parsed.success) {
      this.drop(`event does not match AgentEvent: ${describeZodError(parsed.error)}`);
      return;
    }
    let bytes: number;
    try {
      bytes = JSON.stringify(parsed.data).length;
    } catch (err) {
      this.drop(`event cannot be encoded: ${err instanceof Error ? err.message : String(err)}`);
      return;
    }
    if (bytes > MAX_EVENT_BYTES) {
      this.drop(`${parsed.data.type} event is ${bytes} bytes, over ${MAX_EVENT_BYTES}`);
      return;
    }
    this.topic.publish(parsed.data);
  }

  private drop(reason: string): void {
    log.error(`Dropping an event: ${reason}`);
    this.hooks.onDroppedEvent(reason);
  }

  /**
   * Text an activity streamed for one model step, read back from the log.
   * Used after an interrupt: the model activity flushes its deltas before it
   * acknowledges cancellation, so they are already in the log.
   */
  streamedText(turnId: string, step: number, newestAttemptOnly: () => boolean = () => false): string {
    const items = this.logged().log;
    const parts: Array<{ delta: string; attempt: number }> = [];
    for (let i = items.length - 1; i >= 0; i--) {
      const item = items[i];
      if (!item || item.topic !== EVENTS_TOPIC) continue;
      const event = defaultPayloadConverter.fromPayload<AgentEvent>(item.payload);
      if (event.type === 'turn_completed' || event.type === 'status_change') {
        if (event.turnId !== turnId) break;
        continue;
      }
      if (event.type === 'text_delta' && event.turnId === turnId && event.step === step) parts.push({ delta: event.delta, attempt: event.attempt });
    }
    parts.reverse();
    // A failed attempt's deltas are on the stream too (marked by attempt): the answer is the newest attempt's alone.
    // A loop, not Math.max(...): a step may have streamed more deltas than a call takes arguments.
    let newest = 0;
    for (const p of parts) if (p.attempt > newest) newest = p.attempt;
    const mixed = parts.some((p) => p.attempt !== newest);
    const kept = mixed && newestAttemptOnly() ? parts.filter((p) => p.attempt === newest) : parts;
    return kept.map((p) => p.delta).join('');
  }

  /**
   * The newest events, up to `maxBytes` of JSON, for the archive: what a
   * reader of the archived session is served. Offsets are the stream's.
   */
  forArchive(maxBytes: number): { nextOffset: number; items: Array<{ offset: number; json: string }> } {
    const { log: items, baseOffset: base } = this.logged();
    const kept: Array<{ offset: number; json: string }> = [];
    let bytes = 0;
    for (let i = items.length - 1; i >= 0; i--) {
      const item = items[i];
      if (!item || item.topic !== EVENTS_TOPIC) continue;
      const json = JSON.stringify(defaultPayloadConverter.fromPayload<AgentEvent>(item.payload));
      if (bytes + json.length > maxBytes) break;
      bytes += json.length;
      kept.push({ offset: base + i, json });
    }
    return { nextOffset: base + items.length, items: kept.reverse() };
  }

  /**
   * A restored run continues the archived run's offsets, so a reader's
   * Last-Event-ID stays meaningful across archive and restore. Only while
   * nothing is on this run's stream yet (offsets already handed out stay).
   */
  continueFrom(nextOffset: number): void {
    const stream = this.logged();
    if (stream.log.length === 0 && stream.baseOffset === 0) stream.baseOffset = nextOffset;
  }

  /**
   * The library's log as it holds it (TypeScript-private fields): each
   * entry's payload as published, and the offset of the first. Read
   * directly, because `getState()` (for continue-as-new) encodes every entry
   * to base64 wire form, which the readers above would only decode again:
   * about 15 ms of workflow CPU for a ten-turn session's archive.
   */
  private logged(): { log: ReadonlyArray<{ topic: string; payload: Payload }>; baseOffset: number } {
    return this.stream as unknown as { log: Array<{ topic: string; payload: Payload }>; baseOffset: number };
  }
}
