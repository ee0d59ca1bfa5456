import { EXTRACTION_SYSTEM_PROMPT } from '../activities/memory/extraction-prompt';
import { z } from 'zod';
import type { ScriptedStep, StepResponse } from '../scripted-model';
import { lastUserIndex, messageText, type ChatRequest } from '../scripted-model/chat-request';

/** What the demo user says, in order. The same messages go to a real model. */
export const DEMO_MESSAGES = {
  times: 'What time is it in Paris and in Tokyo?',
  book: 'Book a 30 minute sync with ana@example.com tomorrow at 10:00 Paris time',
  cancel: 'Actually cancel it',
  story: 'Tell me a long story',
} as const;

const STORY = [
  'Once upon a time, in a harbour town where the fog rolled in every evening at exactly six,',
  'there lived a lighthouse keeper named Odile who kept a ledger of every ship that passed.',
  'Each night she wrote the name, the hour and the colour of its lantern, and each morning',
  'she compared the ledger with the harbour master\'s list. For thirty-one years the lists matched.',
  'Then, one November night, a ship passed that was on neither list: a schooner with a green lantern,',
  'sailing against the wind without a sound. Odile wrote it down, underlined it twice, and climbed',
  'down the two hundred and twelve steps to the quay, where she found a small wooden box',
  'washed up on the stones, sealed with wax the same green as the lantern. Inside, folded',
  'eleven times, was a page from a ledger exactly like hers, in handwriting exactly like hers,',
  'dated forty years in the future, and the last line read: "Ask the keeper what she saw."',
].join(' ');

// Tool results are the worker's output, echoed by the runtime: parsed, never trusted.
const TimeResult = z.object({ timeZone: z.string(), localDateTime: z.string(), utcOffset: z.string(), weekday: z.string() });
const Meeting = z.object({ meetingId: z.string(), subject: z.string(), startTime: z.string(), endTime: z.string(), attendees: z.array(z.string()) });
const CreateResult = z.object({ created: z.literal(true), meeting: Meeting });
const CancelResult = z.object({ cancelled: z.literal(true), meeting: Meeting });
const ToolError = z.object({ error: z.object({ type: z.string(), message: z.string() }) });

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Tool results in the request: all of them, or only those after the last user message. */
function toolResults(req: ChatRequest, scope: 'turn' | 'all'): unknown[] {
  const from = scope === 'turn' ? lastUserIndex(req) + 1 : 0;
  return req.messages
    .slice(from)
    .filter((m) => m.role === 'tool')
    .map((m) => parseJson(messageText(m)));
}

function lastOf<T>(req: ChatRequest, scope: 'turn' | 'all', schema: z.ZodType<T>, where: (value: T) => boolean = () => true): T | undefined {
  return toolResults(req, scope)
    .map((value) => schema.safeParse(value))
    .flatMap((r) => (r.success && where(r.data) ? [r.data] : []))
    .at(-1);
}

function toolError(req: ChatRequest): string | undefined {
  const error = lastOf(req, 'turn', ToolError);
  return error ? `${error.error.type}: ${error.error.message}` : undefined;
}

const say = (text: string): StepResponse => ({ kind: 'text', text, chunkSize: 3, delayMs: 12 });

function offsetMinutes(offset: string): number {
  const m = /^([+-])(\d{2}):(\d{2})$/.exec(offset);
  if (!m) return 0;
  return (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]));
}

function clock(localDateTime: string): string {
  return localDateTime.slice(11, 16);
}

/** Answers from the two clocks the tools read, so the demo prints the real times. */
function answerTimes(req: ChatRequest): StepResponse {
  const paris = lastOf(req, 'turn', TimeResult, (t) => t.timeZone === 'Europe/Paris');
  const tokyo = lastOf(req, 'turn', TimeResult, (t) => t.timeZone === 'Asia/Tokyo');
  if (!paris || !tokyo) return say(`I could not read both clocks (${toolError(req) ?? 'no result'}).`);
  const ahead = (offsetMinutes(tokyo.utcOffset) - offsetMinutes(paris.utcOffset)) / 60;
  return say(
    `In Paris it is ${clock(paris.localDateTime)} on ${paris.weekday} (UTC${paris.utcOffset}), and in Tokyo it is ` +
      `${clock(tokyo.localDateTime)} on ${tokyo.weekday} (UTC${tokyo.utcOffset}): Tokyo is ${ahead} hours ahead of Paris.`,
  );
}

/** The UTC offset Paris has on `date` (YYYY-MM-DD) in the morning. */
function parisOffsetOn(date: string): string {
  const name = new Intl.DateTimeFormat('en-US', { timeZone: 'Europe/Paris', timeZoneName: 'longOffset' })
    .formatToParts(new Date(`${date}T09:00:00Z`))
    .find((p) => p.type === 'timeZoneName')?.value;
  return name?.replace('GMT', '') || '+00:00';
}

/** "Tomorrow" is resolved from the Paris clock read earlier in the conversation, as a model would. */
function bookMeeting(req: ChatRequest): StepResponse {
  const paris = lastOf(req, 'all', TimeResult, (t) => t.timeZone === 'Europe/Paris');
  if (!paris) return say('What is today\'s date in Paris? I need it to work out "tomorrow".');
  const today = new Date(`${paris.localDateTime.slice(0, 10)}T00:00:00Z`);
  const tomorrow = new Date(today.getTime() + 86_400_000).toISOString().slice(0, 10);
  const offset = parisOffsetOn(tomorrow);
  return {
    kind: 'tool_calls',
    calls: [
      {
        name: 'local_create_meeting',
        arguments: {
          subject: 'Sync with Ana',
          start_time: `${tomorrow}T10:00:00${offset}`,
          end_time: `${tomorrow}T10:30:00${offset}`,
          attendees: ['ana@example.com'],
        },
      },
    ],
  };
}

function parisDay(iso: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', weekday: 'long', day: 'numeric', month: 'long' }).format(new Date(iso));
}

function parisTime(iso: string): string {
  return new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', hour: '2-digit', minute: '2-digit' }).format(new Date(iso));
}

function confirmBooking(req: ChatRequest): StepResponse {
  const result = lastOf(req, 'turn', CreateResult);
  if (!result) return say(`I could not book it: ${toolError(req) ?? 'the tool gave no result'}.`);
  const m = result.meeting;
  return say(
    `Booked "${m.subject}" for ${parisDay(m.startTime)}, ${parisTime(m.startTime)}–${parisTime(m.endTime)} Paris time, ` +
      `with ${m.attendees.join(', ')} (meeting id ${m.meetingId}).`,
  );
}

/** "It" is the meeting created earlier: its id comes from that tool result in the window. */
function cancelMeeting(req: ChatRequest): StepResponse {
  const created = lastOf(req, 'all', CreateResult);
  if (!created) return say('Which meeting should I cancel? I do not see one in our conversation.');
  return {
    kind: 'tool_calls',
    text: `Cancelling "${created.meeting.subject}".`,
    calls: [{ name: 'local_cancel_meeting', arguments: { meeting_id: created.meeting.meetingId, reason: 'The user asked to cancel it.' } }],
  };
}

function confirmCancel(req: ChatRequest): StepResponse {
  const result = lastOf(req, 'turn', CancelResult);
  if (result) {
    const m = result.meeting;
    return say(`Done: "${m.subject}" on ${parisDay(m.startTime)} at ${parisTime(m.startTime)} is cancelled.`);
  }
  const error = lastOf(req, 'turn', ToolError);
  if (error?.error.type === 'ToolDeclined') return say('Okay, I left the meeting in your calendar.');
  return say(`I could not cancel it: ${toolError(req) ?? 'the tool gave no result'}.`);
}

/** The demo conversation as the scripted model plays it, one step per model call. */
export function demoScript(): ScriptedStep[] {
  return [
    {
      name: 'read both clocks in parallel',
      match: { lastUserMessage: DEMO_MESSAGES.times, hasToolResults: false },
      respond: {
        kind: 'tool_calls',
        text: 'Let me check both clocks.',
        calls: [
          { name: 'local_current_time', arguments: { timeZone: 'Europe/Paris' } },
          { name: 'local_current_time', arguments: { timeZone: 'Asia/Tokyo' } },
        ],
      },
    },
    { name: 'answer with the times', match: { lastUserMessage: DEMO_MESSAGES.times, hasToolResults: true }, respond: answerTimes },
    { name: 'book the meeting', match: { lastUserMessage: DEMO_MESSAGES.book, hasToolResults: false }, respond: bookMeeting },
    { name: 'confirm the booking', match: { lastUserMessage: DEMO_MESSAGES.book, hasToolResults: true }, respond: confirmBooking },
    { name: 'cancel the meeting', match: { lastUserMessage: DEMO_MESSAGES.cancel, hasToolResults: false }, respond: cancelMeeting },
    { name: 'report the cancellation', match: { lastUserMessage: DEMO_MESSAGES.cancel, hasToolResults: true }, respond: confirmCancel },
    {
      name: 'a long story, slowly',
      match: { lastUserMessage: DEMO_MESSAGES.story },
      respond: { kind: 'text', text: STORY, chunkSize: 4, delayMs: 40 },
    },
    {
      // Archiving the session runs memory extraction over its turns; nothing here is a lasting fact about the user.
      name: 'extract long-term memories at archive',
      match: { systemIncludes: EXTRACTION_SYSTEM_PROMPT.slice(0, 60) },
      respond: { kind: 'json', value: { candidates: [] } },
    },
  ];
}
