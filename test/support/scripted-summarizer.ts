import type { ChatRequest, StepResponse } from '../../scripted-model';
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
