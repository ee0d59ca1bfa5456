import { checkJsonSchema, isWebUrl } from '../../workflows/json-schema-check';

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

describe('schemas that would take exponential time to check', () => {
  /** `allOf` of the next definition twice, `depth` deep: 2^depth checks of one value for a validator that remembers nothing. */
  function doubling(depth: number): Record<string, unknown> {
    const defs: Record<string, unknown> = { [`d${depth}`]: { type: 'string', maxLength: 3 } };
    for (let i = depth - 1; i >= 0; i--) defs[`d${i}`] = { allOf: [{ $ref: `#/$defs/d${i + 1}` }, { $ref: `#/$defs/d${i + 1}` }] };
    return { type: 'object', properties: { q: { $ref: '#/$defs/d0' } }, $defs: defs };
  }

  it('a schema that doubles its checks 40 times is not checked here (the tool checks), and the answer comes at once', () => {
    const started = performance.now();
    // A value that fits must be checked against every one of the 2^40 leaves (one that fails stops at the first).
    expect(checkJsonSchema({ q: 'ab' }, doubling(40))).toEqual([]);
    expect(performance.now() - started).toBeLessThan(1_000);
  });

  it('a schema that applies itself to the same value is not checked here either', () => {
    const schema = { $defs: { loop: { allOf: [{ $ref: '#/$defs/loop' }], type: 'string' } }, type: 'object', properties: { q: { $ref: '#/$defs/loop' } } };
    expect(checkJsonSchema({ q: 3 }, schema)).toEqual([]);
  });

  it('a few doublings, and a recursive tree schema (each level a deeper value), are still checked', () => {
    expect(checkJsonSchema({ q: 'far too long' }, doubling(6)).map((i) => i.path)).toContain('q');
    const tree = {
      $defs: { node: { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/$defs/node' } } }, required: ['name'] } },
      $ref: '#/$defs/node',
    };
    expect(checkJsonSchema({ name: 'a', children: [{ name: 'b', children: [{ children: [] }] }] }, tree).map((i) => i.path)).toEqual(['children.0.children.0.name']);
  });
});

describe('format "url", checked in linear time', () => {
  const schema = { type: 'object', properties: { link: { type: 'string', format: 'url' } } };
  // A dot-less host that then fails: the validator's own expression took seconds here, doubling with each character.
  const hostile = `http://${'intranetdocumentationserver01'.repeat(3)} `;

  it('answers at once for a host that stalls the validator\'s expression, and names the field', () => {
    const started = performance.now();
    expect(checkJsonSchema({ link: hostile }, schema)).toEqual([{ path: 'link', message: expect.stringContaining('absolute URI') }]);
    expect(performance.now() - started).toBeLessThan(200);
  });

  it('stays linear for a value of 64,000 characters', () => {
    const started = performance.now();
    expect(isWebUrl(`http://${'a1-'.repeat(21_000)}.`)).toBe(false);
    expect(isWebUrl(`https://example.com/${'a/'.repeat(32_000)}`)).toBe(true);
    expect(performance.now() - started).toBeLessThan(200);
  });

  it('accepts and refuses what the validator\'s expression did on ordinary values', () => {
    for (const ok of ['https://example.com', 'http://docs.example.co.uk:8080/a/b?c=d#e', 'ftp://user:pw@files.example.org/x', 'https://8.8.8.8/dns', 'https://bücher.de/']) expect([ok, isWebUrl(ok)]).toEqual([ok, true]);
    for (const bad of ['example.com', 'mailto:ana@example.com', 'http://localhost/', 'http://10.0.0.1/', 'http://192.168.1.1', 'https://example.c', 'https://exa mple.com', 'http://-a.com', 'https://example.com:1', '']) expect([bad, isWebUrl(bad)]).toEqual([bad, false]);
  });

  it('runs from before the change keep the validator\'s expression (asked only for a schema with the format)', () => {
    let asked = 0;
    const linearUrl = () => {
      asked += 1;
      return false;
    };
    expect(checkJsonSchema({ link: 'https://example.com' }, schema, { linearUrl })).toEqual([]);
    expect(asked).toBe(1);
    expect(checkJsonSchema({ n: 1 }, { type: 'object', properties: { n: { type: 'integer' } } }, { linearUrl })).toEqual([]);
    expect(asked).toBe(1);
  });
});
