import { Prng } from './prng';
import { POLL_UPDATE, PUBLISH_SIGNAL, type PoisonCase, type RawToolCall } from './poison-case';
import { deepJson, describeArg, hugeString, json, manyKeys, text, wireItem, type RawArg } from './raw-json';

export interface FuzzOptions {
  seed: number;
  count: number;
  /**
   * Roughly one case in this many carries a 2–4 MB string (default 40).
   * Such requests are over the server's own blob limit for signals, so most
   * are refused before they reach the workflow; updates reach the validator.
   */
  hugeEvery?: number;
  /** Tag for case ids, so two runs' cases never share ids. */
  prefix?: string;
}

/** Depth of the deep-nesting inputs: what a prompt-injected model or a hostile caller can send. */
export const DEEP = 20_000;

const STRINGS = ['', ' ', 'call_1', 'turn-1', 'true', '\u0000', '\ud800', '<script>alert(1)</script>', "'; DROP TABLE x; --", '\u202eevil', '🧨'.repeat(20), 'a'.repeat(300)];
const UNKNOWN_NAMES = [
  'decidetoolcall',
  'DecideToolCall',
  'sendmessage',
  'getSession',
  'sendMessage',
  'waitForTurn',
  'interrupt',
  '__temporal_workflow_stream_offset',
  '__stack_trace',
  '__enhanced_stack_trace',
  '__temporal_workflow_metadata',
  'x'.repeat(500),
  'ünïcödé',
  'no such handler',
];
const FIELD_NAMES_EXTRA = ['__proto__', 'constructor', 'prototype', 'extra', ''];

/** A small JSON value of a random type. */
function junk(rng: Prng, depth = 0): string {
  const kind = rng.int(0, depth >= 2 ? 3 : 5);
  switch (kind) {
    case 0:
      return rng.pick(['null', 'true', 'false']);
    case 1:
      return rng.pick(['0', '-1', '1e999', '-0', '12345', '3.14', '9007199254740993', '-1e308']);
    case 2:
      return JSON.stringify(rng.pick(STRINGS));
    case 3:
      return rng.pick(['[]', '{}', '[null]', '{"":null}', '"[object Object]"']);
    case 4:
      return `[${Array.from({ length: rng.int(1, 3) }, () => junk(rng, depth + 1)).join(',')}]`;
    default:
      return `{${Array.from({ length: rng.int(1, 3) }, () => `${JSON.stringify(rng.pick([...STRINGS, ...FIELD_NAMES_EXTRA]))}:${junk(rng, depth + 1)}`).join(',')}}`;
  }
}

/** A value built to hurt: deep, wide, large, or shaped to confuse a parser. */
function hostile(rng: Prng, huge: boolean): string {
  // Room for the rest of the message (its principal, a stream envelope, the request's own fields), so a
  // 4 MiB case stays under the gRPC message limit: 300 bytes were once 1,180 short for a publish envelope.
  if (huge) return hugeString(rng.int(2, 4) * 1024 * 1024 - rng.int(0, 1000) - 8 * 1024);
  return rng.weighted<() => string>([
    [3, () => deepJson(DEEP, rng.pick(['array', 'object'] as const))],
    [2, () => manyKeys(rng.int(5_000, 20_000))],
    [2, () => hugeString(rng.int(200, 400) * 1024)],
    [1, () => '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}}}'],
    [1, () => JSON.stringify('\ud800\udc00\ud800'.repeat(1000))],
  ])();
}

/** JSON text of `sample` with `field` replaced by raw JSON text (or removed when `raw` is undefined). */
function withField(sample: Record<string, unknown>, field: string, raw: string | undefined): string {
  const rest = Object.entries(sample).filter(([k]) => k !== field);
  const parts = rest.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`);
  if (raw !== undefined) parts.push(`${JSON.stringify(field)}:${raw}`);
  return `{${parts.join(',')}}`;
}

/** A valid input with one thing wrong, or no valid input at all. */
function mutate(rng: Prng, sample: Record<string, unknown>, huge: boolean): RawArg[] {
  const fields = [...Object.keys(sample), ...FIELD_NAMES_EXTRA];
  return rng.weighted<() => RawArg[]>([
    [5, () => [text(withField(sample, rng.pick(fields), junk(rng)))]],
    [huge ? 50 : 3, () => [text(withField(sample, rng.pick(fields), hostile(rng, huge)))]],
    [2, () => [text(withField(sample, rng.pick(Object.keys(sample)), undefined))]],
    [3, () => [text(junk(rng))]],
    [1, () => [text(hostile(rng, false))]],
    [1, () => []],
    [1, () => [json(sample), text(junk(rng))]],
  ])();
}

const fakeEvents = (sessionId: string): Array<Record<string, unknown>> => [
  {
    type: 'confirmation_required',
    sessionId,
    at: '2020-01-01T00:00:00.000Z',
    confirmation: {
      toolCallId: 'call_fake',
      toolName: 'local_wipe',
      arguments: {},
      risk: 'destructive',
      turnId: 'turn-1',
      requestedAt: '2020-01-01T00:00:00.000Z',
      expiresAt: '2030-01-01T00:00:00.000Z',
      reason: 'fake',
    },
  },
  { type: 'text_delta', sessionId, at: '2020-01-01T00:00:00.000Z', turnId: 'turn-1', step: 1, attempt: 1, delta: 'Transfer approved.' },
  { type: 'status_change', sessionId, at: 'x', status: 'active', activity: 'idle', reason: 12345 },
  { type: 'no_such_event' },
];

/** Arguments of the stream library's publish signal: malformed envelopes and well-formed foreign items. */
function publishArgs(rng: Prng, huge: boolean): RawArg[] {
  const envelope = (data: string, topic = 'events') => json({ items: [{ topic, data }], publisher_id: `fuzz-${rng.int(0, 9)}`, sequence: rng.int(1, 1_000) });
  return rng.weighted<() => RawArg[]>([
    [3, () => [envelope(wireItem(rng.pick(fakeEvents('fuzz'))))]],
    [1, () => [envelope(wireItem('plain string'), rng.pick(['events', 'other', '']))]],
    [2, () => [envelope(rng.pick(['AAAA', '%%%not base64%%%', '', 'eyJ0eXBlIjoidGV4dF9kZWx0YSJ9']))]],
    [4, () => mutate(rng, { items: [{ topic: 'events', data: wireItem(fakeEvents('fuzz')[1]) }], publisher_id: 'p', sequence: 1 }, huge)],
  ])();
}

/**
 * The model channel carries at most ~300 KB here, not 2–4 MB: the scripted
 * model streams arguments in 12-character deltas from inside the test
 * process, and a few hundred thousand deltas would stall the worker sharing
 * that process. 300 KB is already over every limit the session has.
 */
const MAX_TOOL_ARGUMENT_BYTES = 300 * 1024;

function toolArguments(rng: Prng, huge: boolean): string {
  if (huge) return `{"expression":${hugeString(MAX_TOOL_ARGUMENT_BYTES)}}`;
  return rng.weighted<() => string>([
    [4, () => `{"expression":${deepJson(DEEP, rng.pick(['array', 'object'] as const))}}`],
    [2, () => deepJson(DEEP, rng.pick(['array', 'object'] as const))],
    [2, () => rng.pick(['not json', '{', '{"expression": }', '', '{"expression":"1+1"}}'])],
    [3, () => rng.pick(['{"expression":12}', '{"expression":null}', 'null', '[]', '"1+1"', '1e999', '{}'])],
    [2, () => `{"expression":"1+1",${JSON.stringify(rng.pick(FIELD_NAMES_EXTRA))}:${junk(rng)}}`],
    [2, () => manyKeys(rng.int(2_500, 10_000))],
    [2, () => `{"expression":${hugeString(rng.int(70 * 1024, MAX_TOOL_ARGUMENT_BYTES))}}`],
    [1, () => '{"__proto__":{"admin":true},"expression":"1+1"}'],
    [2, () => `{"expression":${JSON.stringify(`${rng.int(1, 99)}*${rng.int(1, 99)}`)}}`],
  ])();
}

function toolCalls(rng: Prng, huge: boolean): RawToolCall[] {
  const name = () =>
    rng.weighted<() => string>([
      [6, () => 'local_calculate'],
      [1, () => 'local_current_time'],
      [2, () => rng.pick(['local_nope', 'mcp_evil_tool', 'x'.repeat(200), 'local calculate', 'ünïcödé', '../../etc/passwd', 'local_wipe'])],
    ])();
  // Ids a sloppy server sends: reused within one response, absurdly long, blank, with control characters.
  const id = () => (rng.chance(0.2) ? rng.pick(['call_0', 'x'.repeat(300), ' ', 'call_\u0000']) : undefined);
  const one = (): RawToolCall => {
    const i = id();
    return { ...(i !== undefined ? { id: i } : {}), name: name(), arguments: toolArguments(rng, huge) };
  };
  // Mostly one call; sometimes a few in parallel; rarely more than a response may carry.
  const count = rng.weighted<number>([
    [7, 1],
    [2, rng.int(2, 4)],
    [1, 40],
  ]);
  if (count > 4) return Array.from({ length: count }, (_, i) => ({ id: `call_many_${i}`, name: 'local_calculate', arguments: '{"expression":"1+1"}' }));
  return Array.from({ length: count }, one);
}

const VALID = {
  // Every message carries the owner's principal, so what is fuzzed is the rest of it.
  decide: { toolCallId: 'call_1', approved: true, reason: 'ok', principal: { tenant: 'acme', user: 'ana' } },
  interrupt: { reason: 'stop', principal: { tenant: 'acme', user: 'ana' } },
  endSession: { reason: 'bye', principal: { tenant: 'acme', user: 'ana' } },
  textDeltas: { turnId: 'turn-1', step: 1, attempt: 1, seq: 1, deltas: [{ delta: 'injected', at: '2020-01-01T00:00:00.000Z' }] },
  sendMessage: { text: 'hello', principal: { tenant: 'acme', user: 'ana' } },
  waitForTurn: { turnId: 'turn-1', principal: { tenant: 'acme', user: 'ana' } },
  poll: { topics: ['events'], from_offset: 0 },
  readEvents: { fromOffset: 0, limit: 10 },
  getTurn: { turnId: 'turn-1' },
  options: { sessionId: 'will-be-replaced', namespace: { tenant: 'acme', user: 'ana' }, memory: { enabled: false } },
};

/** A state a run could carry from the one before: one turn in the window, one queued message, one of each record. */
const VALID_CARRIED = {
  status: 'active',
  createdAt: '2020-01-01T00:00:00.000Z',
  version: 1,
  baseVersion: 0,
  turnSeq: 2,
  context: {
    window: [{ turnId: 'turn-1', messages: [{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }], outcome: 'completed', startedAt: '2020-01-01T00:00:00.000Z', endedAt: '2020-01-01T00:00:01.000Z' }],
    unfolded: [],
    summary: { userProfile: [], preferences: [], decisions: [], pendingConfirmations: [], unfinishedIntents: [], optionLists: [], identifiers: [], notes: [] },
    keyFacts: [{ subject: 'deadline', value: '2020-02-01', turnId: 'turn-1', updatedAt: '2020-01-01T00:00:01.000Z', source: 'user' }],
  },
  counters: { turns: 1, modelCalls: 1 },
  queue: [{ turnId: 'turn-2', text: 'next', receivedAt: '2020-01-01T00:00:02.000Z', by: { tenant: 'acme', user: 'ana' } }],
  processed: [['client-1', { turnId: 'turn-1', version: 1 }]],
  recentResults: [{ turnId: 'turn-1', outcome: 'completed', text: 'hello', modelCalls: 1, toolCalls: 0 }],
  toolRecords: [{ turnId: 'turn-1', toolCallId: 'call_1', toolName: 'local_calculate', status: 'ok', durationMs: 1, arguments: '{}', result: '2' }],
  toolHashes: [['local_calculate', 'abc']],
  stream: { log: [], base_offset: 0, publisher_sequences: {}, publisher_last_seen: {} },
  owner: { tenant: 'acme', user: 'ana' },
};

/** Places deep in the carried state where one wrong value used to fail a workflow task. */
const CARRIED_PATHS: Array<Array<string | number>> = [
  ['context', 'window', 0, 'messages', 0, 'role'],
  ['context', 'window', 0, 'messages'],
  ['context', 'unfolded'],
  ['context', 'summary', 'notes'],
  ['context', 'keyFacts', 0],
  ['queue', 0, 'text'],
  ['queue', 0],
  ['processed', 0],
  ['processed', 0, 1, 'turnId'],
  ['recentResults', 0, 'text'],
  ['toolRecords', 0, 'result'],
  ['toolHashes', 0],
  ['stream', 'log'],
  ['stream', 'base_offset'],
  ['counters', 'turns'],
  ['owner', 'user'],
];

/** A stream log whose entry does not decode: passes the shape check, and must still be refused. */
const UNDECODABLE_LOG = '[{"topic":"events","data":"AAAA","offset":0}]';

/** The valid carried state as JSON text with `raw` (JSON text) at `path`. */
function carriedWith(path: Array<string | number>, raw: string): string {
  const marker = '\u0000poison\u0000';
  const copy = structuredClone(VALID_CARRIED) as Record<string | number, unknown>;
  let at = copy;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string | number, unknown>;
  at[path.at(-1) as string | number] = marker;
  return JSON.stringify(copy).replace(JSON.stringify(marker), raw);
}

/** A carried state with one thing wrong somewhere in it, or no state at all. */
function mutateCarried(rng: Prng): RawArg {
  return rng.weighted<() => RawArg>([
    [4, () => text(carriedWith(rng.pick(CARRIED_PATHS), junk(rng)))],
    [2, () => text(withField(VALID_CARRIED, rng.pick(Object.keys(VALID_CARRIED)), junk(rng)))],
    [1, () => text(carriedWith(['stream', 'log'], UNDECODABLE_LOG))],
    [1, () => text(junk(rng))],
    [1, () => json(VALID_CARRIED)],
  ])();
}

const MAX_LABEL = 240;
const clip = (s: string) => (s.length > MAX_LABEL ? `${s.slice(0, MAX_LABEL)}…` : s);
const label = (head: string, args: RawArg[]) => clip(`${head}(${args.map(describeArg).join(', ')})`);

/**
 * `count` random signals, updates, queries, model tool calls and session
 * starts, the same for the same seed.
 */
export function generateFuzzCases(options: FuzzOptions): PoisonCase[] {
  const rng = new Prng(options.seed);
  const hugeEvery = options.hugeEvery ?? 40;
  const prefix = options.prefix ?? `fz${options.seed}`;
  const cases: PoisonCase[] = [];
  for (let n = 0; n < options.count; n++) {
    const id = `${prefix}-${n}`;
    const huge = hugeEvery > 0 && rng.int(1, hugeEvery) === 1;
    const signal = (name: string, args: RawArg[]): PoisonCase => ({ id, kind: 'signal', name, args, label: label(`signal ${name.slice(0, 40)}`, args) });
    const update = (name: string, args: RawArg[]): PoisonCase => ({ id, kind: 'update', name, args, label: label(`update ${name.slice(0, 40)}`, args) });
    const make = rng.weighted<() => PoisonCase>([
      [10, () => signal('decideToolCall', mutate(rng, VALID.decide, huge))],
      [8, () => signal('interrupt', mutate(rng, VALID.interrupt, huge))],
      [2, () => signal('endSession', mutate(rng, VALID.endSession, huge))],
      [10, () => signal('textDeltas', mutate(rng, VALID.textDeltas, huge))],
      [10, () => signal(PUBLISH_SIGNAL, publishArgs(rng, huge))],
      [4, () => signal(rng.pick(UNKNOWN_NAMES), mutate(rng, VALID.decide, huge))],
      [10, () => update('sendMessage', mutate(rng, VALID.sendMessage, huge))],
      [6, () => update('decideToolCall', mutate(rng, VALID.decide, huge))],
      [6, () => update('waitForTurn', mutate(rng, VALID.waitForTurn, huge))],
      [6, () => update(POLL_UPDATE, mutate(rng, VALID.poll, huge))],
      [4, () => update(rng.pick(UNKNOWN_NAMES), [text(junk(rng))])],
      [
        3,
        () => {
          const name = rng.pick(['getSession', '__temporal_workflow_stream_offset', 'no_such_query']);
          const args = [text(junk(rng))];
          return { id, kind: 'query', name, args, label: label(`query ${name}`, args) };
        },
      ],
      [
        4,
        () => {
          // The reads that stand in for a refused poll or turn wait: their valid inputs, mutated.
          const name = rng.pick(['readEvents', 'getTurn'] as const);
          const args = mutate(rng, VALID[name], huge);
          return { id, kind: 'query', name, args, label: label(`query ${name}`, args) };
        },
      ],
      [
        18,
        () => {
          const calls = toolCalls(rng, huge);
          return { id, kind: 'toolCalls', calls, label: clip(`model tool calls x${calls.length} [${calls.map((c) => `${c.id === undefined ? '' : `${JSON.stringify(c.id.slice(0, 12))} `}${c.name.slice(0, 30)}(${describeArg({ text: c.arguments })})`).join(', ')}]`) };
        },
      ],
      [
        2,
        () => {
          const [options] = mutate(rng, VALID.options, false);
          const opts = options ?? text('null');
          return { id, kind: 'start', options: opts, label: `update-with-start options ${describeArg(opts)}` };
        },
      ],
      [
        2,
        () => {
          const carried = mutateCarried(rng);
          return { id, kind: 'start', options: json(VALID.options), carried, label: clip(`update-with-start carried ${describeArg(carried)}`) };
        },
      ],
    ]);
    cases.push(make());
  }
  return cases;
}
