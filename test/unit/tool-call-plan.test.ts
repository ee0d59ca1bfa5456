import { z } from 'zod';
import { defineTool } from '../../activities/tools/native-tool';
import { nativeRunnable, buildCatalog } from '../../activities/tools/tool-registry';
import { callRisk, needsConfirmation, planToolCall } from '../../workflows/tool-call-plan';
import type { ToolPolicy } from '../../workflows/session-types';
import { MODEL_OUTPUT_LIMITS } from '../../workflows/model-output-limits';

const write = nativeRunnable(
  defineTool({
    name: 'note',
    description: 'Writes a note.',
    parameters: z.object({ text: z.string().min(1), when: z.iso.datetime().meta({ format: 'date-time' }).optional() }),
    risk: 'write',
    execute: async () => 'ok',
  }),
);
const drop = nativeRunnable(
  defineTool({ name: 'drop', description: 'Deletes everything.', parameters: z.object({}), risk: 'destructive', execute: async () => 'ok' }),
);
const tools = new Map([write, drop].map((t) => [t.spec.name, t.spec]));
const policy: ToolPolicy = { confirmWrites: false, confirmTools: [], reapproveChangedTools: true };
const call = (name: string, args: string) => ({ id: 'c1', type: 'function' as const, function: { name, arguments: args } });

describe('per-call risk', () => {
  const invite = nativeRunnable(
    defineTool({
      name: 'invite',
      description: 'Books a meeting.',
      parameters: z.object({ subject: z.string(), attendees: z.array(z.string()).default([]) }),
      risk: 'write',
      externalWhen: { argument: 'attendees' },
      execute: async () => 'ok',
    }),
  ).spec;

  it('makes a call external, and confirmed, only when its externalWhen argument is not empty', () => {
    expect(callRisk(invite, { subject: 'x' })).toBe('write');
    expect(callRisk(invite, { subject: 'x', attendees: [] })).toBe('write');
    expect(callRisk(invite, { subject: 'x', attendees: ['attacker@evil.example'] })).toBe('external');
    const plan = planToolCall(call('local_invite', '{"subject":"x","attendees":["a@b.example"]}'), new Map([[invite.name, invite]]), policy);
    expect(plan).toMatchObject({ kind: 'run', risk: 'external' });
  });

  it('always confirms a tool whose own risk is external, such as an MCP tool configured so, whatever the policy', () => {
    const send = { ...invite, name: 'mcp_mail_send', risk: 'external' as const, externalWhen: undefined };
    expect(needsConfirmation(send, policy)).toBe(true);
    expect(needsConfirmation(send, { ...policy, confirmWrites: false, confirmTools: [] })).toBe(true);
    expect(planToolCall(call('mcp_mail_send', '{"subject":"x"}'), new Map([[send.name, send]]), policy)).toMatchObject({ kind: 'run', risk: 'external', needsConfirmation: true });
  });
});

describe('planToolCall', () => {
  it('runs valid calls and asks confirmation for destructive tools only by default', () => {
    expect(planToolCall(call('local_note', '{"text":"hi"}'), tools, policy)).toMatchObject({ kind: 'run', needsConfirmation: false });
    expect(planToolCall(call('local_drop', '{}'), tools, policy)).toMatchObject({ kind: 'run', needsConfirmation: true });
  });

  it('asks confirmation for writes when the session policy says so', () => {
    expect(planToolCall(call('local_note', '{"text":"hi"}'), tools, { ...policy, confirmWrites: true })).toMatchObject({ needsConfirmation: true });
  });

  it('refuses a tool off the allow-list', () => {
    const plan = planToolCall(call('local_drop', '{}'), tools, { ...policy, allow: ['local_note'] });
    expect(plan).toMatchObject({ kind: 'reject', errorType: 'ToolNotAllowed' });
  });

  it('explains malformed JSON and invalid fields with the schema shape', () => {
    const bad = planToolCall(call('local_note', '{"text": '), tools, policy);
    expect(bad).toMatchObject({ kind: 'reject', errorType: 'ToolInputInvalid' });
    expect(bad.kind === 'reject' && bad.detail).toMatch(/not valid JSON.*text: string/);
    const invalid = planToolCall(call('local_note', '{"text":"","when":"tomorrow"}'), tools, policy);
    expect(invalid.kind === 'reject' && invalid.detail).toMatch(/text must have at least 1 characters; when must be an ISO 8601 date-time/);
  });

  it.each([
    ['a type whose toString is not a function', { properties: { q: { type: { toString: 0 } } } }, /q\?: any/],
    ['a type list holding such an object', { properties: { q: { type: ['string', { toString: 0 }] } } }, /q\?: any/],
    ['a property that is null', { properties: { q: null } }, /q\?: any/],
    ['required that is a number', { properties: { q: { type: 'string' } }, required: 5 }, /q\?: string/],
  ])("explains bad arguments to a tool whose schema has %s (as an MCP server may list) without throwing", (_name, parameters, shape) => {
    const hostile = new Map([['mcp_x', { ...(tools.get('local_note') as NonNullable<ReturnType<typeof tools.get>>), name: 'mcp_x', parameters: { type: 'object', ...parameters } }]]);
    for (const args of ['{"q": ', '[1]', `{"q":"${'x'.repeat(40_000)}"}`]) {
      const plan = planToolCall(call('mcp_x', args), hostile, policy, args.length > 30_000 ? { chars: args.length, over: 'call' } : undefined);
      expect(plan).toMatchObject({ kind: 'reject', errorType: 'ToolInputInvalid' });
      expect(plan.kind === 'reject' && plan.detail).toMatch(shape);
    }
  });

  it('rejects an unknown tool naming the ones that exist', () => {
    const plan = planToolCall(call('local_nope', '{}'), tools, policy);
    expect(plan.kind === 'reject' && plan.detail).toMatch(/local_drop, local_note/);
  });

  it('refuses to build a catalog with a name collision, naming both owners', () => {
    expect(() => buildCatalog([{ owner: 'native tools', tools: [write] }, { owner: 'MCP server "notes"', tools: [write] }])).toThrow(
      /"local_note" is defined by both native tools and MCP server "notes"/,
    );
  });
});

describe('arguments the model activity emptied', () => {
  it('are refused naming the limit they were over: one call\'s, or what the response had left', () => {
    const detail = (truncated: Parameters<typeof planToolCall>[3]) => {
      const plan = planToolCall(call('local_note', ''), tools, policy, truncated);
      expect(plan).toMatchObject({ kind: 'reject', errorType: 'ToolInputInvalid' });
      return plan.kind === 'reject' ? plan.detail : '';
    };
    expect(detail({ chars: 90_000, over: 'response' })).toMatch(
      new RegExp(`90000 characters long, more than was left of the ${MODEL_OUTPUT_LIMITS.maxTotalArgumentChars} characters all calls of one response may take together`),
    );
    expect(detail({ chars: 300_000, over: 'call' })).toMatch(/300000 characters long, over the limit for one call\./);
    // Results recorded before `over` existed read as before.
    expect(detail({ chars: 5 })).toMatch(/the arguments are 5 characters long, over the limit for one call\./);
  });
});
