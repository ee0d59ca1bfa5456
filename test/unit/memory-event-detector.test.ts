import { detectMemoryEvent, shouldExtractNow } from '../../activities/memory/event-detector';

describe('memory event detector', () => {
  it.each([
    ['Remember that I take my coffee black', 'explicit_remember'],
    ["Please don't forget my flight is on Tuesday", 'explicit_remember'],
    ['Actually, my name is Ana, not Anna', 'correction'],
    ["That's no longer true, I moved to Porto", 'correction'],
    ['My name is Ana Lima', 'self_fact'],
    ['I live in Lisbon', 'self_fact'],
    ["I'm vegetarian", 'self_fact'],
    ['From now on answer in Portuguese', 'standing_rule'],
    ['Never use emojis with me', 'standing_rule'],
    ['I prefer short answers', 'preference'],
    ["I don't like long emails", 'preference'],
    ['My goal is to run a marathon in May', 'goal'],
    ["I'm travelling to Berlin at the end of the month", 'goal'],
  ])('"%s" triggers %s', (text, event) => {
    expect(detectMemoryEvent(text)).toBe(event);
    expect(shouldExtractNow(text)).toBe(true);
  });

  it.each(['hello!', 'What is the capital of Australia?', 'thanks, that helps', 'Recommend weekend activities for a friend', 'Can you make this shorter?'])(
    '"%s" waits for the periodic pass',
    (text) => {
      expect(shouldExtractNow(text)).toBe(false);
    },
  );
});
