import type { ChatMessage, ToolCall } from '../workflows/chat-message';
import type { PromptByRef } from '../workflows/prompt-parts';
import type { UserNamespace } from '../workflows/session-types';
import type { RiskLevel, ToolCatalog } from '../workflows/tool-spec';
import type { SessionSummary } from '../workflows/session-summary';
import type { SummarizeInput } from './summarize-activity';
import type { ArchivedEventsPage, ArchivedSession, ReadArchivedEventsInput, SaveArchiveInput } from './session-archive';
import type { ReadTurnStartInput, TurnStartReads } from './turn-start-activity';

/** A tool as offered to the model (the OpenAI `function` shape). */
export interface ModelToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface CallModelInput {
  sessionId: string;
  turnId: string;
  step: number;
  messages: ChatMessage[];
  tools: ModelToolDefinition[];
  model: { name?: string; temperature?: number };
  /** Whose session this is: the call's tokens are recorded for them (usage and cost). */
  namespace?: { tenant: string; user: string };
  /**
   * The prompt by reference (workflows/prompt-parts.ts); `messages` and `tools`
   * are then empty and the activity rebuilds them from the parts.
   */
  prompt?: PromptByRef;
}

/**
 * Prompt parts sent ahead of a model call whose input would be over what one
 * activity input may take (a window carried into a new run, a step of many
 * long tool results): the call then names them by id. Shaped as a model
 * call's `prompt.parts`, so the run's history holds them where readers of
 * parts look.
 */
export interface HoldPromptPartsInput {
  sessionId: string;
  turnId: string;
  step: number;
  prompt: { parts: Record<string, unknown> };
}

export interface CallModelResult {
  content: string | null;
  toolCalls: ToolCall[];
  finishReason: string;
  usage: { promptTokens: number; completionTokens: number } | null;
  /** The activity attempt that produced this result (1 when the first try answered). */
  attempt?: number;
  /**
   * Text deltas the activity streamed but had not yet signalled when the
   * model finished (the last batch, or all of a quick answer). The workflow
   * publishes them right after the ones already on the stream: a quick step
   * then costs no signal, and no extra workflow task.
   */
  unpublishedDeltas?: string[];
  /**
   * Calls whose arguments were over the size limit and were emptied (index into `toolCalls`, original
   * length); `over` is absent in results recorded before it was added (read as the one call's limit).
   */
  truncatedArguments?: Array<{ index: number; chars: number; over?: 'call' | 'response' }>;
  /** Tool calls past the per-response limit, left out of `toolCalls`. */
  droppedToolCalls?: number;
  /** Characters of reasoning the server streamed apart from the answer (`reasoning_content` or `reasoning`); not kept. */
  reasoningChars?: number;
  /** The activity stopped reading the stream past what a step keeps (`finishReason` is then "length"). */
  stoppedReading?: boolean;
}

export interface GetToolCatalogInput {
  sessionId: string;
  namespace: UserNamespace;
  /** The session's allow-list; tools off it never reach the model. */
  allow?: string[];
  /** The digest of the catalog the run already holds for this allow-list: an equal one is answered `unchanged`. */
  knownDigest?: string;
}

export interface ExecuteToolInput {
  sessionId: string;
  turnId: string;
  toolCallId: string;
  toolName: string;
  arguments: Record<string, unknown>;
  namespace: UserNamespace;
  /** `<sessionId>:<turnId>:<step>:<toolCallId>`, stable across retries, crashes and continue-as-new (runs begun before the step was added keep `<sessionId>:<turnId>:<toolCallId>`). */
  idempotencyKey: string;
  /**
   * The hash of the tool's definition the call was planned (and confirmed) against. A worker whose tool now has
   * another one does not run it (`ToolChanged`). Absent from calls scheduled before it was sent: not checked.
   */
  toolHash?: string;
  /** The tool's risk the call was planned with: a tool that now says it is riskier (an MCP server's changed annotations) is not run. */
  toolRisk?: RiskLevel;
}

export interface ExecuteToolResult {
  /** What the model reads, already cut to the model-facing limit. */
  content: string;
  truncated: boolean;
  durationMs: number;
}

/** The activities the session workflow schedules, by name. */
export interface SessionActivities {
  callModel(input: CallModelInput): Promise<CallModelResult>;
  /** Keeps prompt parts for the model call that follows (this worker's memory; the run's history holds them too). */
  holdPromptParts(input: HoldPromptPartsInput): Promise<void>;
  getToolCatalog(input: GetToolCatalogInput): Promise<ToolCatalog>;
  /** The tool catalog and the day's budget together: what a turn starts with (runs with the patch `turn-reads-in-one`). */
  readTurnStart(input: ReadTurnStartInput): Promise<TurnStartReads>;
  executeTool(input: ExecuteToolInput): Promise<ExecuteToolResult>;
  summarizeTurns(input: SummarizeInput): Promise<SessionSummary>;
  loadArchive(input: { sessionId: string }): Promise<ArchivedSession | null>;
  saveArchive(input: SaveArchiveInput): Promise<{ version: number }>;
  readArchivedEvents(input: ReadArchivedEventsInput): Promise<ArchivedEventsPage | null>;
  expireArchives(input: { now?: string }): Promise<{ expired: number; moved: number; promptParts: number }>;
  /** Which of the given search attribute names the namespace has registered. */
  describeSearchAttributes(input: { names: string[] }): Promise<string[]>;
}
