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
