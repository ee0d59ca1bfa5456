import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { LOCAL_CHOICES, LOCAL_PREFIX, parseEmbedderChoice } from '../activities/memory/embedder-choice';
import { DEFAULT_LOCAL_EMBEDDING, localEmbeddingDims } from '../activities/memory/local-models';
import { MemoryConfig } from '../activities/memory/memory-config';
import { keyListProblems, keyMaterialStrings, parseKeyList } from '../codec/encryption-keys';
import { maskMongoUri, mongoUriProblem, mongoUriSecrets } from './mongo-uri';
import { WorkerTuning, workerTuningProblems } from './worker-tuning';

/**
 * The whole runtime configuration, read from the environment and an optional
 * JSON file (`DURABLE_AGENT_CONFIG`). Environment variables win over the file.
 */
export const RuntimeConfig = z.object({
  temporal: z.object({
    address: z.string().regex(/^[^\s:]+:\d{1,5}$/, 'must be host:port').default('127.0.0.1:7233'),
    namespace: z.string().min(1).default('default'),
    taskQueue: z.string().min(1).default('durable-agent'),
    /** Bound on reaching the server at worker start; past it the worker exits naming the address. */
    connectTimeoutMs: z.number().int().positive().default(5_000),
    /** TLS to the server (implied by any other TLS setting or an API key); off for the local dev server. */
    tls: z.boolean().optional(),
    /** The name the server's certificate must carry, when it differs from the address's host. */
    tlsServerName: z.string().min(1).optional(),
    /** PEM file of the CA that signed the server's certificate; default the system roots. */
    tlsCaPath: z.string().min(1).optional(),
    /** mTLS: the client certificate and key (PEM files), both or neither. */
    tlsCertPath: z.string().min(1).optional(),
    tlsKeyPath: z.string().min(1).optional(),
    /** API key (Temporal Cloud); a secret. */
    apiKey: z.string().min(1).optional(),
  }).refine((t) => !t.tlsCertPath === !t.tlsKeyPath, { message: 'set both TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH for mTLS, or neither', path: ['tlsCertPath'] }),
  mongodb: z.object({
    uri: z.string().regex(/^mongodb(\+srv)?:\/\//, 'must start with mongodb:// or mongodb+srv://').default('mongodb://127.0.0.1:27017'),
    database: z.string().regex(/^[^/\\. "$]{1,63}$/, 'must be a valid MongoDB database name').default('durable_agent'),
    /**
     * How long an operation waits for a reachable server before failing. Kept
     * below the tool timeout, so a tool tells the model "database unreachable"
     * rather than timing out.
     */
    serverSelectionTimeoutMs: z.number().int().positive().default(3_000),
    /**
     * How long a usage record written behind its model call waits for others
     * to share its insert (activities/batched-inserts.ts); 0 writes each on
     * its own. At most 150: a worker killed within the delay loses the
     * records still waiting.
     */
    writeBatchMs: z.number().int().min(0).max(150).default(150),
  }),
  model: z.object({
    baseUrl: z.url({ message: 'must be a URL such as https://api.openai.com/v1' }).default('https://api.openai.com/v1'),
    apiKey: z.string().min(1).optional(),
    name: z.string().min(1).default('gpt-4o-mini'),
    embeddingModel: z.string().min(1).optional(),
    requestTimeoutMs: z.number().int().positive().default(120_000),
    /**
     * What carries the SDK's requests: `undici` (a keep-alive agent under a
     * light fetch, activities/model-http.ts) or `fetch` (Node's built-in).
     */
    httpClient: z.enum(['undici', 'fetch']).default('undici'),
  }),
  limits: z.object({
    maxSteps: z.number().int().min(1).max(50).default(5),
    toolTimeoutMs: z.number().int().positive().default(10_000),
    confirmationTimeoutMs: z.number().int().positive().default(300_000),
    idleTimeoutMs: z.number().int().positive().default(1_800_000),
    /** A tool result longer than this is cut for the model and kept whole in MongoDB. */
    maxToolResultChars: z.number().int().min(500).max(200_000).default(16_000),
  }),
  mcp: z.object({
    configPath: z.string().min(1).optional(),
    /** Bound on connecting to one MCP server: spawn or HTTP connect, initialize handshake, first tool listing. */
    connectTimeoutMs: z.number().int().positive().default(10_000),
    /**
     * Bound on a server's first connect, which may include installing it (npx -y on a cold cache).
     * The worker start waits connectTimeoutMs, then the first connect goes on in the background.
     */
    firstConnectTimeoutMs: z.number().int().positive().default(120_000),
    /** The tool lists are fetched again this often, besides on notifications/tools/list_changed. */
    refreshIntervalMs: z.number().int().min(1_000).default(300_000),
  }),
  memory: MemoryConfig,
  /** Payload encryption (codec/): on when keys are set. Key material is a secret: never printed. */
  encryption: z.object({
    /** `id:base64key,...` (32-byte AES-256 keys); every listed key decrypts. */
    keys: z
      .string()
      .min(1)
      .optional()
      .superRefine((value, ctx) => {
        if (value === undefined) return;
        for (const problem of keyListProblems(value)) ctx.addIssue({ code: 'custom', message: problem });
      }),
    /** The key id new payloads are encrypted with; default the first listed. */
    keyId: z.string().min(1).optional(),
  }),
  maintenance: z.object({
    /** How often the maintenance schedule sweeps expired archives and memories; 0 disables creating it. */
    scheduleEveryMs: z.number().int().min(0).default(3_600_000),
  }),
  /** Temporal worker slots and cache (workers/worker-tuning.ts); defaults measured by `npm run bench:concurrency`, see docs/scale-out.md. */
  worker: WorkerTuning,
});
export type RuntimeConfig = z.infer<typeof RuntimeConfig>;

/** Where each field can come from, and what to tell a person who got it wrong. */
const FIELDS: Record<string, { env: string; kind: 'string' | 'int' | 'number' | 'bool'; fix: string }> = {
  'temporal.address': { env: 'TEMPORAL_ADDRESS', kind: 'string', fix: 'set TEMPORAL_ADDRESS to host:port, e.g. 127.0.0.1:7233' },
  'temporal.namespace': { env: 'TEMPORAL_NAMESPACE', kind: 'string', fix: 'set TEMPORAL_NAMESPACE to an existing namespace, e.g. default' },
  'temporal.taskQueue': { env: 'TEMPORAL_TASK_QUEUE', kind: 'string', fix: 'set TEMPORAL_TASK_QUEUE to a non-empty name' },
  'temporal.tls': { env: 'TEMPORAL_TLS', kind: 'bool', fix: 'set TEMPORAL_TLS to true or false' },
  'temporal.tlsServerName': { env: 'TEMPORAL_TLS_SERVER_NAME', kind: 'string', fix: 'set TEMPORAL_TLS_SERVER_NAME to the name in the server certificate' },
  'temporal.tlsCaPath': { env: 'TEMPORAL_TLS_CA_PATH', kind: 'string', fix: 'set TEMPORAL_TLS_CA_PATH to a PEM file of the server CA' },
  'temporal.tlsCertPath': { env: 'TEMPORAL_TLS_CERT_PATH', kind: 'string', fix: 'set TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH to the client certificate and key (PEM)' },
  'temporal.tlsKeyPath': { env: 'TEMPORAL_TLS_KEY_PATH', kind: 'string', fix: 'set TEMPORAL_TLS_KEY_PATH and TEMPORAL_TLS_CERT_PATH to the client key and certificate (PEM)' },
  'temporal.apiKey': { env: 'TEMPORAL_API_KEY', kind: 'string', fix: 'set TEMPORAL_API_KEY to an API key of the namespace (Temporal Cloud)' },
  'mongodb.uri': { env: 'MONGODB_URI', kind: 'string', fix: 'set MONGODB_URI, e.g. mongodb://127.0.0.1:27017' },
  'temporal.connectTimeoutMs': { env: 'TEMPORAL_CONNECT_TIMEOUT_MS', kind: 'int', fix: 'set TEMPORAL_CONNECT_TIMEOUT_MS to a positive integer of milliseconds' },
  'mongodb.serverSelectionTimeoutMs': {
    env: 'MONGODB_SERVER_SELECTION_TIMEOUT_MS',
    kind: 'int',
    fix: 'set MONGODB_SERVER_SELECTION_TIMEOUT_MS to a positive integer of milliseconds, below TOOL_TIMEOUT_MS',
  },
  'mongodb.writeBatchMs': {
    env: 'MONGODB_WRITE_BATCH_MS',
    kind: 'int',
    fix: 'set MONGODB_WRITE_BATCH_MS to a whole number of milliseconds from 0 (each write on its own) to 150',
  },
  'mongodb.database': { env: 'MONGODB_DATABASE', kind: 'string', fix: 'set MONGODB_DATABASE to a name without / \\ . " $ or spaces' },
  'model.baseUrl': { env: 'OPENAI_BASE_URL', kind: 'string', fix: 'set OPENAI_BASE_URL to the API root, e.g. http://127.0.0.1:11434/v1 for Ollama' },
  'model.apiKey': { env: 'OPENAI_API_KEY', kind: 'string', fix: 'set OPENAI_API_KEY' },
  'model.name': { env: 'MODEL_NAME', kind: 'string', fix: 'set MODEL_NAME to a model the server serves, e.g. gpt-4o-mini' },
  'model.embeddingModel': {
    env: 'EMBEDDING_MODEL',
    kind: 'string',
    fix: `set EMBEDDING_MODEL to ${LOCAL_CHOICES.join(', ')} or a model of the embeddings endpoint (e.g. text-embedding-3-small), or unset it for ${LOCAL_PREFIX}${DEFAULT_LOCAL_EMBEDDING}`,
  },
  'model.requestTimeoutMs': { env: 'MODEL_REQUEST_TIMEOUT_MS', kind: 'int', fix: 'set MODEL_REQUEST_TIMEOUT_MS to a positive integer of milliseconds' },
  'model.httpClient': {
    env: 'MODEL_HTTP_CLIENT',
    kind: 'string',
    fix: "set MODEL_HTTP_CLIENT to undici (a keep-alive agent, the default) or fetch (Node's built-in fetch)",
  },
  'limits.maxSteps': { env: 'AGENT_MAX_STEPS', kind: 'int', fix: 'set AGENT_MAX_STEPS to an integer from 1 to 50' },
  'limits.toolTimeoutMs': { env: 'TOOL_TIMEOUT_MS', kind: 'int', fix: 'set TOOL_TIMEOUT_MS to a positive integer of milliseconds' },
  'limits.confirmationTimeoutMs': { env: 'CONFIRMATION_TIMEOUT_MS', kind: 'int', fix: 'set CONFIRMATION_TIMEOUT_MS to a positive integer of milliseconds' },
  'limits.idleTimeoutMs': { env: 'SESSION_IDLE_TIMEOUT_MS', kind: 'int', fix: 'set SESSION_IDLE_TIMEOUT_MS to a positive integer of milliseconds' },
  'limits.maxToolResultChars': { env: 'MAX_TOOL_RESULT_CHARS', kind: 'int', fix: 'set MAX_TOOL_RESULT_CHARS between 500 and 200000' },
  'memory.enabled': { env: 'MEMORY_ENABLED', kind: 'bool', fix: 'set MEMORY_ENABLED to true or false' },
  'memory.strongThreshold': { env: 'MEMORY_STRONG_THRESHOLD', kind: 'number', fix: 'set MEMORY_STRONG_THRESHOLD to a cosine similarity between -1 and 1, above MEMORY_WEAK_THRESHOLD' },
  'memory.weakThreshold': { env: 'MEMORY_WEAK_THRESHOLD', kind: 'number', fix: 'set MEMORY_WEAK_THRESHOLD to a cosine similarity between -1 and 1, below MEMORY_STRONG_THRESHOLD' },
  'memory.ttlFactDays': { env: 'MEMORY_TTL_FACT_DAYS', kind: 'int', fix: 'set MEMORY_TTL_FACT_DAYS to a whole number of days, at least 1' },
  'memory.ttlPreferenceDays': { env: 'MEMORY_TTL_PREFERENCE_DAYS', kind: 'int', fix: 'set MEMORY_TTL_PREFERENCE_DAYS to a whole number of days, at least 1' },
  'memory.ttlIntentDays': { env: 'MEMORY_TTL_INTENT_DAYS', kind: 'int', fix: 'set MEMORY_TTL_INTENT_DAYS to a whole number of days, at least 1' },
  'memory.extractEveryTurns': { env: 'MEMORY_EXTRACT_EVERY_TURNS', kind: 'int', fix: 'set MEMORY_EXTRACT_EVERY_TURNS to a whole number of turns, at least 1' },
  'memory.citationCheck': { env: 'MEMORY_CITATION_CHECK', kind: 'bool', fix: 'set MEMORY_CITATION_CHECK to true or false' },
  'memory.maxStrong': { env: 'MEMORY_MAX_STRONG', kind: 'int', fix: 'set MEMORY_MAX_STRONG to a count from 0 to 50' },
  'memory.maxStrongChars': { env: 'MEMORY_MAX_STRONG_CHARS', kind: 'int', fix: 'set MEMORY_MAX_STRONG_CHARS to a character count from 0 to 20000' },
  'memory.maxWeak': { env: 'MEMORY_MAX_WEAK', kind: 'int', fix: 'set MEMORY_MAX_WEAK to a count from 0 to 50' },
  'memory.maxWeakChars': { env: 'MEMORY_MAX_WEAK_CHARS', kind: 'int', fix: 'set MEMORY_MAX_WEAK_CHARS to a character count from 0 to 20000' },
  'memory.embeddingDims': { env: 'EMBEDDING_DIMS', kind: 'int', fix: 'set EMBEDDING_DIMS to a vector length the embedding model supports, e.g. 256 or 1536' },
  'memory.cacheMaxAgeMs': { env: 'MEMORY_CACHE_MAX_AGE_MS', kind: 'int', fix: 'set MEMORY_CACHE_MAX_AGE_MS to milliseconds, 0 or more' },
  'memory.auditRetentionDays': { env: 'MEMORY_AUDIT_RETENTION_DAYS', kind: 'int', fix: 'set MEMORY_AUDIT_RETENTION_DAYS to a whole number of days, at least 1' },
  'memory.vectorSearch': { env: 'MEMORY_VECTOR_SEARCH', kind: 'string', fix: 'set MEMORY_VECTOR_SEARCH to auto, atlas or local' },
  'memory.vectorSearchIndex': { env: 'MEMORY_VECTOR_INDEX', kind: 'string', fix: 'set MEMORY_VECTOR_INDEX to the name of the Atlas Vector Search index on memories' },
  'maintenance.scheduleEveryMs': { env: 'MAINTENANCE_EVERY_MS', kind: 'int', fix: 'set MAINTENANCE_EVERY_MS to milliseconds between sweeps, or 0 to not create the schedule' },
  'encryption.keys': {
    env: 'PAYLOAD_ENCRYPTION_KEYS',
    kind: 'string',
    fix: 'set PAYLOAD_ENCRYPTION_KEYS to id:base64key[,id:base64key...], each key 32 random bytes (openssl rand -base64 32)',
  },
  'encryption.keyId': { env: 'PAYLOAD_ENCRYPTION_KEY_ID', kind: 'string', fix: 'set PAYLOAD_ENCRYPTION_KEY_ID to one of the ids in PAYLOAD_ENCRYPTION_KEYS' },
  'mcp.configPath': { env: 'MCP_CONFIG_PATH', kind: 'string', fix: 'set MCP_CONFIG_PATH to the path of an mcpServers JSON file' },
  'mcp.connectTimeoutMs': { env: 'MCP_CONNECT_TIMEOUT_MS', kind: 'int', fix: 'set MCP_CONNECT_TIMEOUT_MS to a positive integer of milliseconds' },
  'mcp.firstConnectTimeoutMs': { env: 'MCP_FIRST_CONNECT_TIMEOUT_MS', kind: 'int', fix: 'set MCP_FIRST_CONNECT_TIMEOUT_MS to a positive integer of milliseconds' },
  'mcp.refreshIntervalMs': { env: 'MCP_REFRESH_INTERVAL_MS', kind: 'int', fix: 'set MCP_REFRESH_INTERVAL_MS to at least 1000 milliseconds' },
  'worker.maxCachedWorkflows': {
    env: 'WORKER_MAX_CACHED_WORKFLOWS',
    kind: 'int',
    fix: 'set WORKER_MAX_CACHED_WORKFLOWS to 0 (no cache) or a session count of at least 2, no less than WORKER_MAX_CONCURRENT_WORKFLOW_TASKS',
  },
  'worker.maxConcurrentWorkflowTasks': {
    env: 'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS',
    kind: 'int',
    fix: 'set WORKER_MAX_CONCURRENT_WORKFLOW_TASKS to an integer of at least 2, at most WORKER_MAX_CACHED_WORKFLOWS',
  },
  'worker.maxConcurrentActivities': { env: 'WORKER_MAX_CONCURRENT_ACTIVITIES', kind: 'int', fix: 'set WORKER_MAX_CONCURRENT_ACTIVITIES to a positive integer' },
  'worker.maxConcurrentLocalActivities': { env: 'WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES', kind: 'int', fix: 'set WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES to a positive integer' },
  'worker.stickyQueueTimeoutMs': {
    env: 'WORKER_STICKY_QUEUE_TIMEOUT_MS',
    kind: 'int',
    fix: 'set WORKER_STICKY_QUEUE_TIMEOUT_MS to at least 1000 milliseconds (how long a session waits for the worker that cached it before another takes it)',
  },
  'worker.shutdownGraceMs': {
    env: 'WORKER_SHUTDOWN_GRACE_MS',
    kind: 'int',
    fix: 'set WORKER_SHUTDOWN_GRACE_MS to milliseconds, 0 or more (how long running activities may finish after SIGTERM)',
  },
  'worker.workflowStackTraces': {
    env: 'WORKFLOW_STACK_TRACES',
    kind: 'bool',
    fix: 'set WORKFLOW_STACK_TRACES to true (the Web UI Stack Trace tab and stacks on workflow errors, at a CPU cost per workflow task) or false',
  },
  'worker.deadlockCheck': {
    env: 'WORKFLOW_DEADLOCK_CHECK',
    kind: 'string',
    fix: "set WORKFLOW_DEADLOCK_CHECK to activation (one watchdog per workflow activation, the default) or call (the SDK's own workflow threads, one watchdog per call into the sandbox)",
  },
  'worker.v8InterruptBudget': {
    env: 'WORKER_V8_INTERRUPT_BUDGET',
    kind: 'int',
    fix: "set WORKER_V8_INTERRUPT_BUDGET to V8's interrupt budget in bytes of bytecode (e.g. 540672, eight times Node 20's 67584, for less CPU a step under many sessions), or 0 to keep V8's own",
  },
  'worker.tunerTargetMemoryUsage': {
    env: 'WORKER_TUNER_TARGET_MEMORY_USAGE',
    kind: 'number',
    fix: 'set WORKER_TUNER_TARGET_MEMORY_USAGE to a share of the machine\'s memory above 0 and at most 1 (e.g. 0.8), together with WORKER_TUNER_TARGET_CPU_USAGE',
  },
  'worker.tunerTargetCpuUsage': {
    env: 'WORKER_TUNER_TARGET_CPU_USAGE',
    kind: 'number',
    fix: 'set WORKER_TUNER_TARGET_CPU_USAGE to a share of the machine\'s CPU above 0 and at most 1 (e.g. 0.9), together with WORKER_TUNER_TARGET_MEMORY_USAGE',
  },
};

const SECRET_FIELDS = new Set(['model.apiKey', 'encryption.keys', 'temporal.apiKey']);

export interface ConfigProblem {
  field: string;
  source: string;
  message: string;
  fix: string;
}

/** Thrown when configuration is invalid; lists every problem, never a secret value. */
export class ConfigError extends Error {
  readonly type = 'ConfigInvalid';
  constructor(readonly problems: ConfigProblem[]) {
    super(
      `Invalid configuration (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n` +
        problems.map((p) => `  - ${p.field} (${p.source}): ${p.message}. Fix: ${p.fix}`).join('\n'),
    );
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const [head, tail] = path.split('.') as [string, string];
  const section = (target[head] ??= {}) as Record<string, unknown>;
  section[tail] = value;
}

function readFileConfig(path: string, problems: ConfigProblem[]): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, 'utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('the file must hold one JSON object');
    return parsed as Record<string, unknown>;
  } catch (err) {
    problems.push({
      field: '(file)',
      source: `DURABLE_AGENT_CONFIG=${path}`,
      // V8 quotes the first characters after a syntax error ("sk-secret-"... is not valid JSON): in a config file those may be a key.
      message: err instanceof SyntaxError ? `is not valid JSON (${err.message.replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, '').slice(0, 200)})` : (err as Error).message,
      fix: 'point DURABLE_AGENT_CONFIG at a readable JSON file with sections temporal, mongodb, model, limits, mcp',
    });
    return {};
  }
}

/** Parses the configuration; throws a ConfigError naming every invalid field. */
export function loadConfig(env: Env = process.env): RuntimeConfig {
  const problems: ConfigProblem[] = [];
  const raw: Record<string, unknown> = env.DURABLE_AGENT_CONFIG ? readFileConfig(env.DURABLE_AGENT_CONFIG, problems) : {};
  for (const section of ['temporal', 'mongodb', 'model', 'limits', 'mcp', 'memory', 'encryption', 'maintenance', 'worker']) raw[section] ??= {};
  const sources = new Map<string, string>();
  for (const [field, spec] of Object.entries(FIELDS)) {
    const value = env[spec.env];
    if (value === undefined || value === '') continue;
    sources.set(field, spec.env);
    if (spec.kind === 'int') {
      const n = Number(value);
      setPath(raw, field, Number.isFinite(n) && /^-?\d+$/.test(value.trim()) ? n : value);
    } else if (spec.kind === 'number') {
      const n = Number(value);
      setPath(raw, field, Number.isFinite(n) && /^-?\d+(\.\d+)?$/.test(value.trim()) ? n : value);
    } else if (spec.kind === 'bool') {
      const flag = value.trim().toLowerCase();
      setPath(raw, field, ['true', '1', 'yes', 'on'].includes(flag) ? true : ['false', '0', 'no', 'off'].includes(flag) ? false : value);
    } else {
      setPath(raw, field, value);
    }
  }
  const result = RuntimeConfig.safeParse(raw);
  if (!result.success) {
    for (const issue of result.error.issues) {
      const field = issue.path.map(String).join('.');
      const spec = FIELDS[field];
      const source = sources.get(field) ?? (env.DURABLE_AGENT_CONFIG ? `config file ${env.DURABLE_AGENT_CONFIG}` : 'default');
      problems.push({ field, source, message: issue.message, fix: spec?.fix ?? 'see the configuration table in the README' });
    }
  }
  if (result.success) {
    const { memory } = result.data;
    if (memory.strongThreshold !== undefined && memory.weakThreshold !== undefined && memory.weakThreshold > memory.strongThreshold) {
      problems.push({
        field: 'memory.weakThreshold',
        source: sources.get('memory.weakThreshold') ?? 'config file',
        message: `is above memory.strongThreshold (${memory.weakThreshold} > ${memory.strongThreshold})`,
        fix: 'set MEMORY_WEAK_THRESHOLD below MEMORY_STRONG_THRESHOLD',
      });
    }
  }
  if (result.success) {
    const { mongodb, limits } = result.data;
    if (mongodb.serverSelectionTimeoutMs >= limits.toolTimeoutMs) {
      problems.push({
        field: 'mongodb.serverSelectionTimeoutMs',
        source: sources.get('mongodb.serverSelectionTimeoutMs') ?? 'config file',
        message: `is not below limits.toolTimeoutMs (${mongodb.serverSelectionTimeoutMs} >= ${limits.toolTimeoutMs}), so a tool would time out before it could say the database is unreachable`,
        fix: 'set MONGODB_SERVER_SELECTION_TIMEOUT_MS below TOOL_TIMEOUT_MS',
      });
    }
  }
  if (result.success) {
    const { model } = result.data;
    if (new URL(model.baseUrl).hostname === 'api.openai.com' && !model.apiKey) {
      problems.push({
        field: 'model.apiKey',
        source: 'OPENAI_API_KEY',
        message: 'is required when talking to api.openai.com',
        fix: 'set OPENAI_API_KEY, or set OPENAI_BASE_URL to an OpenAI-compatible server that needs no key',
      });
    }
  }
  if (result.success) {
    const choice = parseEmbedderChoice(result.data.model.embeddingModel);
    if (choice.kind === 'invalid') {
      problems.push({ field: 'model.embeddingModel', source: sources.get('model.embeddingModel') ?? 'config file', message: choice.message, fix: FIELDS['model.embeddingModel']?.fix ?? '' });
    } else if (choice.kind === 'local' && result.data.memory.embeddingDims !== undefined) {
      problems.push({
        field: 'memory.embeddingDims',
        source: sources.get('memory.embeddingDims') ?? 'config file',
        message: `does not apply to the local model ${choice.name}, whose vectors have ${localEmbeddingDims(choice.name)} dimensions`,
        fix: 'unset EMBEDDING_DIMS, or set EMBEDDING_MODEL=offline-hash or an endpoint model it applies to',
      });
    }
  }
  if (result.success) {
    const problem = mongoUriProblem(result.data.mongodb.uri);
    if (problem) problems.push({ field: 'mongodb.uri', source: sources.get('mongodb.uri') ?? 'config file', message: problem, fix: FIELDS['mongodb.uri']?.fix ?? 'set MONGODB_URI' });
  }
  if (result.success) {
    const { encryption } = result.data;
    if (encryption.keyId !== undefined && (!encryption.keys || !parseKeyList(encryption.keys).has(encryption.keyId))) {
      problems.push({
        field: 'encryption.keyId',
        source: sources.get('encryption.keyId') ?? 'config file',
        message: `names key id "${encryption.keyId}", which is not among PAYLOAD_ENCRYPTION_KEYS`,
        fix: 'set PAYLOAD_ENCRYPTION_KEY_ID to one of the ids in PAYLOAD_ENCRYPTION_KEYS, or add that key',
      });
    }
  }
  if (result.success) {
    const given = Object.keys(raw.worker as Record<string, unknown>);
    for (const problem of workerTuningProblems(result.data.worker, given)) {
      const field = `worker.${problem.field}`;
      const fromFile = given.includes(problem.field) ? `config file ${env.DURABLE_AGENT_CONFIG ?? ''}`.trim() : undefined;
      const source = sources.get(field) ?? fromFile ?? (result.data.worker[problem.field] === undefined ? 'unset' : 'default');
      problems.push({ field, source, message: problem.message, fix: FIELDS[field]?.fix ?? 'see the configuration table in the README' });
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return (result as { data: RuntimeConfig }).data;
}

export { mongoAddress } from './mongo-uri';

/**
 * Every secret value in the configuration: the API key and the MongoDB
 * URI's credentials (raw and percent-decoded, as a driver may echo either).
 * Error messages and log lines are redacted against this list.
 */
export function configuredSecrets(config: RuntimeConfig): string[] {
  const secrets: string[] = [];
  if (config.model.apiKey) secrets.push(config.model.apiKey);
  secrets.push(...mongoUriSecrets(config.mongodb.uri));
  try {
    // A key in the base URL (https://user:key@host/v1) is as secret as OPENAI_API_KEY.
    const url = new URL(config.model.baseUrl);
    if (url.password) secrets.push(url.password, decodeURIComponent(url.password));
  } catch {
    // Unparseable URLs were refused by the schema.
  }
  if (config.encryption.keys) secrets.push(...keyMaterialStrings(config.encryption.keys));
  if (config.temporal.apiKey) secrets.push(config.temporal.apiKey);
  // Very short values would redact ordinary words; a key that short is not a secret worth the damage.
  return [...new Set(secrets.filter((s) => s.length >= 4))];
}

/** The configuration as it may be printed: secrets masked. */
export function describeConfig(config: RuntimeConfig): Record<string, unknown> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const [section, values] of Object.entries(config)) {
    out[section] = {};
    for (const [key, value] of Object.entries(values as Record<string, unknown>)) {
      const field = `${section}.${key}`;
      out[section][key] =
        SECRET_FIELDS.has(field) && value !== undefined ? '***' : field === 'mongodb.uri' ? maskMongoUri(String(value)) : value;
    }
  }
  return out;
}

/** Field paths and their environment variables, for the README table and error messages. */
export const CONFIG_FIELDS = FIELDS;
