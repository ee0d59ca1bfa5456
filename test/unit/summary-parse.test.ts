import { parseSummary } from '../../activities/summarize-activity';
import { SessionSummary } from '../../workflows/session-summary';

const previous = SessionSummary.parse({ userProfile: ['Ana, release manager'], identifiers: [{ label: 'ticket', value: 'OPS-77' }] });
const empty = SessionSummary.parse({});

describe('a summary answer from weaker models', () => {
  it.each([
    ['{}', '{}'],
    ['a summary under another key', '{"summary":"Ana manages releases."}'],
    ['snake_case sections', '{"user_profile":["Ana"]}'],
    ['a refusal object', '{"error":"I cannot help with that."}'],
    ['a list', '["Ana"]'],
  ])('%s is refused (retryable), not taken as an empty summary that erases the previous one', (_name, content) => {
    expect(() => parseSummary(content, previous)).toThrow(/none of the sections/);
  });

  it('an empty merge of a summary that held items is refused; an empty first summary is fine', () => {
    const allEmpty = JSON.stringify(empty);
    expect(() => parseSummary(allEmpty, previous)).toThrow(/merged summary is empty/);
    expect(parseSummary(allEmpty, empty)).toEqual(empty);
  });

  it('JSON in a Markdown fence is read', () => {
    const fenced = '```json\n{"userProfile":["Ana, release manager"],"decisions":["ship on Friday"]}\n```';
    expect(parseSummary(fenced, previous)).toMatchObject({ userProfile: ['Ana, release manager'], decisions: ['ship on Friday'] });
  });
});
