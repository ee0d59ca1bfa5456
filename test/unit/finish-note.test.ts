import { finishNote } from '../../workflows/react-turn';

const call = { id: 'c1', type: 'function' as const, function: { name: 'local_note', arguments: '{"text":' } };

describe('what the end of an answer says', () => {
  it('a whole answer, with text or with calls, says nothing more', () => {
    expect(finishNote({ content: 'Done.', toolCalls: [], finishReason: 'stop' })).toBeUndefined();
    expect(finishNote({ content: null, toolCalls: [call], finishReason: 'tool_calls' })).toBeUndefined();
  });

  it('an answer cut at the output limit warns that what it has may be cut: text, arguments, or both', () => {
    expect(finishNote({ content: 'The first half', toolCalls: [call], finishReason: 'length' })).toEqual({
      errorType: 'ModelOutputCut',
      message: expect.stringMatching(/: the text may end mid-sentence, and a tool call's arguments may be cut\. Next step: raise the model's output limit/),
    });
    expect(finishNote({ content: null, toolCalls: [call], finishReason: 'length' })?.message).toMatch(/\(finish_reason "length"\): a tool call's arguments may be cut\. Next/);
    expect(finishNote({ content: 'The first half', toolCalls: [], finishReason: 'length' })?.message).toMatch(/: the text may end mid-sentence\. Next/);
    // Whitespace after the reasoning is no answer.
    expect(finishNote({ content: '\n\n', toolCalls: [], finishReason: 'length', reasoningChars: 90 })?.message).toMatch(/output limit after 90 characters of reasoning before any answer/);
  });

  it('an empty last step after steps that gave text leaves the turn its answer: nothing to say', () => {
    expect(finishNote({ content: '', toolCalls: [], finishReason: 'stop' }, true)).toBeUndefined();
    expect(finishNote({ content: '', toolCalls: [], finishReason: 'stop' }, false)?.errorType).toBe('ModelOutputInvalid');
  });

  it('an answer the session stopped reading names the session\'s limits and the reasoning', () => {
    expect(finishNote({ content: '', toolCalls: [], finishReason: 'length', stoppedReading: true, reasoningChars: 400_001 })?.message).toMatch(
      /stopped reading the model's answer past what one step keeps \(100000 characters of text, 400000 of reasoning, .*\) after 400001 characters of reasoning/,
    );
  });

  it('an empty answer names the finish reason, and the reasoning it came after', () => {
    expect(finishNote({ content: '', toolCalls: [], finishReason: 'stop', reasoningChars: 12 })?.message).toMatch(/neither text nor a tool call after 12 characters of reasoning \(finish_reason "stop"\)/);
    expect(finishNote({ content: null, toolCalls: [], finishReason: 'content_filter' })?.message).toMatch(/it may be cut short, and here it is empty/);
  });
});
