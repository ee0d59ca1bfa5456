export { AgentClient, type AgentClientOptions, type SessionEvent } from './agent-client';
export * from './errors';
export type { AgentEvent } from '../workflows/events';
export type { SessionView, SessionOptionsInput, SendMessageResult, TurnResult } from '../workflows/session-types';
export { sessionConnectionInterceptors, sessionRetryOptions } from './run-closing-retry';
