import { lastUserMessage, type ChatRequest, type StepResponse } from '../../../scripted-model';
import { lastUserIndex } from '../../../scripted-model/chat-request';
import { SUMMARIZER_MARKER } from '../../../activities/summarize-activity';
import { emptySummary } from '../../../workflows/session-summary';
import type { RawToolCall } from './poison-case';

const TOOL_TURN = /^poison-tools (\S+)$/;

/** The message that makes the poison model answer with the tool calls registered under `key`. */
export const toolTurnMessage = (key: string): string => `poison-tools ${key}`;

/** What the poison model answers a plain message with. */
export const pongFor = (message: string): string => `pong: ${message}`;

/**
 * The model's side of the poison suite, as a scripted-model fallback that
 * keeps no state per request: a turn whose message is `poison-tools <key>`
 * gets the tool calls registered under the key on its first step and a plain
 * answer after; every other message gets `pong: <message>`; summary folds get
 * an empty summary. A turn that fails half way leaves nothing behind that
 * could answer a later request wrongly.
 */
export class PoisonModel {
  private readonly calls = new Map<string, RawToolCall[]>();

  register(key: string, calls: RawToolCall[]): void {
    this.calls.set(key, calls);
  }

  readonly fallback = (req: ChatRequest): StepResponse => {
    const system = req.messages[0]?.role === 'system' ? String(req.messages[0].content) : '';
    if (system.startsWith(SUMMARIZER_MARKER)) return { kind: 'json', value: { ...emptySummary(), notes: ['earlier turns were poison-suite traffic'] } };
    const message = lastUserMessage(req) ?? '';
    const key = TOOL_TURN.exec(message)?.[1];
    const calls = key === undefined ? undefined : this.calls.get(key);
    if (!calls) return { kind: 'text', text: pongFor(message) };
    const stepsSoFar = req.messages.slice(lastUserIndex(req) + 1).filter((m) => m.role === 'assistant').length;
    return stepsSoFar === 0 ? { kind: 'tool_calls', calls } : { kind: 'text', text: `done with ${key}` };
  };
}
