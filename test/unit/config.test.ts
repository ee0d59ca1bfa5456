import * as fs from 'node:fs';
import { tmpdir } from 'node:os';
import { ConfigError, configuredSecrets, describeConfig, loadConfig, mongoAddress } from '../../workers/config';

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

  it('keeps the MongoDB server selection timeout below the tool timeout, so an outage is reported before the tool times out', () => {
    expect(() => loadConfig({ OPENAI_BASE_URL: 'http://127.0.0.1:9999/v1', TOOL_TIMEOUT_MS: '2000' })).toThrow(
      /mongodb\.serverSelectionTimeoutMs .*is not below limits\.toolTimeoutMs \(3000 >= 2000\)/,
    );
  });
});
