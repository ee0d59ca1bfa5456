export { ScriptedModelServer, type ScriptedModelServerOptions } from './server';
export {
  DEFAULT_LANE,
  LANE_HEADER,
  RecordedRequest,
  ScriptedStep,
  StepMatcher,
  StepResponse,
  type StepResponseKind,
} from './scenario';
export { ChatMessage, ChatRequest, ChatTool, lastUserMessage, messageText } from './chat-request';
export { EmbeddingRequest } from './embeddings';
export { offlineEmbedding } from './offline-embedding';
export type { WaitOptions } from './request-log';
