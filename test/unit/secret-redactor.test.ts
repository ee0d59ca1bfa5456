import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { MongoClient } from 'mongodb';
import OpenAI from 'openai';
import { createActivities } from '../../activities/create-activities';
import { SecretRedactor } from '../../activities/secret-redactor';
import { FailureType } from '../../workflows/failure-types';
import type { CallModelInput } from '../../activities/activity-types';

const KEY = 'sk-test-SECRET-0123456789';

/** A loopback port nothing listens on (taken, then released). */
async function unusedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

describe('secret redactor', () => {
  it('removes secrets from an ApplicationFailure message, stack and cause, keeping type, retry and details', () => {
    const cause = new Error(`upstream said: bad key ${KEY}`);
    const failure = ApplicationFailure.create({
      message: `The model API failed (500): invalid key ${KEY}`,
      type: FailureType.ModelUnavailable,
      nonRetryable: true,
      nextRetryDelay: 1234,
      details: [{ turnId: 'turn-1' }],
      cause,
    });
    const out = new SecretRedactor([KEY, 'hunter2-pass']).error(failure) as ApplicationFailure;
    expect(out).toBe(failure);
    expect(out.message).toBe('The model API failed (500): invalid key ***');
    expect(out.stack).not.toContain(KEY);
    expect(out.cause?.message).toBe('upstream said: bad key ***');
    expect(out.cause?.stack).not.toContain(KEY);
    expect(out.type).toBe(FailureType.ModelUnavailable);
    expect(out.nonRetryable).toBe(true);
    expect(out.nextRetryDelay).toBe(1234);
    expect(out.details).toEqual([{ turnId: 'turn-1' }]);
  });

  it('redacts the longest secret first, so a token inside a header value leaves nothing behind', () => {
    const redactor = new SecretRedactor(['abcd', 'Bearer abcd-efgh']);
    expect(redactor.text('auth: Bearer abcd-efgh, key abcd')).toBe('auth: ***, key ***');
  });

  it('wraps activities so what they throw is redacted and what they return is untouched', async () => {
    const activities = new SecretRedactor([KEY]).activities({
      async fails(): Promise<never> {
        throw ApplicationFailure.retryable(`echo ${KEY}`, FailureType.ToolFailed);
      },
      async succeeds(x: number): Promise<number> {
        return x + 1;
      },
    });
    await expect(activities.succeeds(1)).resolves.toBe(2);
    await expect(activities.fails()).rejects.toMatchObject({ message: 'echo ***', type: FailureType.ToolFailed });
  });
});

describe('model errors from createActivities', () => {
  let server: Server;
  let baseUrl: string;
  let mongo: MongoClient;

  beforeAll(async () => {
    // An OpenAI-compatible server that, unlike OpenAI, echoes the key it was sent in its error body.
    server = createServer((req, res) => {
      req.resume();
      res.writeHead(500, { 'content-type': 'application/json', 'x-should-retry': 'false' });
      res.end(JSON.stringify({ error: { message: `internal error for ${req.headers.authorization}`, type: 'server_error', param: null, code: null } }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
    // Never connected: the model activity does not touch MongoDB.
    mongo = new MongoClient('mongodb://127.0.0.1:1');
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
    await mongo.close();
  });

  const input: CallModelInput = {
    sessionId: 's-1',
    turnId: 'turn-1',
    step: 0,
    model: {},
    messages: [{ role: 'user', content: 'hi' }],
    tools: [],
  } as unknown as CallModelInput;

  const callModelAt = async (url: string) => {
    const openai = new OpenAI({ baseURL: url, apiKey: KEY, maxRetries: 0 });
    const activities = createActivities({
      db: mongo.db('unused'),
      openai,
      model: { name: 'scripted' },
      limits: { toolTimeoutMs: 10_000, maxToolResultChars: 16_000 },
      secrets: [KEY],
    });
    return new MockActivityEnvironment().run(activities.callModel, input).then(
      () => {
        throw new Error('callModel should have failed');
      },
      (err: unknown) => err as ApplicationFailure,
    );
  };

  it('never lets a key echoed by the model server reach the failure, and names the server', async () => {
    const failure = await callModelAt(baseUrl);
    expect(failure.type).toBe(FailureType.ModelUnavailable);
    expect(failure.message).toContain(`The model API at ${baseUrl} failed (500)`);
    expect(failure.message).toContain('Bearer ***');
    expect(JSON.stringify({ message: failure.message, stack: failure.stack, cause: failure.cause?.message })).not.toContain(KEY);
  });

  it('names the unreachable model URL and the refused connection', async () => {
    const port = await unusedPort();
    const failure = await callModelAt(`http://127.0.0.1:${port}/v1/`);
    expect(failure.type).toBe(FailureType.ModelUnavailable);
    expect(failure.message).toMatch(new RegExp(`^Could not reach the model API at http://127\\.0\\.0\\.1:${port}/v1: .*ECONNREFUSED.*OPENAI_BASE_URL`));
  });
});
