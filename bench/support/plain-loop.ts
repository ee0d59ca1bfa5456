import type OpenAI from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { StreamedToolCalls } from '../../activities/streamed-tool-calls';
import { NOOP_TOOL } from './bench-model';
import { parseNoopArgs, runNoop } from './noop-tool';

export interface PlainTurnResult {
  modelCalls: number;
  toolCalls: number;
  text: string;
}

/**
 * The baseline: the same ReAct loop with nothing durable about it. One
 * process, the openai SDK streaming from the same model, tool calls parsed
 * and run in place (in parallel when several come together), the
 * conversation kept in memory.
 */
export class PlainLoop {
  private messages: ChatCompletionMessageParam[] = [];

  constructor(
    private readonly openai: OpenAI,
    private readonly lane: string,
    private readonly model: string,
    /** The system prompt and tool list the workflow sent, so both send the same request. */
    private readonly system: string,
    private readonly tools: ChatCompletionTool[],
    private readonly maxSteps: number,
  ) {}

  /** Starts a fresh conversation, as a new session does. */
  reset(): void {
    this.messages = [];
  }

  async turn(text: string): Promise<PlainTurnResult> {
    this.messages.push({ role: 'user', content: text });
    let modelCalls = 0;
    let toolCalls = 0;
    const texts: string[] = [];
    for (let step = 1; step <= this.maxSteps; step++) {
      const stream = await this.openai.chat.completions.create(
        {
          model: this.model,
          messages: [{ role: 'system', content: this.system }, ...this.messages],
          stream: true,
          stream_options: { include_usage: true },
          tools: this.tools,
          parallel_tool_calls: true,
        },
        { headers: { 'x-session-id': this.lane }, maxRetries: 0 },
      );
      let content = '';
      const calls = new StreamedToolCalls();
      for await (const chunk of stream as AsyncIterable<ChatCompletionChunk>) {
        const delta = chunk.choices[0]?.delta;
        if (!delta) continue;
        if (delta.content) content += delta.content;
        calls.add(delta.tool_calls);
      }
      modelCalls++;
      if (content) texts.push(content);
      const toolCallList = calls.list((index) => `call_${index}`);
      this.messages.push({ role: 'assistant', content: content || null, ...(toolCallList.length > 0 ? { tool_calls: toolCallList } : {}) });
      if (toolCallList.length === 0) return { modelCalls, toolCalls, text: texts.join('\n\n') };
      const results = await Promise.all(
        toolCallList.map(async (call) => {
          const name = call.function.name;
          if (name !== NOOP_TOOL) throw new Error(`plain loop: the model called ${name}, which the benchmark does not have`);
          return { role: 'tool' as const, tool_call_id: call.id, content: JSON.stringify(await runNoop(parseNoopArgs(call.function.arguments))) };
        }),
      );
      toolCalls += results.length;
      this.messages.push(...results);
    }
    return { modelCalls, toolCalls, text: texts.join('\n\n') };
  }
}
