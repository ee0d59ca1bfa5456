import type { Db } from 'mongodb';
import { createUsageActivities, type UsageActivities } from './usage/usage-activities';
import type { Budgets } from './usage/budgets';
import { UsageStore, type PriceTable } from './usage/usage-store';
import type OpenAI from 'openai';
import type { SessionActivities } from './activity-types';
import { createArchiveActivities } from './archive-activities';
import { OfflineEmbedder, thresholdsFor, type Embedder } from './memory/embedder';
import { createMemoryActivities } from './memory/memory-activities';
import type { MemoryActivities } from './memory/memory-activity-types';
import { defaultMemoryConfig, type MemoryConfig } from './memory/memory-config';
import { MemoryRepository } from './memory/memory-repository';
import type { RecallCache } from './memory/recall-cache';
import { createModelActivities } from './model-activities';
import { LegacyPromptParts } from './legacy-prompt-parts';
import { PromptPartResolver } from './prompt-part-resolver';
import { SecretRedactor } from './secret-redactor';
import { SessionArchiveRepository } from './session-archive';
import { createSearchAttributeActivities } from './search-attribute-activities';
import { createSummarizeActivity } from './summarize-activity';
import { createToolActivities, type ToolSource } from './tool-activities';
import { createTurnStartActivity } from './turn-start-activity';
import { createPromptActivities, type McpPromptServers } from './mcp/mcp-prompts';
import { calculateTool, currentTimeTool } from './tools/builtin-tools';
import { findMemoriesTool, forgetMemoryTool } from './tools/forget-memory-tool';
import { meetingTools } from './tools/meeting-tools';
import type { NativeTool } from './tools/native-tool';
import { buildCatalog, nativeRunnable } from './tools/tool-registry';
import { ToolResultStore } from './tools/tool-result-store';

export interface ActivityDeps {
  db: Db;
  openai: OpenAI;
  model: { name: string };
  /** The stores that write behind their calls, when the worker must wait for them at shutdown. */
  stores?: { usage: UsageStore; promptParts: PromptPartResolver };
  /** Prices per million tokens by model (MODEL_PRICES), for usage and cost. */
  pricing?: { prices: PriceTable; currency: string };
  /** Daily token and cost budgets per tenant and user (BUDGETS). */
  budgets?: Budgets;
  limits: { toolTimeoutMs: number; maxToolResultChars: number };
  /** Native tools besides the built-in ones (tests add slow or failing ones here). */
  extraTools?: NativeTool[];
  /** Replace the whole tool source (the MCP manager plugs in here). */
  toolSource?: ToolSource;
  /** The MCP servers whose prompts the client may list and expand. */
  mcpPrompts?: McpPromptServers;
  /** Long-term memory; without it the offline embedder and default settings are used. */
  memory?: { embedder: Embedder; config: MemoryConfig; cache?: RecallCache };
  /** Configured secret values (API key, MongoDB password, MCP headers/env); removed from every error an activity throws. */
  secrets?: readonly string[];
}

/** The built-in native tools: time, exact arithmetic and the meetings domain. */
export function builtinTools(db: Db): NativeTool[] {
  return [currentTimeTool, calculateTool, ...meetingTools(db)] as NativeTool[];
}

/** Native tools that come with long-term memory: `find_memories` and `forget_memory` when memory is on. */
export function memoryTools(db: Db, memory: ActivityDeps['memory']): NativeTool[] {
  if (!memory?.config.enabled) return [];
  const thresholds = thresholdsFor(memory.embedder, memory.config);
  const deps = { repo: new MemoryRepository(db), embedder: memory.embedder, thresholds };
  return [findMemoriesTool(deps), forgetMemoryTool(deps)];
}

/** A tool source over a fixed set of native tools. */
export function staticToolSource(tools: NativeTool[], timeoutMs: number): ToolSource {
  const built = buildCatalog([{ owner: 'native tools', tools: tools.map((t) => nativeRunnable(t, { timeoutMs })) }]);
  return { current: () => built };
}

/**
 * Builds every activity from injected dependencies, so tests can pass real or
 * fake ones. Whatever an activity throws passes through one SecretRedactor.
 */
export function createActivities(deps: ActivityDeps): SessionActivities & MemoryActivities & UsageActivities {
  const memory = deps.memory ?? { embedder: new OfflineEmbedder(), config: defaultMemoryConfig() };
  const tools =
    deps.toolSource ??
    staticToolSource([...builtinTools(deps.db), ...memoryTools(deps.db, memory), ...(deps.extraTools ?? [])], deps.limits.toolTimeoutMs);
  const { usage, promptParts } = deps.stores ?? { usage: new UsageStore(deps.db, deps.pricing), promptParts: new PromptPartResolver() };
  const usageActivities = createUsageActivities(usage, deps.budgets, deps.pricing, deps.model.name);
  const toolActivities = createToolActivities({
    tools,
    results: new ToolResultStore(deps.db),
    maxResultChars: deps.limits.maxToolResultChars,
  });
  const redactor = new SecretRedactor(deps.secrets ?? []);
  const redact = (text: string): string => redactor.text(text);
  return redactor.activities({
    ...createModelActivities({ openai: deps.openai, defaultModel: deps.model.name, usage, promptParts, redact }),
    ...usageActivities,
    ...createSummarizeActivity({ openai: deps.openai, usage, model: deps.model.name, redact }),
    ...createArchiveActivities(new SessionArchiveRepository(deps.db), new LegacyPromptParts(deps.db), new ToolResultStore(deps.db)),
    ...createSearchAttributeActivities(),
    ...createMemoryActivities({ db: deps.db, openai: deps.openai, usage, modelName: deps.model.name, redact, ...memory }),
    ...createPromptActivities(() => deps.mcpPrompts),
    ...toolActivities,
    ...createTurnStartActivity({ getToolCatalog: toolActivities.getToolCatalog, checkBudget: usageActivities.checkBudget }),
  });
}
