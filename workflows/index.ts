export { agentSession } from './agent-session';
export { deleteUserMemory, listUserMemories, maintenanceSweep, readUserMemoryAudit } from './maintenance';
export { expandPrompt, listPrompts } from './mcp-prompts';
export { readSessionArchive } from './archived-events';
export { readUsage } from './usage';
