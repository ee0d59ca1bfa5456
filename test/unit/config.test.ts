import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { ConfigError, configuredSecrets, describeConfig, loadConfig, mongoAddress } from '../../workers/config';
import { heapWarning, WORKER_TUNING_DEFAULTS, workerTuningOptions } from '../../workers/worker-tuning';

describe('runtime configuration', () => {
  it('gives working defaults for the local stack', () => {
    const config = loadConfig({ OPENAI_BASE_URL: 'http://127.0.0.1:9999/v1' });
    expect(config.temporal).toEqual({ address: '127.0.0.1:7233', namespace: 'default', taskQueue: 'durable-agent', connectTimeoutMs: 5_000 });
    expect(config.mongodb.serverSelectionTimeoutMs).toBe(3_000);
    expect(config.limits.maxSteps).toBe(5);
    expect(config.limits.toolTimeoutMs).toBe(10_000);
  });

  it('names every invalid field, its source and how to fix it', () => {
    let error: unknown;
    try {
      loadConfig({ TEMPORAL_ADDRESS: 'localhost', MONGODB_URI: 'postgres://x', AGENT_MAX_STEPS: 'many', OPENAI_BASE_URL: 'not a url' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const problems = (error as ConfigError).problems;
    expect(problems.map((p) => p.field).sort()).toEqual(['limits.maxSteps', 'model.baseUrl', 'mongodb.uri', 'temporal.address']);
    expect((error as ConfigError).message).toMatch(/temporal\.address \(TEMPORAL_ADDRESS\): must be host:port\. Fix: set TEMPORAL_ADDRESS/);
    expect((error as ConfigError).message).toMatch(/limits\.maxSteps \(AGENT_MAX_STEPS\)/);
  });

  it('requires a key for api.openai.com', () => {
    expect(() => loadConfig({})).toThrow(/model\.apiKey \(OPENAI_API_KEY\): is required when talking to api\.openai\.com/);
  });

  it('never prints the API key', () => {
    const config = loadConfig({ OPENAI_API_KEY: 'sk-secret-123' });
    expect(JSON.stringify(describeConfig(config))).not.toContain('sk-secret-123');
    let message = '';
    try {
      loadConfig({ OPENAI_API_KEY: 'sk-secret-123', AGENT_MAX_STEPS: '0' });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toMatch(/limits\.maxSteps/);
    expect(message).not.toContain('sk-secret-123');
  });

  it('a config file that is not JSON is named, without quoting what follows the error (a key written unquoted)', () => {
    const path = `${tmpdir()}/durable-agent-config-bad-${process.pid}.json`;
    fs.writeFileSync(path, '{"model": {"apiKey": sk-live-abcdefghijkl}}');
    try {
      expect(() => loadConfig({ DURABLE_AGENT_CONFIG: path })).toThrow(/\(file\) \(DURABLE_AGENT_CONFIG=.*\): is not valid JSON \(Unexpected token 's'\)/);
      expect(() => loadConfig({ DURABLE_AGENT_CONFIG: path })).not.toThrow(/sk-live/);
    } finally {
      fs.rmSync(path);
    }
  });

  it('reads a JSON config file and lets the environment win', () => {
    const path = `${tmpdir()}/durable-agent-config-${process.pid}.json`;
    fs.writeFileSync(path, JSON.stringify({ temporal: { taskQueue: 'from-file' }, limits: { maxSteps: 7 }, model: { baseUrl: 'http://127.0.0.1:1/v1' } }));
    const config = loadConfig({ DURABLE_AGENT_CONFIG: path, AGENT_MAX_STEPS: '9' });
    expect(config.temporal.taskQueue).toBe('from-file');
    expect(config.limits.maxSteps).toBe(9);
    fs.rmSync(path);
  });

  it('lists every configured secret for redaction and never prints the MongoDB password', () => {
    const config = loadConfig({
      OPENAI_API_KEY: 'sk-secret-123',
      OPENAI_BASE_URL: 'https://proxy:url-pass-77@models.example.com/v1',
      MONGODB_URI: 'mongodb://agent:p%40ss-word-9@db1.example.com:27017,db2.example.com/admin?authSource=admin',
    });
    expect(configuredSecrets(config).sort()).toEqual(['p%40ss-word-9', 'p@ss-word-9', 'sk-secret-123', 'url-pass-77'].sort());
    const printed = JSON.stringify(describeConfig(config));
    expect(printed).not.toContain('ss-word-9');
    expect(printed).toContain('mongodb://agent:***@db1.example.com:27017,db2.example.com/admin?authSource=admin');
    expect(mongoAddress(config.mongodb.uri)).toBe('mongodb://db1.example.com:27017,db2.example.com');
  });

  it('refuses a MongoDB URI the driver cannot use, naming MONGODB_URI and never the password', () => {
    const base = { OPENAI_BASE_URL: 'http://127.0.0.1:9999/v1' };
    // A base64 password with "/" (the driver refused it at connect, after the worker had printed it whole), and one with "@".
    for (const uri of ['mongodb://app:Zk8/q+Xy3Lm9Tr=@db:27017/x', 'mongodb://app:p@ssw0rd-77@db:27017']) {
      let error: unknown;
      try {
        loadConfig({ ...base, MONGODB_URI: uri });
      } catch (err) {
        error = err;
      }
      expect(error).toBeInstanceOf(ConfigError);
      const message = (error as Error).message;
      expect(message).toMatch(/mongodb\.uri \(MONGODB_URI\): .*percent-encode/);
      for (const secret of ['Zk8/q+Xy3Lm9Tr=', 'Xy3Lm9', 'ssw0rd-77']) expect(message).not.toContain(secret);
    }
  });

  it('masks secret option values in the printed URI and lists them for redaction', () => {
    const config = loadConfig({
      OPENAI_BASE_URL: 'http://127.0.0.1:9999/v1',
      MONGODB_URI: 'mongodb://app:pw-secret-1@db:27017/agent?replicaSet=rs0&tlsCertificateKeyFilePassword=hunter2-key&authMechanismProperties=AWS_SESSION_TOKEN:tok-abcdefgh',
    });
    const printed = JSON.stringify(describeConfig(config));
    expect(printed).toContain('mongodb://app:***@db:27017/agent?replicaSet=rs0&tlsCertificateKeyFilePassword=***&authMechanismProperties=***');
    for (const secret of ['pw-secret-1', 'hunter2-key', 'tok-abcdefgh']) {
      expect(printed).not.toContain(secret);
      expect(configuredSecrets(config)).toContain(secret);
    }
    // Ordinary values are masked in print but not redacted everywhere ("5000" would go from every message).
    const timed = loadConfig({ OPENAI_BASE_URL: 'http://127.0.0.1:9999/v1', MONGODB_URI: 'mongodb://db:27017/agent?wtimeoutMS=5000&readPreferenceTags=dc:east,use:production' });
    expect(configuredSecrets(timed)).toEqual([]);
  });

  it('keeps the MongoDB server selection timeout below the tool timeout, so an outage is reported before the tool times out', () => {
    expect(() => loadConfig({ OPENAI_BASE_URL: 'http://127.0.0.1:9999/v1', TOOL_TIMEOUT_MS: '2000' })).toThrow(
      /mongodb\.serverSelectionTimeoutMs .*is not below limits\.toolTimeoutMs \(3000 >= 2000\)/,
    );
  });
  it('reads how long writes behind model calls wait to share an insert, and names the setting when it is out of range', () => {
    const local = { OPENAI_BASE_URL: 'http://127.0.0.1:9999/v1' };
    expect(loadConfig(local).mongodb.writeBatchMs).toBe(150);
    expect(loadConfig({ ...local, MONGODB_WRITE_BATCH_MS: '0' }).mongodb.writeBatchMs).toBe(0);
    for (const bad of ['-1', '151', '2.5', 'soon']) {
      expect(() => loadConfig({ ...local, MONGODB_WRITE_BATCH_MS: bad })).toThrow(/mongodb\.writeBatchMs \(MONGODB_WRITE_BATCH_MS\)/);
      expect(() => loadConfig({ ...local, MONGODB_WRITE_BATCH_MS: bad })).toThrow(/set MONGODB_WRITE_BATCH_MS to a whole number of milliseconds from 0/);
    }
  });
  it('reads what carries model requests, and names the setting and its choices when it is neither', () => {
    const local = { OPENAI_BASE_URL: 'http://127.0.0.1:9999/v1' };
    expect(loadConfig(local).model.httpClient).toBe('undici');
    expect(loadConfig({ ...local, MODEL_HTTP_CLIENT: 'fetch' }).model.httpClient).toBe('fetch');
    // Empty counts as unset, like every other variable.
    expect(loadConfig({ ...local, MODEL_HTTP_CLIENT: '' }).model.httpClient).toBe('undici');
    for (const bad of ['Undici', 'axios', 'http2']) {
      expect(() => loadConfig({ ...local, MODEL_HTTP_CLIENT: bad })).toThrow(/model\.httpClient \(MODEL_HTTP_CLIENT\)/);
      expect(() => loadConfig({ ...local, MODEL_HTTP_CLIENT: bad })).toThrow(/set MODEL_HTTP_CLIENT to undici .* or fetch/);
    }
  });
  describe('worker tuning', () => {
    const local = { OPENAI_BASE_URL: 'http://127.0.0.1:9999/v1' };
    const problemsOf = (env: Record<string, string>): ConfigError => {
      try {
        loadConfig({ ...local, ...env });
      } catch (err) {
        return err as ConfigError;
      }
      throw new Error('expected a ConfigError');
    };

    it('defaults to the measured cache size and fixed slot counts', () => {
      const { worker } = loadConfig(local);
      expect(worker).toEqual({ ...WORKER_TUNING_DEFAULTS });
      expect(workerTuningOptions(worker)).toEqual({
        stickyQueueScheduleToStartTimeout: 10_000,
        shutdownGraceTime: 0,
        maxCachedWorkflows: WORKER_TUNING_DEFAULTS.maxCachedWorkflows,
        maxConcurrentWorkflowTaskExecutions: WORKER_TUNING_DEFAULTS.maxConcurrentWorkflowTasks,
        maxConcurrentActivityTaskExecutions: WORKER_TUNING_DEFAULTS.maxConcurrentActivities,
        maxConcurrentLocalActivityExecutions: WORKER_TUNING_DEFAULTS.maxConcurrentLocalActivities,
      });
    });

    it('reads every setting from the environment and hands it to the Temporal worker', () => {
      const { worker } = loadConfig({
        ...local,
        WORKER_MAX_CACHED_WORKFLOWS: '300',
        WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '20',
        WORKER_MAX_CONCURRENT_ACTIVITIES: '50',
        WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES: '30',
        WORKER_STICKY_QUEUE_TIMEOUT_MS: '2000',
        WORKER_SHUTDOWN_GRACE_MS: '15000',
      });
      expect(workerTuningOptions(worker)).toEqual({
        stickyQueueScheduleToStartTimeout: 2_000,
        shutdownGraceTime: 15_000,
        maxCachedWorkflows: 300,
        maxConcurrentWorkflowTaskExecutions: 20,
        maxConcurrentActivityTaskExecutions: 50,
        maxConcurrentLocalActivityExecutions: 30,
      });
    });

    it('uses the resource-based tuner when both of its targets are set, keeping the cache size', () => {
      const { worker } = loadConfig({ ...local, WORKER_TUNER_TARGET_MEMORY_USAGE: '0.8', WORKER_TUNER_TARGET_CPU_USAGE: '0.9', WORKER_MAX_CACHED_WORKFLOWS: '100' });
      expect(workerTuningOptions(worker)).toEqual({
        stickyQueueScheduleToStartTimeout: 10_000,
        shutdownGraceTime: 0,
        maxCachedWorkflows: 100,
        tuner: { tunerOptions: { targetMemoryUsage: 0.8, targetCpuUsage: 0.9 } },
      });
    });

    it('names the variable of each invalid value', () => {
      const error = problemsOf({
        WORKER_MAX_CACHED_WORKFLOWS: 'lots',
        WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '1',
        WORKER_MAX_CONCURRENT_ACTIVITIES: '0',
        WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES: '-3',
        WORKER_TUNER_TARGET_MEMORY_USAGE: '80%',
        WORKER_TUNER_TARGET_CPU_USAGE: '1.5',
        WORKER_STICKY_QUEUE_TIMEOUT_MS: '500',
        WORKER_SHUTDOWN_GRACE_MS: '-1',
        WORKER_V8_INTERRUPT_BUDGET: '-5',
      });
      expect(error.problems.map((p) => p.source).sort()).toEqual([
        'WORKER_MAX_CACHED_WORKFLOWS',
        'WORKER_MAX_CONCURRENT_ACTIVITIES',
        'WORKER_MAX_CONCURRENT_LOCAL_ACTIVITIES',
        'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS',
        'WORKER_SHUTDOWN_GRACE_MS',
        'WORKER_STICKY_QUEUE_TIMEOUT_MS',
        'WORKER_TUNER_TARGET_CPU_USAGE',
        'WORKER_TUNER_TARGET_MEMORY_USAGE',
        'WORKER_V8_INTERRUPT_BUDGET',
      ]);
      expect(error.message).toMatch(/worker\.maxCachedWorkflows \(WORKER_MAX_CACHED_WORKFLOWS\): .*Fix: set WORKER_MAX_CACHED_WORKFLOWS to 0 \(no cache\) or a session count/);
    });

    it("reads V8's interrupt budget, 0 (V8's own) unless set, and refuses a word", () => {
      expect(loadConfig(local).worker.v8InterruptBudget).toBe(0);
      expect(loadConfig({ ...local, WORKER_V8_INTERRUPT_BUDGET: '540672' }).worker.v8InterruptBudget).toBe(540_672);
      expect(problemsOf({ WORKER_V8_INTERRUPT_BUDGET: 'high' }).message).toMatch(/worker\.v8InterruptBudget \(WORKER_V8_INTERRUPT_BUDGET\): .*Fix: set WORKER_V8_INTERRUPT_BUDGET to V8's interrupt budget/);
    });

    it('refuses a cache of one session, which the SDK would quietly raise to two', () => {
      expect(problemsOf({ WORKER_MAX_CACHED_WORKFLOWS: '1' }).message).toMatch(/worker\.maxCachedWorkflows \(WORKER_MAX_CACHED_WORKFLOWS\): must be 0 \(no cache\) or at least 2/);
    });

    it('refuses more workflow task slots than cached sessions, which the SDK would quietly lower', () => {
      const error = problemsOf({ WORKER_MAX_CACHED_WORKFLOWS: '10', WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '20' });
      expect(error.problems).toEqual([expect.objectContaining({ field: 'worker.maxConcurrentWorkflowTasks', source: 'WORKER_MAX_CONCURRENT_WORKFLOW_TASKS' })]);
      expect(error.message).toMatch(/is above worker\.maxCachedWorkflows \(20 > 10\)/);
      // With no cache every task replays, so any slot count goes.
      expect(loadConfig({ ...local, WORKER_MAX_CACHED_WORKFLOWS: '0', WORKER_MAX_CONCURRENT_WORKFLOW_TASKS: '20' }).worker.maxCachedWorkflows).toBe(0);
    });

    it('wants both tuner targets, and no slot counts beside them', () => {
      expect(problemsOf({ WORKER_TUNER_TARGET_MEMORY_USAGE: '0.8' }).message).toMatch(
        /worker\.tunerTargetCpuUsage \(unset\): is required when WORKER_TUNER_TARGET_MEMORY_USAGE is set\. Fix: set WORKER_TUNER_TARGET_CPU_USAGE/,
      );
      const error = problemsOf({ WORKER_TUNER_TARGET_MEMORY_USAGE: '0.8', WORKER_TUNER_TARGET_CPU_USAGE: '0.9', WORKER_MAX_CONCURRENT_ACTIVITIES: '50' });
      expect(error.problems).toEqual([expect.objectContaining({ field: 'worker.maxConcurrentActivities', source: 'WORKER_MAX_CONCURRENT_ACTIVITIES' })]);
      expect(error.message).toMatch(/cannot be set together with the resource-based tuner/);
    });

    it('warns when a full cache of sessions would not fit the heap, naming both settings', () => {
      const MB = 1_048_576;
      // npm run worker's default heap (512 MB old space, 560 MB in all) holds the default cache.
      expect(heapWarning(WORKER_TUNING_DEFAULTS.maxCachedWorkflows, 560 * MB)).toBeUndefined();
      expect(heapWarning(500, 560 * MB)).toBe(
        "a full cache of 500 sessions needs about 930 MB of heap (180 MB + 1.5 MB a session, more for long ones), close to or over this process's limit of 560 MB: raise the limit (WORKER_HEAP_MB for npm run worker, else node --max-old-space-size) to at least 1240 MB, or lower WORKER_MAX_CACHED_WORKFLOWS",
      );
      expect(heapWarning(500, 1240 * MB)).toBeUndefined();
      expect(heapWarning(0, 100 * MB)).toMatch(/needs about 180 MB/);
    });
  });
});
