import { WorkflowStream, decodePayloadWire } from '@temporalio/workflow-streams/workflow';
import { defaultPayloadConverter } from '@temporalio/common';
import type { WorkflowStreamState } from '@temporalio/workflow-streams/workflow';
import type { AgentEvent } from './events';
import { EVENTS_TOPIC } from './messages';
import { nowIso } from './workflow-clock';

type DistributiveOmit<T, K extends keyof never> = T extends unknown ? Omit<T, K> : never;
export type EventBody = DistributiveOmit<AgentEvent, 'sessionId' | 'at'>;

/** Publishes the session's events on its workflow stream, stamped with session id and workflow time. */
export class EventEmitter {
  readonly stream: WorkflowStream;
  private readonly topic;

  constructor(private readonly sessionId: string, prior?: WorkflowStreamState) {
    this.stream = new WorkflowStream(prior);
    this.topic = this.stream.topic<AgentEvent>(EVENTS_TOPIC);
  }

  emit(body: EventBody): void {
    this.topic.publish({ ...body, sessionId: this.sessionId, at: nowIso() } as AgentEvent);
  }

  /** Publishes an event made elsewhere (a model activity's last text deltas) as it is. */
  relay(event: AgentEvent): void {
    this.topic.publish(event);
  }

  /**
   * Text an activity streamed for one model step, read back from the log.
   * Used after an interrupt: the model activity flushes its deltas before it
   * acknowledges cancellation, so they are already in the log.
   */
  streamedText(turnId: string, step: number): string {
    const { log } = this.stream.getState();
    const parts: string[] = [];
    for (let i = log.length - 1; i >= 0; i--) {
      const item = log[i];
      if (!item || item.topic !== EVENTS_TOPIC) continue;
      const event = defaultPayloadConverter.fromPayload<AgentEvent>(decodePayloadWire(item.data));
      if (event.type === 'turn_completed' || event.type === 'status_change') {
        if (event.turnId !== turnId) break;
        continue;
      }
      if (event.type === 'text_delta' && event.turnId === turnId && event.step === step) parts.push(event.delta);
    }
    return parts.reverse().join('');
  }
}
