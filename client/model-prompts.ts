import type { Client } from '@temporalio/client';
import type { CallModelInput } from '../activities/activity-types';
import { scheduledModelCall, scheduledPromptParts } from '../activities/prompt-parts-in-history';
import type { ChatMessage } from '../workflows/chat-message';
import { workflowIdFor } from '../workflows/messages';

/** One model call a session scheduled, with the prompt it stood for. */
export interface ModelPrompt {
  runId: string;
  turnId: string;
  step: number;
  /** The input as history holds it: by reference (ids and new parts) or whole, for runs from before prompts by reference. */
  byReference: boolean;
  /** Bytes of the scheduled input's payload in history. */
  inputBytes: number;
  /** The failure type when this call failed (PromptPartMissing, ModelUnavailable...). */
  failedAs?: string;
  messages: ChatMessage[];
  tools: CallModelInput['tools'];
}

/**
 * What the model was sent, call by call, rebuilt from the session's history
 * alone: a part a call names by id was sent inline by an earlier call of the
 * same run, so history holds every prompt whole without holding it twice.
 * Reads one run (the latest unless `runId` is given); the client's data
 * converter decrypts payloads when encryption is on.
 */
export async function readModelPrompts(client: Client, sessionId: string, runId?: string): Promise<ModelPrompt[]> {
  const handle = client.workflow.getHandle(workflowIdFor(sessionId), runId);
  const run = runId ?? (await handle.describe()).runId;
  const history = await handle.fetchHistory();
  const converter = client.options.loadedDataConverter;
  const parts = new Map<string, unknown>();
  const prompts: ModelPrompt[] = [];
  const bySchedule = new Map<number, ModelPrompt>();
  for (const event of history.events ?? []) {
    const ahead = event.activityTaskScheduledEventAttributes?.activityType?.name === 'holdPromptParts' ? await scheduledPromptParts(converter, event) : undefined;
    for (const [id, value] of Object.entries(ahead ?? {})) parts.set(id, value);
    const call = await scheduledModelCall(converter, event);
    if (call) {
      const { input, payloads } = call;
      const prompt = input.prompt;
      if (prompt) for (const [id, value] of Object.entries(prompt.parts)) parts.set(id, value);
      const lookup = <T>(id: string): T => {
        if (!parts.has(id)) throw new Error(`part ${id} of a model call in run ${run} is in no earlier input of the run: the history is incomplete`);
        return parts.get(id) as T;
      };
      const entry: ModelPrompt = {
        runId: run,
        turnId: input.turnId,
        step: input.step,
        byReference: prompt !== undefined,
        inputBytes: payloads.reduce((sum, p) => sum + (p.data?.length ?? 0), 0),
        messages: prompt ? prompt.messages.map((id) => lookup<ChatMessage>(id)) : input.messages,
        tools: prompt ? prompt.tools.map((id) => lookup<CallModelInput['tools'][number]>(id)) : input.tools,
      };
      prompts.push(entry);
      bySchedule.set(Number(event.eventId), entry);
    }
    const failed = event.activityTaskFailedEventAttributes;
    const entry = failed ? bySchedule.get(Number(failed.scheduledEventId)) : undefined;
    if (failed && entry) entry.failedAs = failed.failure?.applicationFailureInfo?.type ?? failed.failure?.message ?? 'failed';
  }
  return prompts;
}
