import { checkJsonSchema } from '../../workflows/json-schema-check';

const meetingSchema = {
  type: 'object',
  properties: {
    subject: { type: 'string', minLength: 1 },
    start_time: { type: 'string', format: 'date-time' },
    attendees: { type: 'array', items: { type: 'string', format: 'email' } },
    priority: { enum: ['low', 'high'] },
    count: { type: 'integer', minimum: 1 },
  },
  required: ['subject', 'start_time'],
  additionalProperties: false,
};

describe('checkJsonSchema', () => {
  it('accepts arguments that fit the schema', () => {
    expect(checkJsonSchema({ subject: 'Sync', start_time: '2025-03-18T14:00:00+01:00', attendees: ['a@b.co'], count: 2 }, meetingSchema)).toEqual([]);
  });

  it('names a missing required field', () => {
    expect(checkJsonSchema({ start_time: '2025-03-18T14:00:00Z' }, meetingSchema)).toEqual([{ path: 'subject', message: 'is required' }]);
  });

  it('rejects "tomorrow" where a date-time is required', () => {
    const issues = checkJsonSchema({ subject: 'x', start_time: 'tomorrow' }, meetingSchema);
    expect(issues).toHaveLength(1);
    expect(issues[0]?.path).toBe('start_time');
    expect(issues[0]?.message).toMatch(/ISO 8601/);
  });

  it('reports wrong types, enums, nested items, unknown fields and bounds together', () => {
    const issues = checkJsonSchema(
      { subject: 3, start_time: '2025-03-18T14:00:00Z', attendees: ['nope'], priority: 'urgent', count: 0.5, extra: true },
      meetingSchema,
    );
    expect([...new Set(issues.map((i) => i.path))].sort()).toEqual(['attendees.0', 'count', 'extra', 'priority', 'subject']);
  });

  it('checks anyOf variants', () => {
    const schema = { anyOf: [{ type: 'string' }, { type: 'number' }] };
    expect(checkJsonSchema('a', schema)).toEqual([]);
    expect(checkJsonSchema(true, schema)).toHaveLength(1);
  });
});

describe('prepared schemas, kept between checks', () => {
  test('a schema changed in place after a check is checked as it is now', () => {
    const schema: Record<string, unknown> = { type: 'object', properties: { a: { type: 'number' } }, required: ['a'] };
    expect(checkJsonSchema({ a: 1 }, schema)).toEqual([]);
    (schema.properties as { a: { type: string } }).a.type = 'string';
    expect(checkJsonSchema({ a: 1 }, schema).map((i) => i.path)).toEqual(['a']);
  });

  test('a schema with references checked again gives the same verdicts', () => {
    const schema = { type: 'object', $defs: { n: { type: 'integer', minimum: 1 } }, properties: { count: { $ref: '#/$defs/n' } }, required: ['count'] };
    const first = checkJsonSchema({ count: 0 }, schema);
    expect(first.map((i) => i.path)).toEqual(['count']);
    expect(checkJsonSchema({ count: 0 }, schema)).toEqual(first);
    expect(checkJsonSchema({ count: 2 }, schema)).toEqual([]);
    expect(checkJsonSchema({ count: 'two' }, structuredClone(schema)).map((i) => i.path)).toEqual(['count']);
  });
});
