import type { ToolCall } from '../workflows/chat-message';
import { MODEL_OUTPUT_LIMITS } from '../workflows/model-output-limits';

/** A call whose arguments were cut to fit: the workflow rejects it, telling the model the real size. */
export interface TruncatedArguments {
  index: number;
  chars: number;
  /** Which limit it was over: one call's, or what is left of the response's (all its calls together). */
  over: 'call' | 'response';
}

/**
 * Bounds the tool calls of one model response before they reach history:
 * names and ids cut to a sane length, arguments beyond the per-call or
 * per-response budget emptied and reported, calls past the count dropped
 * (never silently: the workflow is told how many).
 */
export function boundToolCalls(calls: ToolCall[]): { toolCalls: ToolCall[]; truncatedArguments: TruncatedArguments[]; droppedToolCalls: number } {
  const limits = MODEL_OUTPUT_LIMITS;
  const truncatedArguments: TruncatedArguments[] = [];
  let budget = limits.maxTotalArgumentChars;
  const toolCalls = calls.slice(0, limits.maxToolCalls).map((call, index) => {
    const args = call.function.arguments;
    let kept = args;
    if (args.length > Math.min(limits.maxArgumentChars, budget)) {
      truncatedArguments.push({ index, chars: args.length, over: args.length > limits.maxArgumentChars ? 'call' : 'response' });
      kept = '';
    }
    budget -= kept.length;
    return {
      id: call.id.slice(0, limits.maxNameChars),
      type: 'function' as const,
      function: { name: call.function.name.slice(0, limits.maxNameChars), arguments: kept },
    };
  });
  return { toolCalls, truncatedArguments, droppedToolCalls: Math.max(0, calls.length - limits.maxToolCalls) };
}
