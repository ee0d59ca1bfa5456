import { ArchivedSession } from '../../activities/session-archive';
import { MAX_PIN_TEXTS_BYTES, ToolPins } from '../../workflows/tool-pins';
import type { ToolSpec } from '../../workflows/tool-spec';

const spec = (name: string, description: string, hash = description, parameters: Record<string, unknown> = { type: 'object' }): ToolSpec => ({
  name,
  description,
  parameters,
  risk: 'read',
  requiresConfirmation: false,
  timeoutMs: 1_000,
  maxAttempts: 1,
  source: 'mcp',
  hash,
});

describe('ToolPins', () => {
  it('offers a changed tool with its pinned text until the change is approved', () => {
    const pins = new ToolPins();
    pins.observe([spec('t', 'old')]);
    const changed = spec('t', 'new', 'new', { type: 'object', properties: { x: { type: 'string' } } });
    expect(pins.changed(changed)).toBe(true);
    expect(pins.offer([changed], true)).toEqual([{ name: 't', description: 'old', parameters: { type: 'object' } }]);
    expect(pins.offer([changed], false)[0]?.description).toBe('new');
    expect(pins.describeChange(changed)).toEqual({
      previousDescription: 'old',
      description: 'new',
      parametersChanged: true,
      previousParameters: { type: 'object' },
      parameters: changed.parameters,
    });
    pins.approve(changed);
    expect(pins.changed(changed)).toBe(false);
    expect(pins.offer([changed], true)[0]?.description).toBe('new');
  });

  it('offers the same object for the same tool and text step after step, and a new one when the text offered changes', () => {
    // The prompt ledger finds parts it has sent by identity: a new offer object each step would be turned into JSON again.
    const pins = new ToolPins();
    const a = spec('a', 'first');
    const b = spec('b', 'second');
    pins.observe([a, b]);
    const step1 = pins.offer([a, b], true);
    const step2 = pins.offer([a, b], true);
    expect(step2[0]).toBe(step1[0]);
    expect(step2[1]).toBe(step1[1]);
    // A catalog read that brings the tool anew (same text) is a new object: offered anew, equal in content.
    const reread = spec('a', 'first');
    expect(pins.offer([reread], true)[0]).not.toBe(step1[0]);
    expect(pins.offer([reread], true)[0]).toEqual(step1[0]);
    // A changed tool: its pinned text, the same object each step until the change is approved.
    const changed = spec('a', 'changed');
    const held1 = pins.offer([changed], true)[0];
    expect(held1).toEqual({ name: 'a', description: 'first', parameters: { type: 'object' } });
    expect(pins.offer([changed], true)[0]).toBe(held1);
    pins.approve(changed);
    const approved = pins.offer([changed], true)[0];
    expect(approved).toEqual({ name: 'a', description: 'changed', parameters: { type: 'object' } });
    expect(pins.offer([changed], true)[0]).toBe(approved);
    // With re-approval off, the tool's own text.
    expect(pins.offer([changed], false)[0]).toBe(approved);
  });

  it('withholds a changed tool whose pinned text was too large to keep', () => {
    const pins = new ToolPins();
    pins.observe([spec('big', 'x'.repeat(20_000), 'h1')]);
    expect(pins.textEntries()).toEqual([]);
    expect(pins.offer([spec('big', 'injected', 'h2')], true)).toEqual([]);
    expect(pins.describeChange(spec('big', 'injected', 'h2'))).toEqual({ description: 'injected', parametersChanged: true, parameters: { type: 'object' } });
  });

  it('keeps all texts together within the bound', () => {
    const pins = new ToolPins();
    pins.observe(Array.from({ length: 20 }, (_, i) => spec(`t${i}`, 'y'.repeat(10_000), `h${i}`)));
    expect(pins.size).toBe(20);
    const kept = pins.textEntries();
    expect(kept.length).toBeLessThan(20);
    expect(JSON.stringify(kept).length).toBeLessThanOrEqual(MAX_PIN_TEXTS_BYTES + 1_000);
  });

  it('fills in the text of a pin carried from before texts were kept, when the tool is unchanged', () => {
    const pins = new ToolPins([['t', 'h']]);
    pins.observe([spec('t', 'same', 'h')]);
    expect(pins.textEntries()).toEqual([['t', { description: 'same', parameters: { type: 'object' } }]]);
  });

  it('round-trips through the archive document, schema keys MongoDB would refuse included', () => {
    const pins = new ToolPins();
    const parameters = { type: 'object', properties: { 'a.b': { $ref: '#/$defs/x' } }, $defs: { x: { type: 'string' } } };
    pins.observe([spec('t', 'old', 'h', parameters), spec('u', 'other', 'hu')]);
    const archived = pins.toArchive();
    expect(archived.every((p) => p.parametersJson === undefined || typeof p.parametersJson === 'string')).toBe(true);
    const restored = ToolPins.fromArchive(archived);
    expect(restored.hashEntries()).toEqual(pins.hashEntries());
    expect(restored.textEntries()).toEqual(pins.textEntries());
  });

  it('an archive written before pins were kept still parses, with no pins', () => {
    const old = {
      sessionId: 's',
      namespace: { tenant: 'acme', user: 'ana' },
      channel: 'api',
      metadata: {},
      createdAt: '2025-01-01T00:00:00Z',
      archivedAt: '2025-01-01T00:00:00Z',
      expiresAt: '2025-02-01T00:00:00Z',
      status: 'archived',
      version: 1,
      turnSeq: 1,
      window: [],
      summary: {},
      keyFacts: [],
      toolCalls: [],
      counters: { turns: 1, modelCalls: 1, toolCalls: 0, toolFailures: 0, interrupts: 0, confirmationsRequested: 0, continuedAsNew: 0, summariesFolded: 0, summaryFailures: 0 },
    };
    const parsed = ArchivedSession.parse(old);
    expect(parsed.toolPins).toBeUndefined();
  });
});
