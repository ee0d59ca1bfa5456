import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Progress } from '@modelcontextprotocol/sdk/types.js';

/** Our progress tokens: strings the SDK cannot confuse with its numeric request ids. */
const TOKEN_PREFIX = 'durable-agent-progress-';

export interface ProgressRegistration {
  /** Goes in the request's `_meta.progressToken`. */
  token: string;
  /** Stops delivery; call when the request is over. */
  dispose(): void;
}

/**
 * Delivers progress notifications synchronously, in the order the transport
 * read them. The SDK runs notification handlers a microtask later but handles
 * a response at once, dropping the request's progress handler; when a
 * server's last `notifications/progress` and its result arrive in one chunk,
 * the SDK's `onprogress` never sees that last notification ("unknown token").
 * Here the transport's `onmessage` is observed before the SDK's (the SDK
 * chains a handler set before `connect`), so by the time a call's result is
 * handled, every notification sent before it has been delivered.
 */
export class ProgressRouter {
  private next = 0;
  private readonly handlers = new Map<string, (progress: Progress) => void>();

  /** Must be called before `client.connect(transport)`. */
  attach(transport: Transport): void {
    const previous = transport.onmessage;
    transport.onmessage = (message, extra) => {
      previous?.(message, extra);
      if (!('method' in message) || message.method !== 'notifications/progress' || 'id' in message) return;
      const params = (message.params ?? {}) as Record<string, unknown>;
      const handler = typeof params.progressToken === 'string' ? this.handlers.get(params.progressToken) : undefined;
      if (!handler || typeof params.progress !== 'number') return;
      handler({
        progress: params.progress,
        ...(typeof params.total === 'number' ? { total: params.total } : {}),
        ...(typeof params.message === 'string' ? { message: params.message } : {}),
      });
    };
  }

  register(onprogress: (progress: Progress) => void): ProgressRegistration {
    this.next += 1;
    const token = `${TOKEN_PREFIX}${this.next}`;
    this.handlers.set(token, onprogress);
    return { token, dispose: () => this.handlers.delete(token) };
  }

  /** The SDK reports our tokens as unknown (its own handler map does not hold them): not a transport problem. */
  static isOwnTokenNoise(err: Error): boolean {
    return err.message.startsWith('Received a progress notification for an unknown token') && err.message.includes(TOKEN_PREFIX);
  }
}
