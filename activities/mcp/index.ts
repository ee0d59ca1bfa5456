export { McpConfigError, loadMcpConfig, parseMcpConfig, type McpConfig, type McpServerConfig } from './mcp-config';
export { McpConnection, type McpConnectionStatus } from './mcp-connection';
export { McpUnavailableError } from './mcp-failure-kinds';
export { McpConnectionPool, type McpPoolOptions } from './mcp-connection-pool';
export { consoleMcpLogger, silentMcpLogger, redact, type McpLogger } from './mcp-log';
export { mcpRunnable, riskFromAnnotations, maxAttemptsFor } from './mcp-tool-adapter';
export { mcpToolName } from './mcp-tool-name';
export { McpToolSource, selectTools } from './mcp-tool-source';
export { startMcp, type McpRuntime, type StartMcpOptions } from './mcp-runtime';
