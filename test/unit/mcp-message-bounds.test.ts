import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { MAX_MCP_MESSAGE_BYTES, McpAnswerTooLargeError, answerTooLargeResponse, boundedFetch, isAnswerTooLarge } from '../../activities/mcp/mcp-message-bounds';
import { mcpCallFailure } from '../../activities/mcp/mcp-errors';

/** An answer of `bytes` bytes, streamed in 64 KB chunks. */
const answerOf = (bytes: number, status = 200): Response => {
  let left = bytes;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (left <= 0) return controller.close();
      const n = Math.min(left, 65_536);
      left -= n;
      controller.enqueue(new Uint8Array(n).fill(0x20));
    },
  });
  return new Response(body, { status, headers: { 'content-type': 'application/json', 'mcp-session-id': 'abc' } });
};

describe("an MCP server's answer over HTTP", () => {
  it('fails its read once it passes the bound, with an error the call failure names (the tool ran; ask for less; not retried)', async () => {
    const fetch = boundedFetch(1_000_000, async () => answerOf(1_500_000));
    const res = await fetch('http://mcp.example/mcp', { method: 'POST', body: '{}' });
    expect(res.headers.get('mcp-session-id')).toBe('abc');
    const err = await res.text().then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(McpAnswerTooLargeError);
    const failure = mcpCallFailure(new Error('send failed', { cause: err }), { toolName: 'mcp_files_read', server: 'files', timeoutMs: 10_000, secrets: [] });
    expect({ type: failure.type, nonRetryable: failure.nonRetryable }).toEqual({ type: 'ToolFailed', nonRetryable: true });
    expect(failure.message).toMatch(/the tool ran, but MCP server "files" answered with more than 64 MB, so its answer was not read\. Next step: .*ask for less/);
  });

  it('within the bound, and on the long-lived GET stream of notifications, is read whole', async () => {
    expect((await (await boundedFetch(1_000_000, async () => answerOf(900_000))('http://mcp.example/mcp', { method: 'POST' })).arrayBuffer()).byteLength).toBe(900_000);
    expect((await (await boundedFetch(1_000_000, async () => answerOf(1_500_000))('http://mcp.example/mcp', { method: 'GET' })).arrayBuffer()).byteLength).toBe(1_500_000);
    expect((await boundedFetch(1_000_000, async () => new Response(null, { status: 202 }))('http://mcp.example/mcp', { method: 'POST' })).status).toBe(202);
  });

  it('as server-sent events bounds each event, not the stream: many small events pass, whatever their line breaks', async () => {
    const event = (i: number, eol: string) => `id: ${i}${eol}data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progress: i, message: 'x'.repeat(900) } })}${eol}${eol}`;
    for (const eol of ['\n', '\r\n', '\r']) {
      const text = Array.from({ length: 60 }, (_, i) => event(i, eol)).join('');
      // Cut at every 7 bytes, so a CR LF pair and a blank line fall across chunks.
      const bytes = new TextEncoder().encode(text);
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let at = 0; at < bytes.length; at += 7) controller.enqueue(bytes.slice(at, at + 7));
          controller.close();
        },
      });
      const streamed = new Response(body, { headers: { 'content-type': 'text/event-stream' } });
      const read = await (await boundedFetch(2_000, async () => streamed)('http://mcp.example/mcp', { method: 'GET' })).text();
      expect({ eol: JSON.stringify(eol), bytes: read.length }).toEqual({ eol: JSON.stringify(eol), bytes: text.length });
    }
  });

  it('as server-sent events, fails one event over the bound: the requests of the POST it answers are named first', async () => {
    const named: unknown[][] = [];
    const big = `data: ${'x'.repeat(1_500)}\n\n`;
    const answer = () => new Response(`data: {"small":1}\n\n${big}`, { headers: { 'content-type': 'text/event-stream; charset=utf-8' } });
    const fetch = boundedFetch(1_000, async () => answer(), (ids) => named.push(ids));
    const batch = JSON.stringify([{ jsonrpc: '2.0', id: 7, method: 'tools/call', params: {} }, { jsonrpc: '2.0', method: 'notifications/cancelled' }, { jsonrpc: '2.0', id: 'b', method: 'ping' }]);
    const err = await (await fetch('http://mcp.example/mcp', { method: 'POST', body: batch })).text().then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(McpAnswerTooLargeError);
    expect(named).toEqual([[7, 'b']]);
    // On the GET stream there is no request to fail; a body that is not JSON names none.
    const onGet = await (await fetch('http://mcp.example/mcp', { method: 'GET' })).text().then(() => undefined, (e: unknown) => e);
    expect(onGet).toBeInstanceOf(McpAnswerTooLargeError);
    await (await fetch('http://mcp.example/mcp', { method: 'POST', body: 'not json' })).text().catch(() => undefined);
    expect(named).toEqual([[7, 'b'], []]);
  });

  it("the error answer made for a request whose streamed answer was too large is read as the tool's too-large failure", () => {
    const response = answerTooLargeResponse(3, MAX_MCP_MESSAGE_BYTES);
    const err = new McpError(response.error.code, response.error.message, response.error.data);
    expect(isAnswerTooLarge(err)).toBe(true);
    expect(isAnswerTooLarge(new McpError(-32603, 'internal error', { other: 1 }))).toBe(false);
    const failure = mcpCallFailure(err, { toolName: 'mcp_files_read', server: 'files', timeoutMs: 10_000, secrets: [] });
    expect({ type: failure.type, nonRetryable: failure.nonRetryable }).toEqual({ type: 'ToolFailed', nonRetryable: true });
    expect(failure.message).toMatch(/the tool ran, but MCP server "files" answered with more than 64 MB/);
  });
});
