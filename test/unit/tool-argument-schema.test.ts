import { checkArgumentPatterns } from '../../activities/tools/argument-patterns';
import { checkJsonSchema, schemaHasPatterns, withoutPatterns } from '../../workflows/json-schema-check';
import { checkJsonSchemaLegacy } from '../../workflows/json-schema-check-legacy';
import { planToolCall } from '../../workflows/tool-call-plan';
import type { ToolSpec } from '../../workflows/tool-spec';
import { ToolPolicy } from '../../workflows/session-types';

/** A schema the way MCP servers built on zod-to-json-schema write it: $ref into definitions, a oneOf of shapes. */
const shapes = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  definitions: {
    circle: { type: 'object', properties: { kind: { const: 'circle' }, radius: { type: 'number', exclusiveMinimum: 0 } }, required: ['kind', 'radius'], additionalProperties: false },
    square: { type: 'object', properties: { kind: { const: 'square' }, side: { type: 'number' } }, required: ['kind', 'side'], additionalProperties: false },
    anyObject: { type: 'object' },
  },
  properties: {
    shape: { oneOf: [{ $ref: '#/definitions/circle' }, { $ref: '#/definitions/square' }] },
    loose: { oneOf: [{ $ref: '#/definitions/circle' }, { $ref: '#/definitions/anyObject' }] },
    owner: { $ref: '#/definitions/person' },
  },
  required: ['shape'],
};
(shapes.definitions as Record<string, unknown>).person = {
  type: 'object',
  properties: { email: { type: 'string', format: 'email' }, name: { type: 'string', minLength: 1 } },
  required: ['email'],
};

describe('tool arguments against the full JSON Schema dialect', () => {
  it('follows $ref into definitions and names the nested field', () => {
    expect(checkJsonSchema({ shape: { kind: 'circle', radius: 1 }, owner: { email: 'nope' } }, shapes)).toEqual([
      { path: 'owner.email', message: 'must be an email address such as ana@example.com' },
    ]);
    expect(checkJsonSchema({ shape: { kind: 'circle', radius: 1 }, owner: { name: '' } }, shapes).map((i) => i.path).sort()).toEqual(['owner.email', 'owner.name']);
  });

  it('accepts a value that fits exactly one oneOf shape', () => {
    expect(checkJsonSchema({ shape: { kind: 'square', side: 2 } }, shapes)).toEqual([]);
  });

  it('rejects a value that fits no oneOf shape, listing the shapes', () => {
    const issues = checkJsonSchema({ shape: { kind: 'triangle' } }, shapes);
    expect(issues).toEqual([{ path: 'shape', message: expect.stringMatching(/does not match any of the allowed shapes \(expected one of: \{ kind: "circle", radius \} \| \{ kind: "square", side \}\)/) }]);
  });

  it('rejects a value that fits two oneOf shapes, which the old checker read as anyOf and let through', () => {
    const value = { shape: { kind: 'circle', radius: 1 }, loose: { kind: 'circle', radius: 2 } };
    expect(checkJsonSchemaLegacy(value, shapes)).toEqual([]);
    expect(checkJsonSchema(value, shapes)).toEqual([{ path: 'loose', message: expect.stringMatching(/matches 2 of the allowed shapes but must match exactly one/) }]);
  });

  it('rejects through $ref where the old checker saw nothing to check', () => {
    const value = { shape: { kind: 'circle', radius: -1 } };
    expect(checkJsonSchemaLegacy(value, shapes)).toEqual([]);
    expect(checkJsonSchema(value, shapes)).toHaveLength(1);
  });

  it('reads 2020-12 keywords: $defs, prefixItems, dependentRequired', () => {
    const schema = {
      type: 'object',
      $defs: { point: { type: 'array', prefixItems: [{ type: 'number' }, { type: 'number' }], items: false } },
      properties: { at: { $ref: '#/$defs/point' }, card: { type: 'string' }, cvv: { type: 'string' } },
      dependentRequired: { card: ['cvv'] },
    };
    expect(checkJsonSchema({ at: [1, 2] }, schema)).toEqual([]);
    const issues = checkJsonSchema({ at: [1, 'x', 3], card: '4111' }, schema);
    expect(issues).toEqual(
      expect.arrayContaining([
        { path: 'at.1', message: 'must be number, got string' },
        { path: 'at.2', message: 'is not allowed here' },
        { path: 'cvv', message: 'is required when card is given' },
      ]),
    );
  });

  it('never runs a pattern in the workflow: patterns are stripped, property names that happen to be "pattern" are kept', () => {
    const schema = { type: 'object', properties: { pattern: { type: 'string', pattern: '^(a+)+$' } }, required: ['pattern'] };
    expect(schemaHasPatterns(schema)).toBe(true);
    expect(withoutPatterns(schema)).toEqual({ type: 'object', properties: { pattern: { type: 'string' } }, required: ['pattern'] });
    const started = Date.now();
    expect(checkJsonSchema({ pattern: 'a'.repeat(40) + '!' }, schema)).toEqual([]);
    expect(Date.now() - started).toBeLessThan(200);
    expect(checkJsonSchema({}, schema)).toEqual([{ path: 'pattern', message: 'is required' }]);
  });

  it('loosens patternProperties with its additionalProperties rather than reject a field the patterns allow', () => {
    const schema = { type: 'object', patternProperties: { '^x-': { type: 'string' } }, additionalProperties: false };
    expect(checkJsonSchema({ 'x-a': 'b' }, schema)).toEqual([]);
  });

  it('does not mutate the schema it checks', () => {
    const copy = JSON.parse(JSON.stringify(shapes)) as unknown;
    checkJsonSchema({ shape: { kind: 'circle', radius: 1 } }, shapes);
    expect(shapes).toEqual(copy);
    expect(Object.getOwnPropertyNames(shapes.properties.owner)).toEqual(['$ref']);
  });

  it('passes what it cannot check (an unresolvable $ref) to the tool, which validates on its own', () => {
    expect(checkJsonSchema({ a: 1 }, { type: 'object', properties: { a: { $ref: 'https://example.com/remote.json' } } })).toEqual([]);
  });
});

describe('patterns, checked by RE2 in the tool activity', () => {
  const code = { type: 'object', properties: { code: { type: 'string', pattern: '^[A-Z]{3}-\\d{2}$' } } };

  it('names the field and the pattern', () => {
    expect(checkArgumentPatterns({ code: 'ABC-12' }, code)).toEqual([]);
    expect(checkArgumentPatterns({ code: 'abc' }, code)).toEqual([{ path: 'code', message: 'must match the pattern ^[A-Z]{3}-\\d{2}$' }]);
  });

  it('finishes a catastrophic pattern fast: ^(a+)+$ against 30 a\'s and a !', () => {
    const schema = { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } };
    const started = Date.now();
    expect(checkArgumentPatterns({ s: 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!' }, schema)).toEqual([{ path: 's', message: 'must match the pattern ^(a+)+$' }]);
    expect(checkArgumentPatterns({ s: 'a'.repeat(100_000) + '!' }, schema)).toHaveLength(1);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it('keeps a pattern\'s meaning inside anyOf and beside a format', () => {
    const schema = {
      type: 'object',
      properties: { id: { anyOf: [{ type: 'string', pattern: '^a+$' }, { type: 'string', pattern: '^b+$' }] }, day: { type: 'string', format: 'date', pattern: '^2025-' } },
    };
    expect(checkArgumentPatterns({ id: 'bbb', day: '2025-01-02' }, schema)).toEqual([]);
    expect(checkArgumentPatterns({ id: 'ab', day: '2024-01-02' }, schema)).toEqual([
      { path: 'id', message: expect.stringMatching(/does not match any of the allowed shapes/) },
      { path: 'day', message: 'must match the pattern ^2025-' },
    ]);
  });

  it('leaves a pattern RE2 cannot compile (a backreference) to the tool', () => {
    expect(checkArgumentPatterns({ s: 'ab' }, { type: 'object', properties: { s: { type: 'string', pattern: '^(a)\\1$' } } })).toEqual([]);
  });

  it('costs nothing for a schema without patterns', () => {
    expect(checkArgumentPatterns({ anything: 1 }, { type: 'object', properties: { a: { type: 'integer' } } })).toEqual([]);
  });
});

describe('planning a call with the full dialect', () => {
  const spec: ToolSpec = {
    name: 'mcp_shapes_draw',
    description: 'Draws a shape.',
    parameters: shapes,
    risk: 'read',
    requiresConfirmation: false,
    timeoutMs: 1_000,
    maxAttempts: 1,
    source: 'mcp',
    hash: 'h',
  };
  const call = (args: unknown) => ({ id: 'c1', type: 'function' as const, function: { name: spec.name, arguments: JSON.stringify(args) } });
  const tools = new Map([[spec.name, spec]]);
  const policy = ToolPolicy.parse({});

  it('rejects with the field, what is wrong and the expected shape', () => {
    const plan = planToolCall(call({ shape: { kind: 'circle', radius: 0 } }), tools, policy);
    expect(plan).toMatchObject({ kind: 'reject', errorType: 'ToolInputInvalid' });
    expect(plan.kind === 'reject' && plan.detail).toMatch(/^Invalid arguments: shape does not match any of the allowed shapes .*Expected \{ shape: any, loose\?: any, owner\?: any \}\.$/);
  });

  it('keeps the old checker for runs from before the patch', () => {
    expect(planToolCall(call({ shape: { kind: 'circle', radius: 0 } }), tools, policy, undefined, 'legacy').kind).toBe('run');
  });
});
