import { StreamedToolCalls } from '../../activities/streamed-tool-calls';

const ids = (i: number) => `fallback_${i}`;
type Fragment = Parameters<StreamedToolCalls['add']>[0];
const fragments = (...f: unknown[]) => f as unknown as Fragment;

describe('tool calls assembled from a stream', () => {
  it('keeps calls apart by index, fragments of one call joined', () => {
    const calls = new StreamedToolCalls();
    calls.add(fragments({ index: 0, id: 'a', function: { name: 'get_weather', arguments: '{"city":' } }, { index: 1, id: 'b', function: { name: 'get_time', arguments: '' } }));
    calls.add(fragments({ index: 0, function: { arguments: '"Paris"}' } }, { index: 1, function: { arguments: '{"tz":"UTC"}' } }));
    expect(calls.list(ids).map((c) => [c.id, c.function.name, c.function.arguments])).toEqual([
      ['a', 'get_weather', '{"city":"Paris"}'],
      ['b', 'get_time', '{"tz":"UTC"}'],
    ]);
  });

  it('without indexes (as some servers stream): a new id starts a call of its own, and fragments without one continue the last', () => {
    const calls = new StreamedToolCalls();
    calls.add(fragments({ id: 'a', function: { name: 'get_weather', arguments: '{"city":' } }));
    calls.add(fragments({ function: { arguments: '"Paris"}' } }));
    calls.add(fragments({ id: 'b', function: { name: 'get_time', arguments: '{"tz":"UTC"}' } }));
    expect(calls.list(ids).map((c) => [c.id, c.function.name, c.function.arguments])).toEqual([
      ['a', 'get_weather', '{"city":"Paris"}'],
      ['b', 'get_time', '{"tz":"UTC"}'],
    ]);
  });

  it('takes only strings: an id that is a list gets the fallback id, a name or arguments of another type are left out', () => {
    const calls = new StreamedToolCalls();
    calls.add(fragments({ index: 0, id: ['x'], function: { name: 5, arguments: '{}' } }, null, 'junk', { index: 'one', function: null }));
    expect(calls.list(ids)).toEqual([{ id: 'fallback_0', type: 'function', function: { name: '', arguments: '{}' } }]);
  });

  it('a name repeated in every fragment (some servers and gateways) is the name, not the name twice', () => {
    const calls = new StreamedToolCalls();
    calls.add(fragments({ index: 0, id: 'a', type: 'function', function: { name: 'read_file', arguments: '' } }));
    calls.add(fragments({ index: 0, id: 'a', type: 'function', function: { name: 'read_file', arguments: '{"path":' } }));
    calls.add(fragments({ index: 0, id: 'a', type: 'function', function: { name: 'read_file', arguments: '"/tmp/x"}' } }));
    expect(calls.list(ids).map((c) => [c.id, c.function.name, c.function.arguments])).toEqual([['a', 'read_file', '{"path":"/tmp/x"}']]);
  });

  it('complete arguments sent again whole in a later fragment are taken once', () => {
    const calls = new StreamedToolCalls();
    calls.add(fragments({ index: 0, id: 'a', function: { name: 'get_time', arguments: '{"tz":"UTC"}' } }));
    calls.add(fragments({ index: 0, function: { arguments: '{"tz":"UTC"}' } }));
    // A fragment that only looks the same as an incomplete start is more of the arguments.
    calls.add(fragments({ index: 1, id: 'b', function: { name: 'echo', arguments: '{"s":"' } }));
    calls.add(fragments({ index: 1, function: { arguments: '{"s":"' } }));
    expect(calls.list(ids).map((c) => c.function.arguments)).toEqual(['{"tz":"UTC"}', '{"s":"{"s":"']);
  });
});
