import { type ChatRequest, lastUserIndex, lastUserMessage, messageText, offeredToolNames } from './chat-request';
import type { StepMatcher } from './scenario';

const MAX_QUOTE = 120;

function quote(text: string): string {
  const short = text.length > MAX_QUOTE ? `${text.slice(0, MAX_QUOTE)}…` : text;
  return JSON.stringify(short);
}

/**
 * Why `request` does not satisfy `matcher`, or undefined when it does. The
 * reason goes verbatim into the 500 body and into `assertDone`, so it names
 * what the step wanted and what the request carried.
 */
export function explainMismatch(matcher: StepMatcher | undefined, request: ChatRequest): string | undefined {
  if (matcher === undefined) return undefined;
  const reasons: string[] = [];

  if (matcher.lastUserMessage !== undefined) {
    const actual = lastUserMessage(request);
    const wanted = matcher.lastUserMessage;
    // A copy, so a /g or /y regex's lastIndex never makes a later test flaky.
    const ok =
      actual !== undefined && (typeof wanted === 'string' ? actual === wanted : new RegExp(wanted).test(actual));
    if (!ok) {
      const shown = typeof wanted === 'string' ? quote(wanted) : String(wanted);
      reasons.push(
        `last user message ${actual === undefined ? 'is absent' : `was ${quote(actual)}`}, the step wants ${shown}`,
      );
    }
  }

  if (matcher.hasToolResults !== undefined) {
    const toolResults = request.messages.slice(lastUserIndex(request) + 1).filter((m) => m.role === 'tool').length;
    if (matcher.hasToolResults !== toolResults > 0) {
      const wanted = matcher.hasToolResults ? 'tool results' : 'no tool results';
      reasons.push(`the step wants ${wanted} after the last user message, the request has ${toolResults}`);
    }
  }

  const offered = offeredToolNames(request);
  const missing = (matcher.toolsOffered ?? []).filter((name) => !offered.includes(name));
  if (missing.length > 0) {
    reasons.push(`tools ${missing.join(', ')} were not offered (offered: ${offered.join(', ') || 'none'})`);
  }
  const forbidden = (matcher.toolsNotOffered ?? []).filter((name) => offered.includes(name));
  if (forbidden.length > 0) {
    reasons.push(`tools ${forbidden.join(', ')} were offered but the step wants them absent`);
  }

  if (matcher.systemIncludes !== undefined) {
    const wanted = matcher.systemIncludes;
    const found = request.messages.some((m) => m.role === 'system' && messageText(m).includes(wanted));
    if (!found) reasons.push(`no system message includes ${quote(wanted)}`);
  }

  if (matcher.where !== undefined) {
    try {
      if (!matcher.where(request)) reasons.push('the `where` predicate returned false');
    } catch (error) {
      reasons.push(`the \`where\` predicate threw: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  return reasons.length > 0 ? reasons.join('; ') : undefined;
}
