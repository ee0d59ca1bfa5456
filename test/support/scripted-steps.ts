import type { ChatRequest, ScriptedModelServer } from '../../scripted-model';

/** Scripts one tool call on the session's lane, then a text answer once the result is in. */
export function scriptCall(model: ScriptedModelServer, sessionId: string, name: string, args: Record<string, unknown>, answer = 'Done.'): void {
  model.script(
    [
      { respond: { kind: 'tool_calls', calls: [{ id: `call_${name}_${sessionId}`, name, arguments: args }] } },
      { match: { hasToolResults: true }, respond: { kind: 'text', text: answer } },
    ],
    { lane: sessionId },
  );
}

/** The contents of the tool messages in a recorded chat request, in order. */
export const toolMessages = (body: unknown): string[] =>
  ((body as ChatRequest).messages as Array<{ role: string; content?: unknown }>).filter((m) => m.role === 'tool').map((m) => String(m.content));

/** The last tool message the model saw in the session's latest request. */
export function lastToolContent(model: ScriptedModelServer, sessionId: string): string {
  const requests = model.requestsFor(sessionId);
  return toolMessages(requests[requests.length - 1]!.body).at(-1)!;
}

/**
 * Scripts an answer cut off at the model's output limit (`finish_reason: "length"`) right after a call of `name`
 * (id `call_cut`) began, before any of its arguments, then a text answer once the result is in.
 */
export function scriptCallCutBeforeArguments(model: ScriptedModelServer, sessionId: string, name: string, answer = 'I will ask again.'): void {
  const base = { id: 'chatcmpl-raw', object: 'chat.completion.chunk', created: 0, model: 'm' };
  model.script(
    [
      {
        respond: {
          kind: 'raw_chunks',
          chunks: [
            { ...base, choices: [{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'call_cut', type: 'function', function: { name, arguments: '' } }] }, finish_reason: null }] },
            { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'length' }] },
          ],
        },
      },
      { match: { hasToolResults: true }, respond: { kind: 'text', text: answer } },
    ],
    { lane: sessionId },
  );
}

/** Scripts one step of two `local_wipe` calls (`call_wipe_a`, `call_wipe_b`; each needs confirmation), then `answer` once their results are in. */
export function scriptTwoWipes(model: ScriptedModelServer, sessionId: string, answer = 'Both done.'): void {
  const wipe = (id: string) => ({ id: `call_wipe_${id}`, name: 'local_wipe', arguments: { confirmText: id } });
  model.script(
    [
      { respond: { kind: 'tool_calls', calls: [wipe('a'), wipe('b')] } },
      { match: { hasToolResults: true }, respond: { kind: 'text', text: answer } },
    ],
    { lane: sessionId },
  );
}
