import { payloadBytes, SAFE_PAYLOAD_BYTES } from './payload-budget';
import type { CarriedState } from './session-state';

/**
 * Makes the state carried across continue-as-new fit in one payload. It is
 * the new run's input: over the server's limit, the continue-as-new command
 * fails the workflow task on every retry. What goes first is what the
 * session can do without: old events (readers lose the oldest offsets),
 * then old turn results, tool records and turns awaiting memory extraction.
 * The conversation itself (window, summary, key facts) and the queue stay.
 */
export function fitCarriedState(state: CarriedState, budget = SAFE_PAYLOAD_BYTES): { state: CarriedState; dropped: string[] } {
  const dropped: string[] = [];
  let fitted = state;
  const cuts: Array<[string, (s: CarriedState) => CarriedState]> = [
    ['the event log', (s) => (s.stream ? { ...s, stream: { ...s.stream, log: [], base_offset: s.stream.base_offset + s.stream.log.length } } : s)],
    ['older turn results', (s) => ({ ...s, recentResults: s.recentResults.slice(-5) })],
    ['older tool call records', (s) => ({ ...s, toolRecords: s.toolRecords.slice(-20) })],
    ['turns awaiting memory extraction', (s) => ({ ...s, pendingExtraction: [], lastExtractedTurn: undefined })],
  ];
  for (const [what, cut] of cuts) {
    if (payloadBytes(fitted) <= budget) break;
    fitted = cut(fitted);
    dropped.push(what);
  }
  return { state: fitted, dropped };
}
