export { agentSession } from './agent-session';
