import { parseExposition, total } from '../../api/prometheus-text';

const TEXT = `# HELP agent_turns_total Turns by outcome
# TYPE agent_turns_total counter
agent_turns_total{outcome="completed",taskQueue="a"} 3
agent_turns_total{outcome="failed",taskQueue="a"} 1
agent_turns_total{outcome="completed",taskQueue="b"} 5
# HELP agent_turn_steps Steps per turn
# TYPE agent_turn_steps histogram
agent_turn_steps_bucket{taskQueue="a",le="1"} 2
agent_turn_steps_bucket{taskQueue="a",le="+Inf"} 4
agent_turn_steps_sum{taskQueue="a"} 6
agent_turn_steps_count{taskQueue="a"} 4
agent_turn_steps_bucket{taskQueue="b",le="1"} 1
agent_turn_steps_bucket{taskQueue="b",le="+Inf"} 1
agent_turn_steps_sum{taskQueue="b"} 1
agent_turn_steps_count{taskQueue="b"} 1
# HELP open_things Open things
# TYPE open_things gauge
open_things{path="C:\\\\DIR \\"x\\""} 2.5
`;

describe('parseExposition', () => {
  const m = parseExposition(TEXT);

  it('keeps every label set of a counter and a gauge, with escaped label values', () => {
    expect(m.get('agent_turns_total')?.type).toBe('counter');
    expect(total(m, 'agent_turns_total', { outcome: 'completed' })).toBe(8);
    expect(total(m, 'agent_turns_total', { taskQueue: 'a' })).toBe(4);
    expect(m.get('open_things')?.metrics).toEqual([{ labels: { path: 'C:\\DIR "x"' }, value: 2.5 }]);
  });

  it('puts each label set of a histogram together: buckets, count and sum', () => {
    const h = m.get('agent_turn_steps')!;
    expect(h.type).toBe('histogram');
    expect(h.help).toBe('Steps per turn');
    expect(h.metrics).toEqual([
      { labels: { taskQueue: 'a' }, buckets: { '1': 2, '+Inf': 4 }, sum: 6, count: 4 },
      { labels: { taskQueue: 'b' }, buckets: { '1': 1, '+Inf': 1 }, sum: 1, count: 1 },
    ]);
    expect(total(m, 'agent_turn_steps', { taskQueue: 'a' }, 'count')).toBe(4);
    expect(total(m, 'agent_turn_steps', {}, 'sum')).toBe(7);
  });

  it('refuses a malformed line rather than guessing', () => {
    expect(() => parseExposition('# TYPE x counter\nx{a="1" 2\n')).toThrow();
  });
});
