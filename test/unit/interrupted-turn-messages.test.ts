import type { ChatMessage } from '../../workflows/chat-message';
import { withAnsweredCalls } from '../../workflows/session-turn';

const calls = (...ids: string[]): ChatMessage => ({ role: 'assistant', content: null, tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: 'local_note', arguments: '{}' } })) });
const result = (id: string, content = 'ok'): ChatMessage => ({ role: 'tool', tool_call_id: id, content });

describe("an interrupted turn's messages", () => {
  it('keep every step whose calls all have results, and drop a step whose calls do not (the model API refuses a call without its result)', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'go' },
      calls('a', 'b'),
      result('a'),
      result('b'),
      { role: 'assistant', content: 'half way' },
      calls('c', 'd'),
      result('c'),
    ];
    expect(withAnsweredCalls(messages)).toEqual(messages.slice(0, 5));
  });

  it('match results within their step: an id the model used again in a later step does not answer it', () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'go' }, calls('call_1'), result('call_1'), calls('call_1')];
    expect(withAnsweredCalls(messages)).toEqual(messages.slice(0, 3));
  });

  it('drop a tool result that follows no call', () => {
    expect(withAnsweredCalls([{ role: 'user', content: 'go' }, result('x')])).toEqual([{ role: 'user', content: 'go' }]);
  });
});
