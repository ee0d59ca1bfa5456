import type { ChatRequest, ScriptedStep, StepResponse } from '../../scripted-model';
import { SUMMARIZER_MARKER } from '../../activities/summarize-activity';
import { SessionSummary, emptySummary } from '../../workflows/session-summary';

export const isSummaryRequest = (req: ChatRequest): boolean =>
  req.messages.some((m) => m.role === 'system' && typeof m.content === 'string' && m.content.startsWith(SUMMARIZER_MARKER));

/**
 * Plays the summarizing model: merges the previous summary with numbered
 * lists and ids found in the evicted turns, as a careful model would.
 */
export function scriptedSummary(req: ChatRequest): StepResponse {
  const user = String(req.messages.find((m) => m.role === 'user')?.content ?? '');
  const prevJson = /Previous summary \(JSON\):\n(.*)\n\nPrevious summary as text/s.exec(user)?.[1] ?? '{}';
  const summary = SessionSummary.parse(JSON.parse(prevJson || '{}') ?? emptySummary());
  const transcript = user.split('New turns leaving the window:\n')[1] ?? '';
  let topic = 'options';
  let options: string[] = [];
  const flush = () => {
    if (options.length) summary.optionLists.push({ topic, options });
    options = [];
  };
  for (const line of transcript.split('\n')) {
    const item = /^\s*\d+\.\s+(.+)$/.exec(line);
    if (item) options.push(item[1]!.trim());
    else {
      flush();
      const said = /^\[turn-\d+\] (user|assistant): (.*)$/.exec(line);
      if (said) {
        topic = said[2]!.slice(0, 80) || topic;
        if (said[1] === 'user') summary.notes.push(`user said: ${said[2]!.slice(0, 200)}`);
      }
    }
  }
  flush();
  summary.notes = summary.notes.slice(-20);
  return { kind: 'json', value: summary };
}

/** One failed fold: the summarizer answers JSON that does not fit the summary schema, on all three attempts. */
export const failedFold: ScriptedStep = { times: 3, match: { systemIncludes: SUMMARIZER_MARKER }, respond: { kind: 'json', value: { userProfile: 'not a list' } } };

/**
 * A lane's script for five turns (`one` to `five`, window of one turn, folds
 * of one): the summarizer fails the folds after turns 2 and 3 (three
 * attempts each), none is asked after turn 4 (the fold waits, patch
 * `fold-backoff`), and the fold after turn 5 succeeds.
 */
export function foldBackoffScript(): ScriptedStep[] {
  const answer = (text: string) => ({ match: { lastUserMessage: text }, respond: { kind: 'text' as const, text: `${text} answered` } });
  return [
    answer('one'),
    answer('two'),
    failedFold,
    answer('three'),
    failedFold,
    answer('four'),
    answer('five'),
    { match: { systemIncludes: SUMMARIZER_MARKER }, respond: scriptedSummary },
  ];
}

/** A 500-character message: a turn of about 135 tokens, so two waiting for a fold are over a window budget of 200. */
export const longMessage = (n: number): string => `message ${n}: ${String(n).repeat(490)}`;

/**
 * A lane's script for five turns of `longMessage` (window of one turn and
 * 200 tokens, folds of one): the folds after turns 2 and 3 fail, the one
 * after turn 4 waits (backoff), so turns 1 and 2 go past the budget and
 * become summary notes (patch `unfolded-cap`); the fold after turn 5
 * succeeds.
 */
export function unfoldedCapScript(): ScriptedStep[] {
  const answer = (n: number) => ({ match: { lastUserMessage: longMessage(n) }, respond: { kind: 'text' as const, text: `answer ${n}` } });
  return [answer(1), answer(2), failedFold, answer(3), failedFold, answer(4), answer(5), { match: { systemIncludes: SUMMARIZER_MARKER }, respond: scriptedSummary }];
}

/** The session limits `unfoldedCapScript` is written for. */
export const UNFOLDED_CAP_LIMITS = { windowMaxTurns: 1, foldBatchTurns: 1, windowMaxTokens: 200 };
