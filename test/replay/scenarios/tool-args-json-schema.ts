import { z } from 'zod';
import { defineTool, type NativeTool } from '../../../activities/tools/native-tool';
import { defineScenario } from '../scenario';
import { say } from '../scenario-helpers';

const circle = z.object({ kind: z.literal('circle'), radius: z.number().positive() }).meta({ id: 'replay_args_circle' });
const draws: unknown[] = [];
const draw = defineTool({
  name: 'draw',
  description: 'Draws a shape; code is three capital letters.',
  // zod writes this as a oneOf whose first shape is a $ref into definitions, and the code as a pattern.
  parameters: z.object({ shape: z.xor([circle, z.object({ kind: z.string() })]), code: z.string().regex(/^[A-Z]{3}$/) }),
  risk: 'read',
  timeoutMs: 5_000,
  async execute(args) {
    draws.push(args);
    return 'drawn';
  },
}) as unknown as NativeTool;

export default defineScenario({
  name: 'tool-args-json-schema',
  description: 'arguments checked against a schema with $ref and oneOf: a value matching two shapes is rejected in the workflow, a pattern by RE2 in the tool activity, a good call runs',
  env: { extraTools: [draw] },
  async run(ctx) {
    ctx.env.model.script(
      [
        {
          respond: {
            kind: 'tool_calls',
            calls: [
              { id: 'call_both', name: 'local_draw', arguments: { shape: { kind: 'circle', radius: 1 }, code: 'ABC' } },
              { id: 'call_code', name: 'local_draw', arguments: { shape: { kind: 'dot' }, code: 'abc' } },
              { id: 'call_ok', name: 'local_draw', arguments: { shape: { kind: 'square' }, code: 'XYZ' } },
            ],
          },
        },
        { match: { hasToolResults: true }, respond: { kind: 'text', text: 'One drawn.' } },
      ],
      { lane: ctx.sessionId },
    );
    await say(ctx, 'draw three shapes');
    const last = ctx.env.model.requestsFor(ctx.sessionId).at(-1)?.body as { messages: Array<{ role: string; tool_call_id?: string; content: string }> };
    const result = (id: string) => last.messages.find((m) => m.role === 'tool' && m.tool_call_id === id)?.content ?? '';
    ctx.check(/ToolInputInvalid/.test(result('call_both')) && /shape matches 2 of the allowed shapes/.test(result('call_both')), `oneOf exclusivity (${result('call_both')})`);
    ctx.check(/ToolInputInvalid/.test(result('call_code')) && /code must match the pattern/.test(result('call_code')), `pattern by RE2 (${result('call_code')})`);
    ctx.check(draws.length === 1, 'only the good call ran');
  },
});
