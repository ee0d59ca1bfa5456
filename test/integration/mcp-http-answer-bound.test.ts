import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { mcpCallFailure } from '../../activities/mcp/mcp-errors';
import { createTransport } from '../../activities/mcp/mcp-transport';
import { HttpReportServer, freePort, recordingLogger, tempDir } from '../support/mcp-servers';

// The report server answers its POSTs as server-sent events (the SDK server's default), as a real child process.
// The bound is set low here (8 KB) so an answer past it is quick to make; the worker's is MAX_MCP_MESSAGE_BYTES.
const LIMIT = 8_000;
const dir = tempDir('mcp-http-bound');
let server: HttpReportServer;
let client: Client;

beforeAll(async () => {
  server = new HttpReportServer({ port: await freePort(), eventsPath: join(dir, 'events.jsonl') });
  const url = await server.start();
  client = new Client({ name: 'bound-test', version: '1.0.0' });
  await client.connect(createTransport({ type: 'http', url } as never, recordingLogger(), undefined, LIMIT).transport);
});
afterAll(async () => {
  await client?.close();
  await server?.kill();
});

describe('an answer streamed as server-sent events over HTTP', () => {
  it('past the bound fails its call at once, as a tool that ran, and the connection serves the next call', async () => {
    const started = Date.now();
    const err = await client.callTool({ name: 'fail', arguments: { message: 'x'.repeat(LIMIT + 4_000) } }, CallToolResultSchema, { timeout: 30_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    // Not the call's 30 s timeout: the transport failed the request as soon as its answer passed the bound.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(err).toBeDefined();
    const failure = mcpCallFailure(err, { toolName: 'mcp_reports_fail', server: 'reports', timeoutMs: 30_000, secrets: [] });
    expect({ type: failure.type, nonRetryable: failure.nonRetryable }).toEqual({ type: 'ToolFailed', nonRetryable: true });
    expect(failure.message).toMatch(/the tool ran, but MCP server "reports" answered with more than .*ask for less/);

    const next = await client.callTool({ name: 'noop', arguments: {} }, CallToolResultSchema, { timeout: 10_000 });
    expect(next.content).toEqual([{ type: 'text', text: 'ok' }]);
  });

  it('within the bound is read whole, however much the stream carries in all (a hundred progress events, then the result)', async () => {
    const progress: number[] = [];
    const result = await client.callTool({ name: 'slow', arguments: { ms: 200, steps: 100 } }, CallToolResultSchema, {
      timeout: 20_000,
      onprogress: (p) => progress.push(p.progress),
    });
    expect(result.content).toEqual([{ type: 'text', text: 'done after 200 ms' }]);
    expect(progress).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    const text = 'y'.repeat(LIMIT - 1_000);
    const echoed = await client.callTool({ name: 'fail', arguments: { message: text } }, CallToolResultSchema, { timeout: 10_000 });
    expect(echoed).toMatchObject({ isError: true, content: [{ type: 'text', text }] });
  });
});
