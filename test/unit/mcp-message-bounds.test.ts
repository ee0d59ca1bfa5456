import { McpAnswerTooLargeError, boundedFetch } from '../../activities/mcp/mcp-message-bounds';
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

  it('within the bound, on the long-lived GET stream of notifications, and streamed as server-sent events, is read whole', async () => {
    expect((await (await boundedFetch(1_000_000, async () => answerOf(900_000))('http://mcp.example/mcp', { method: 'POST' })).arrayBuffer()).byteLength).toBe(900_000);
    expect((await (await boundedFetch(1_000_000, async () => answerOf(1_500_000))('http://mcp.example/mcp', { method: 'GET' })).arrayBuffer()).byteLength).toBe(1_500_000);
    expect((await boundedFetch(1_000_000, async () => new Response(null, { status: 202 }))('http://mcp.example/mcp', { method: 'POST' })).status).toBe(202);
    // An answer as server-sent events is left to the SDK: an error inside it would hang the call, not fail it.
    const sse = answerOf(1_500_000);
    const streamed = new Response(sse.body, { headers: { 'content-type': 'text/event-stream' } });
    expect((await (await boundedFetch(1_000_000, async () => streamed)('http://mcp.example/mcp', { method: 'POST' })).arrayBuffer()).byteLength).toBe(1_500_000);
  });
});
