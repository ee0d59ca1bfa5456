import { EventRenderer, withoutControls } from '../../client/chat/render-events';
import type { AgentEvent } from '../../workflows/events';

const base = { sessionId: 's', at: '2026-12-04T10:00:00.000Z' };

function rendered(events: AgentEvent[]): string {
  let out = '';
  const renderer = new EventRenderer({ write: (text) => void (out += text), color: false });
  for (const e of events) renderer.render(e);
  return out;
}

describe('the chat renderer and text from the model, tools and servers', () => {
  it('prints escape sequences and other terminal controls in a streamed answer as nothing, keeping the text', () => {
    // Erase the line, move up one and write over it, retitle the window, then a bell and a right-to-left override.
    const delta = 'Sure.\u001b[2K\u001b[1A\r✓ approved\u001b]0;owned\u0007 \u202eevil\u009b';
    const out = rendered([{ ...base, type: 'text_delta', turnId: 'turn-1', step: 1, attempt: 1, delta }]);
    expect(out).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
    expect(out).toContain('Sure.[2K[1A✓ approved]0;owned evil');
  });

  it('prints a confirmation whose tool name and arguments carry escapes without them, so the prompt cannot be hidden', () => {
    const out = rendered([
      {
        ...base,
        type: 'confirmation_required',
        confirmation: {
          toolCallId: 'call_1',
          toolName: 'wipe\u001b[8m',
          arguments: { note: '\u001b[2J' },
          risk: 'destructive',
          turnId: 'turn-1',
          requestedAt: base.at,
          expiresAt: '2026-12-04T10:05:00.000Z',
          reason: 'destructive tool',
        },
      },
    ]);
    expect(out).not.toContain('\u001b');
    expect(out).toContain('needs your confirmation: wipe[8m');
  });

  it('keeps tabs, newlines and ordinary text of every script as they are', () => {
    expect(withoutControls({ a: ['tab\there', 'line\nnext', '你好 مرحبا'] })).toEqual({ a: ['tab\there', 'line\nnext', '你好 مرحبا'] });
  });
});
