export { agentSession } from './agent-session';
export { maintenanceSweep } from './maintenance';
