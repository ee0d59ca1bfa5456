import { ScriptedModelServer } from '../../scripted-model';
import { lastUserIndex, type ChatRequest } from '../../scripted-model/chat-request';
import type { StepResponse } from '../../scripted-model';

export const NOOP_TOOL = 'local_bench_noop';
export const FINAL_TEXT = 'Done.';

/** Tool results the request carries for the current turn: how many steps of the turn are behind us. */
function toolResultsThisTurn(req: ChatRequest): number {
  return req.messages.slice(lastUserIndex(req) + 1).filter((m) => m.role === 'tool').length;
}

/**
 * A model that answers the same way on every lane: `toolSteps` single no-op
 * tool calls, then a short final text. Both contenders talk to it over the
 * same loopback HTTP, so the model costs them the same. It answers at once
 * unless given `latencyMs`, which every call then waits before its answer
 * starts, as a real model's calls do.
 */
export function startBenchModel(toolSteps: number, latencyMs = 0): Promise<ScriptedModelServer> {
  return ScriptedModelServer.start({
    latencyMs,
    fallback: (req): StepResponse => {
      const done = toolResultsThisTurn(req);
      if (done < toolSteps) return { kind: 'tool_calls', calls: [{ name: NOOP_TOOL, arguments: { i: done + 1 } }] };
      return { kind: 'text', text: FINAL_TEXT, chunkSize: 64 };
    },
  });
}
