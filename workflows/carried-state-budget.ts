import type { ChatMessage } from './chat-message';
import { payloadBytes, SAFE_PAYLOAD_BYTES, SERVER_PAYLOAD_LIMIT_BYTES } from './payload-budget';
import type { Turn } from './session-types';
import type { CarriedState } from './session-state';

/**
 * What the carried state may never pass, whatever it holds: the server's
 * limit for one payload, less room for the run's options beside it.
 */
export const CARRIED_STATE_HARD_BYTES = SERVER_PAYLOAD_LIMIT_BYTES - 512 * 1024;

/** The lengths long texts of the conversation are cut to, in turn, when nothing else is left to drop. */
const TEXT_CUTS = [16_000, 4_000, 1_000];

const CARRY = "too long to carry into the session's next run";

const cutText = (text: string, max: number, why = CARRY): string => (text.length <= max ? text : `${text.slice(0, max)}… [cut from ${text.length} characters: ${why}]`);

function cutMessage(m: ChatMessage, max: number, why = CARRY): ChatMessage {
  if (m.role === 'assistant') {
    return {
      ...m,
      ...(typeof m.content === 'string' ? { content: cutText(m.content, max, why) } : {}),
      ...(m.tool_calls ? { tool_calls: m.tool_calls.map((c) => ({ ...c, function: { ...c.function, arguments: cutText(c.function.arguments, max, why) } })) } : {}),
    };
  }
  return typeof m.content === 'string' ? ({ ...m, content: cutText(m.content, max, why) } as ChatMessage) : m;
}

const cutTurns = (turns: readonly Turn[], max: number, why = CARRY): Turn[] => turns.map((t) => ({ ...t, messages: t.messages.map((m) => cutMessage(m, max, why)) }));

/** A named way to make a payload smaller. */
type Cut<T> = [what: string, cut: (value: T) => T];

/** Applies `cuts` in order until `value` is within `budget` bytes, naming each applied in `dropped`. */
function cutToFit<T>(value: T, cuts: ReadonlyArray<Cut<T>>, budget: number, dropped: string[]): T {
  let fitted = value;
  for (const [what, cut] of cuts) {
    if (payloadBytes(fitted) <= budget) break;
    fitted = cut(fitted);
    dropped.push(what);
  }
  return fitted;
}

/**
 * Makes the state carried across continue-as-new fit in one payload. It is
 * the new run's input: over the server's limit, the server refuses the
 * continue-as-new command and fails the run, losing everything since the
 * session's last archive. What goes first is what the
 * session can do without: old events (readers lose the oldest offsets),
 * then old turn results, tool records and turns awaiting memory extraction.
 * The conversation itself (window, summary, key facts) and the queue stay,
 * unless even then the state is over CARRIED_STATE_HARD_BYTES: then their
 * longest texts are cut, each marked (below).
 */
export function fitCarriedState(state: CarriedState, budget = SAFE_PAYLOAD_BYTES, hardBudget = CARRIED_STATE_HARD_BYTES): { state: CarriedState; dropped: string[] } {
  const dropped: string[] = [];
  const cuts: Array<Cut<CarriedState>> = [
    ['the event log', (s) => (s.stream ? { ...s, stream: { ...s.stream, log: [], base_offset: s.stream.base_offset + s.stream.log.length } } : s)],
    ['older turn results', (s) => ({ ...s, recentResults: s.recentResults.slice(-5) })],
    ['older tool call records', (s) => ({ ...s, toolRecords: s.toolRecords.slice(-20) })],
    ['turns awaiting memory extraction', (s) => ({ ...s, pendingExtraction: [], lastExtractedTurn: undefined })],
    ['message ids restored from the archive', (s) => ({ ...s, archivedMessageIds: undefined })],
  ];
  const withinBudget = cutToFit(state, cuts, budget, dropped);
  // Still over what the server takes (a turn of very long tool results or answers, kept whole as the newest):
  // the server would fail the run. The rest of the turn results and tool records go, then the conversation's
  // longest texts are cut, each marked, rather than the session lost.
  const last: Array<Cut<CarriedState>> = [
    ['every turn result', (s) => ({ ...s, recentResults: [] })],
    ['every tool call record', (s) => ({ ...s, toolRecords: [] })],
    ...TEXT_CUTS.map((max): Cut<CarriedState> => [
      `the conversation's texts past ${max} characters (cut)`,
      (s) => ({ ...s, context: { ...s.context, window: cutTurns(s.context.window, max), unfolded: cutTurns(s.context.unfolded, max) } }),
    ]),
    ["the queued messages' texts past 16000 characters (cut)", (s) => ({ ...s, queue: s.queue.map((q) => ({ ...q, text: cutText(q.text, 16_000) })) })],
  ];
  return { state: cutToFit(withinBudget, last, hardBudget, dropped), dropped };
}

/**
 * The same for the archive a closing session writes (the input of
 * `saveArchive`, one payload): over CARRIED_STATE_HARD_BYTES, the tool call
 * records go, then the window's longest texts are cut, each marked. Over
 * the server's limit, the server refuses to schedule the write
 * (BadScheduleActivityAttributes) and fails the run: the session is lost.
 */
export function fitArchive<A extends { window: Turn[]; toolCalls: unknown[] }>(archive: A, hardBudget = CARRIED_STATE_HARD_BYTES): { archive: A; dropped: string[] } {
  const dropped: string[] = [];
  const cuts: Array<Cut<A>> = [
    ['the tool call records', (a) => ({ ...a, toolCalls: [] })],
    ...TEXT_CUTS.map((max): Cut<A> => [`the conversation's texts past ${max} characters (cut)`, (a) => ({ ...a, window: cutTurns(a.window, max) })]),
  ];
  return { archive: cutToFit(archive, cuts, hardBudget, dropped), dropped };
}

/** The texts of turns sent to a model-backed activity are cut to these lengths, in turn. */
const ACTIVITY_TEXT_CUTS = [16_000, 4_000, 1_000, 200];

/** What one `getSession` answer may hold: the server refuses a query answer over 2 MB (the payload codec's few bytes included). */
export const VIEW_MAX_BYTES = CARRIED_STATE_HARD_BYTES;

const SHOW = "too long to show in one getSession answer; the session's events hold it whole";

/**
 * Makes a session's view fit in one query answer. A window of very long tool
 * results or answers (a turn that read four files of 200,000 characters)
 * made `getSession` over 2 MB: the server refused the answer, and the
 * session could not be looked at until the turn left the window. The
 * window's longest texts are cut first, each marked, then the last turn's
 * answer; last, the oldest turns of the window are left out. What was cut is
 * named in `dropped`. A query changes nothing in the run.
 */
export function fitView<V extends { window: Turn[]; lastTurn: { text: string } | null }>(view: V, budget = VIEW_MAX_BYTES): { view: V; dropped: string[] } {
  const dropped: string[] = [];
  // Asked on every getSession (the API's access checks too): a view whose JSON has at most a third as many
  // characters as the budget has bytes fits, whatever its characters are, without counting its UTF-8 bytes.
  const chars = JSON.stringify(view)?.length ?? 0;
  if (chars * 3 <= budget || payloadBytes(view) <= budget) return { view, dropped };
  const cuts: Array<Cut<V>> = [
    ...ACTIVITY_TEXT_CUTS.map((max): Cut<V> => [`the window's texts past ${max} characters (cut)`, (v) => ({ ...v, window: cutTurns(v.window, max, SHOW) })]),
    ["the last turn's answer past 16000 characters (cut)", (v) => ({ ...v, lastTurn: v.lastTurn && { ...v.lastTurn, text: cutText(v.lastTurn.text, 16_000, SHOW) } })],
  ];
  let fitted = cutToFit(view, cuts, budget, dropped);
  const turns = fitted.window.length;
  while (fitted.window.length > 0 && payloadBytes(fitted) > budget) fitted = { ...fitted, window: fitted.window.slice(1) };
  if (fitted.window.length < turns) dropped.push(`the window's ${turns - fitted.window.length} oldest turn(s)`);
  return { view: fitted, dropped };
}

const SEND = 'too long to send in one activity input';

/** A turn as its gist: the person's first message and the model's last answer without tool calls, each at most 1,000 characters. */
function gistOf(turn: Turn): Turn {
  const asked = turn.messages.find((m) => m.role === 'user');
  const answered = [...turn.messages].reverse().find((m) => m.role === 'assistant' && !m.tool_calls?.length);
  return { ...turn, messages: [asked, answered].filter((m): m is ChatMessage => m !== undefined).map((m) => cutMessage(m, 1_000, SEND)) };
}

/**
 * Makes the turns a summary fold or a memory extraction is given fit, with
 * the rest of the activity's input, in `hardBudget` bytes. Nothing else
 * bounds them: a turn whose step read 32 documents of 16,000 characters
 * holds about 1.5 MB in Chinese, and five such turns (the periodic
 * extraction) passed the server's 2 MB. The server then refused to schedule
 * the activity and failed the run, at a close before the archive was written.
 * The longest texts are cut first, each marked; then turns are reduced to
 * their gist; last, the oldest turns are left out.
 */
export function fitTurnsInput(turns: readonly Turn[], inputOf: (turns: Turn[]) => unknown, hardBudget = CARRIED_STATE_HARD_BYTES): { turns: Turn[]; dropped: string[] } {
  const dropped: string[] = [];
  const fits = (t: Turn[]) => payloadBytes(inputOf(t)) <= hardBudget;
  let fitted = [...turns];
  for (const max of ACTIVITY_TEXT_CUTS) {
    if (fits(fitted)) return { turns: fitted, dropped };
    fitted = cutTurns(fitted, max, SEND);
    dropped.push(`texts past ${max} characters (cut)`);
  }
  if (fits(fitted)) return { turns: fitted, dropped };
  fitted = fitted.map(gistOf);
  dropped.push('every turn but its first message and last answer');
  while (fitted.length > 1 && !fits(fitted)) fitted = fitted.slice(1);
  if (fitted.length < turns.length) dropped.push(`the ${turns.length - fitted.length} oldest turn(s)`);
  return { turns: fitted, dropped };
}
