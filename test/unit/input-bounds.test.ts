import { checkJsonBounds, previewValue } from '../../workflows/json-bounds';
import { DeltaGate, ToolProgressGate } from '../../workflows/text-deltas';
import { boundToolCalls } from '../../activities/model-output-bounds';
import { MODEL_OUTPUT_LIMITS } from '../../workflows/model-output-limits';
import { payloadBytes } from '../../workflows/payload-budget';
import { uniqueCallIds } from '../../workflows/tool-call-ids';
import { elicitationSchemaProblem } from '../../workflows/input-request';

describe('JSON bounds on model arguments', () => {
  it('accepts ordinary arguments', () => {
    expect(checkJsonBounds('{"a":[1,2,{"b":"c"}],"d":"[[[[not nesting]]]]"}')).toBeNull();
  });

  it('refuses nesting past the depth limit without parsing or recursing', () => {
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    expect(checkJsonBounds(deep)).toMatchObject({ limit: 'depth' });
  });

  it('does not count brackets inside strings, escaped quotes included', () => {
    expect(checkJsonBounds(`{"s":"${'\\"['.repeat(100)}"}`, { maxChars: 10_000, maxDepth: 2, maxEntries: 10 })).toBeNull();
  });

  it('refuses too many entries and too many characters', () => {
    expect(checkJsonBounds(`[${'1,'.repeat(3_000)}1]`)).toMatchObject({ limit: 'entries' });
    expect(checkJsonBounds(`"${'x'.repeat(70_000)}"`)).toMatchObject({ limit: 'size' });
  });

  it('previews any value as a bounded string and never throws', () => {
    expect(previewValue({ a: 'x'.repeat(2_000) }, 100)).toHaveLength(100);
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(previewValue(cyclic)).toBe('[unprintable value]');
  });
});

describe('the text delta gate', () => {
  const running = { turnId: 'turn-1', step: 2 };
  const batch = (over: Partial<{ turnId: string; step: number; attempt: number; seq: number }> = {}) => ({
    turnId: 'turn-1', step: 2, attempt: 1, seq: 1, deltas: [{ delta: 'x' }], ...over,
  });

  it('admits batches of the running step in order, once', () => {
    const gate = new DeltaGate();
    expect(gate.admit(batch(), running)).toBeNull();
    expect(gate.admit(batch({ seq: 2 }), running)).toBeNull();
    expect(gate.admit(batch({ seq: 2 }), running)).toMatch(/arrived already/);
    expect(gate.admit(batch({ seq: 1 }), running)).toMatch(/arrived already/);
  });

  it('refuses batches for another turn or step, when idle, and from an older attempt', () => {
    const gate = new DeltaGate();
    expect(gate.admit(batch({ turnId: 'turn-9' }), running)).toMatch(/not the running turn/);
    expect(gate.admit(batch({ step: 1 }), running)).toMatch(/at step 2/);
    expect(gate.admit(batch(), null)).toMatch(/not the running turn/);
    expect(gate.admit(batch({ attempt: 2 }), running)).toBeNull();
    expect(gate.admit(batch({ attempt: 1, seq: 5 }), running)).toMatch(/older than attempt 2/);
  });

  it('takes nothing more for an attempt once its result carried the last deltas', () => {
    const gate = new DeltaGate();
    gate.close('turn-1', 2, 1);
    expect(gate.admit(batch({ seq: 7 }), running)).toMatch(/arrived already/);
  });
});

describe('bounds on one model response', () => {
  const call = (id: string, args: string) => ({ id, type: 'function' as const, function: { name: 'local_note', arguments: args } });

  it('empties and reports oversized arguments, and drops calls past the count', () => {
    const calls = [call('a', '{}'), call('b', `"${'x'.repeat(MODEL_OUTPUT_LIMITS.maxArgumentChars)}"`), ...Array.from({ length: 40 }, (_, i) => call(`c${i}`, '{}'))];
    const bounded = boundToolCalls(calls);
    expect(bounded.toolCalls).toHaveLength(MODEL_OUTPUT_LIMITS.maxToolCalls);
    expect(bounded.droppedToolCalls).toBe(calls.length - MODEL_OUTPUT_LIMITS.maxToolCalls);
    expect(bounded.truncatedArguments).toEqual([{ index: 1, chars: MODEL_OUTPUT_LIMITS.maxArgumentChars + 2, over: 'call' }]);
    expect(bounded.toolCalls[1]!.function.arguments).toBe('');
  });

  it('a call that fits alone but not in what the response has left is reported as over the response', () => {
    // Each call fits its own limit; together they pass what one response may take.
    const each = Math.floor(MODEL_OUTPUT_LIMITS.maxArgumentChars * 0.9);
    const count = Math.ceil(MODEL_OUTPUT_LIMITS.maxTotalArgumentChars / each) + 1;
    const calls = Array.from({ length: count }, (_, i) => call(`c${i}`, `"${'x'.repeat(each - 2)}"`));
    const { truncatedArguments } = boundToolCalls(calls);
    expect(truncatedArguments.length).toBeGreaterThan(0);
    expect(truncatedArguments.every((t) => t.over === 'response' && t.chars === each)).toBe(true);
  });

  it('cuts names and ids no tool could have', () => {
    const [bounded] = boundToolCalls([{ id: 'i'.repeat(1_000), type: 'function', function: { name: 'n'.repeat(1_000), arguments: '{}' } }]).toolCalls;
    expect(bounded!.id).toHaveLength(MODEL_OUTPUT_LIMITS.maxNameChars);
    expect(bounded!.function.name).toHaveLength(MODEL_OUTPUT_LIMITS.maxNameChars);
  });
});

describe('payload size', () => {
  it('counts UTF-8 bytes of the JSON form', () => {
    expect(payloadBytes({ a: 'é' })).toBe(JSON.stringify({ a: 'é' }).length + 1);
    expect(payloadBytes('波尔图')).toBe(2 + 9);
  });
});

describe('the tool progress gate', () => {
  it('publishes progress of a running call in order, with the name and step the workflow knows', () => {
    const gate = new ToolProgressGate();
    gate.started('turn-1', 'call_a', 'mcp_report_build', 2);
    expect(gate.admit({ turnId: 'turn-1', toolCallId: 'call_a', seq: 1 })).toEqual({ toolName: 'mcp_report_build', step: 2 });
    expect(gate.admit({ turnId: 'turn-1', toolCallId: 'call_a', seq: 1 })).toMatch(/arrived already/);
    expect(gate.admit({ turnId: 'turn-2', toolCallId: 'call_a', seq: 2 })).toMatch(/not running/);
    gate.finished('call_a');
    expect(gate.admit({ turnId: 'turn-1', toolCallId: 'call_a', seq: 3 })).toMatch(/not running/);
  });
});

describe('tool call ids of one response', () => {
  const call = (id: string) => ({ id, type: 'function' as const, function: { name: 'local_note', arguments: '{}' } });

  it('stay as they are when unique', () => {
    const calls = [call('call_a'), call('call_b')];
    expect(uniqueCallIds(calls)).toEqual(calls);
  });

  it('are made unique when the model repeats one, so every tool message answers exactly one call', () => {
    const ids = uniqueCallIds([call('call_0'), call('call_0'), call('call_0_1'), call('call_0')]).map((c) => c.id);
    expect(ids[0]).toBe('call_0');
    expect(new Set(ids).size).toBe(4);
  });
});

describe('elicitation schemas: only what MCP allows', () => {
  const schema = (x: Record<string, unknown>) => ({ properties: { x } });

  it('takes MCP\'s primitive schemas, titled enums and multi-select arrays', () => {
    for (const x of [
      { type: 'string', title: 'Name', description: 'Your name', minLength: 1, maxLength: 40, default: 'Ana' },
      { type: 'string', format: 'email' },
      { type: 'string', format: 'date-time' },
      { type: 'number', minimum: 0, maximum: 10 },
      { type: 'boolean', default: false },
      { type: 'string', enum: ['csv', 'json'], enumNames: ['CSV', 'JSON'] },
      { type: 'string', oneOf: [{ const: 'a', title: 'A' }, { const: 'b', title: 'B' }] },
      { type: 'array', minItems: 1, maxItems: 2, items: { type: 'string', enum: ['a', 'b'] } },
      { type: 'array', items: { anyOf: [{ const: 'a', title: 'A' }] } },
    ]) expect([x, elicitationSchemaProblem(schema(x))]).toEqual([x, undefined]);
  });

  it('names what makes checking an answer costly: references, combinators, conditionals, other formats', () => {
    expect(elicitationSchemaProblem(schema({ type: 'string', $ref: '#/x' }))).toBe('properties.x: "$ref" is not a keyword MCP allows in an elicitation schema');
    expect(elicitationSchemaProblem(schema({ type: 'string', allOf: [] }))).toMatch(/"allOf" is not a keyword/);
    expect(elicitationSchemaProblem(schema({ type: 'string', if: {}, then: {} }))).toMatch(/"if" is not a keyword/);
    expect(elicitationSchemaProblem(schema({ type: 'string', format: 'url' }))).toBe('properties.x: format must be email, uri, date or date-time');
    expect(elicitationSchemaProblem(schema({ type: 'string', oneOf: [{ const: 'a', $ref: '#' }] }))).toMatch(/oneOf options may hold only const and title, not "\$ref"/);
    expect(elicitationSchemaProblem(schema({ type: 'array', items: { type: 'string', not: {} } }))).toMatch(/items may hold only type, enum, oneOf and anyOf, not "not"/);
    expect(elicitationSchemaProblem(schema({ type: 'array', items: [] }))).toBe('properties.x: items must be an object');
  });
});
