import { finishNote } from '../../workflows/react-turn';

const call = { id: 'c1', type: 'function' as const, function: { name: 'local_note', arguments: '{"text":' } };

describe('what the end of an answer says', () => {
  it('a whole answer, with text or with calls, says nothing more', () => {
    expect(finishNote({ content: 'Done.', toolCalls: [], finishReason: 'stop' })).toBeUndefined();
    expect(finishNote({ content: null, toolCalls: [call], finishReason: 'tool_calls' })).toBeUndefined();
  });

  it('an answer cut at the output limit warns that text and arguments may be cut', () => {
    expect(finishNote({ content: 'The first half', toolCalls: [call], finishReason: 'length' })).toEqual({
      errorType: 'ModelOutputCut',
      message: expect.stringMatching(/may end mid-sentence, and a tool call's arguments may be cut\. Next step: raise the model's output limit/),
    });
  });

  it('an empty answer names the finish reason, and the reasoning it came after', () => {
    expect(finishNote({ content: '', toolCalls: [], finishReason: 'stop', reasoningChars: 12 })?.message).toMatch(/neither text nor a tool call after 12 characters of reasoning \(finish_reason "stop"\)/);
    expect(finishNote({ content: null, toolCalls: [], finishReason: 'content_filter' })?.message).toMatch(/it may be cut short, and here it is empty/);
  });
});
