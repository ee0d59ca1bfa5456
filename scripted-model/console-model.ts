import { SUMMARIZER_MARKER } from '../activities/summarize-activity';
import { SessionSummary, emptySummary } from '../workflows/session-summary';
import { lastUserMessage, messageText, offeredToolNames, type ChatRequest } from './chat-request';
import type { StepResponse } from './scenario';

/*
 * The model `npm start` plays when none is configured: enough for a person to
 * try every part of the console (streamed text, parallel tool calls, a
 * destructive call held for approval) without an API key. It answers from
 * the request alone, so any number of sessions can use it at once.
 */

const HELP =
  'I am the scripted model (no OPENAI_API_KEY is set). Try "what time is it in Paris and Tokyo?" (two tool calls at once), ' +
  '"book a meeting tomorrow" (a tool call), or "cancel that meeting" (a destructive call that waits for an approver).';

const say = (text: string): StepResponse => ({ kind: 'text', text, chunkSize: 4, delayMs: 25 });

function isJsonRequest(req: ChatRequest): boolean {
  return (req as { response_format?: { type?: string } }).response_format?.type === 'json_object';
}

/** The summarizer asks to fold turns into the summary: keep what it had (the console model does not summarize). */
function keepSummary(req: ChatRequest): StepResponse {
  const user = messageText(req.messages.find((m) => m.role === 'user') ?? { role: 'user', content: '' });
  const previous = /Previous summary \(JSON\):\n(.*)\n\n/s.exec(user)?.[1];
  const parsed = previous ? SessionSummary.safeParse(JSON.parse(previous)) : undefined;
  return { kind: 'json', value: parsed?.success ? parsed.data : emptySummary() };
}

/** Tool messages after the last user message. */
function toolResults(req: ChatRequest): string[] {
  const out: string[] = [];
  for (let i = req.messages.length - 1; i >= 0; i--) {
    const m = req.messages[i]!;
    if (m.role === 'user') break;
    if (m.role === 'tool') out.unshift(messageText(m));
  }
  return out;
}

/** The id of the newest meeting a tool created in the conversation. */
function lastMeetingId(req: ChatRequest): string | undefined {
  for (let i = req.messages.length - 1; i >= 0; i--) {
    const m = req.messages[i]!;
    if (m.role !== 'tool') continue;
    const id = /"meetingId"\s*:\s*"([^"]+)"/.exec(messageText(m))?.[1];
    if (id) return id;
  }
  return undefined;
}

function tomorrowAt(hourUtc: number, minute = 0): string {
  const d = new Date(Date.now() + 86_400_000);
  d.setUTCHours(hourUtc, minute, 0, 0);
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function consoleModel(req: ChatRequest): StepResponse {
  if (isJsonRequest(req)) {
    if (req.messages.some((m) => m.role === 'system' && messageText(m).startsWith(SUMMARIZER_MARKER))) return keepSummary(req);
    // Memory extraction: the console model proposes none (memories come from a real model, or the API).
    return { kind: 'json', value: { candidates: [] } };
  }
  const results = toolResults(req);
  if (results.length > 0) {
    const shown = results.map((r) => (r.length > 240 ? `${r.slice(0, 240)}…` : r)).join('\n');
    return say(`The tools answered:\n${shown}`);
  }
  const text = lastUserMessage(req) ?? '';
  const tools = new Set(offeredToolNames(req));
  if (/\btime\b/i.test(text) && tools.has('local_current_time')) {
    return {
      kind: 'tool_calls',
      calls: [
        { name: 'local_current_time', arguments: { timeZone: 'Europe/Paris' } },
        { name: 'local_current_time', arguments: { timeZone: 'Asia/Tokyo' } },
      ],
    };
  }
  if (/\b(book|schedule)\b/i.test(text) && tools.has('local_create_meeting')) {
    return {
      kind: 'tool_calls',
      calls: [{ name: 'local_create_meeting', arguments: { subject: 'Console sync', start_time: tomorrowAt(9), end_time: tomorrowAt(9, 30), attendees: ['ana@example.com'] } }],
    };
  }
  if (/\bcancel\b/i.test(text) && tools.has('local_cancel_meeting')) {
    const id = lastMeetingId(req);
    if (!id) return say('Which meeting? Book one first ("book a meeting tomorrow"), then ask me to cancel it.');
    return { kind: 'tool_calls', text: 'Cancelling it; this needs an approver.', calls: [{ name: 'local_cancel_meeting', arguments: { meeting_id: id, reason: 'Asked in the console.' } }] };
  }
  return say(`You said: "${text.slice(0, 500)}". ${HELP}`);
}
