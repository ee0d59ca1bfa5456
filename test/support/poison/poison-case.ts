import type { RawArg } from './raw-json';

/** One tool call as the scripted model sends it: the arguments string goes out verbatim. */
export interface RawToolCall {
  id?: string;
  name: string;
  arguments: string;
}

/**
 * One hostile or careless input. Signals, updates and queries go to a
 * running session by name through the raw Temporal client; `toolCalls` is one
 * model response the scripted model sends in the middle of a turn; `start` is
 * an update-with-start of a new session whose options are `options`.
 */
export type PoisonCase =
  | { id: string; label: string; kind: 'signal'; name: string; args: RawArg[] }
  | { id: string; label: string; kind: 'update'; name: string; args: RawArg[] }
  | { id: string; label: string; kind: 'query'; name: string; args: RawArg[] }
  | { id: string; label: string; kind: 'toolCalls'; calls: RawToolCall[] }
  | { id: string; label: string; kind: 'start'; options: RawArg; /** The run's carried state (as continue-as-new passes it), when the case sends one. */ carried?: RawArg };

export type PoisonCaseKind = PoisonCase['kind'];

/** What happened to one case when it was delivered. */
export const Delivery = {
  /** A signal the server took (the workflow must ignore or apply it), an update or query that was answered, a turn that ran. */
  accepted: 'accepted',
  /** An update validator (or the SDK, for an unknown handler) refused it: nothing was written. */
  rejected: 'rejected',
  /** The Temporal server or gRPC refused the request itself (size limits, empty names): it never reached the workflow. */
  refused: 'refused',
  /** No answer in time: the session may be frozen. */
  timedOut: 'timed_out',
} as const;
export type Delivery = (typeof Delivery)[keyof typeof Delivery];

/** Signals and updates the session (or a library it uses) registers. */
export const KNOWN_SIGNALS = ['decideToolCall', 'interrupt', 'endSession', 'textDeltas', '__temporal_workflow_stream_publish'] as const;
export const KNOWN_UPDATES = ['sendMessage', 'decideToolCall', 'waitForTurn', '__temporal_workflow_stream_poll'] as const;
export const PUBLISH_SIGNAL = '__temporal_workflow_stream_publish';
export const POLL_UPDATE = '__temporal_workflow_stream_poll';
