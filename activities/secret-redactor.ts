import { redact } from './mcp/mcp-log';

/**
 * Removes configured secrets (API key, MongoDB password, MCP header and env
 * values) from errors before they leave the worker: an activity's failure
 * message and stack are written to history, shown in events and turn results,
 * and logged. Some OpenAI-compatible servers echo the key in an error body, so
 * this runs on every activity's way out rather than at each call site.
 */
export class SecretRedactor {
  private readonly secrets: readonly string[];

  constructor(secrets: readonly string[]) {
    this.secrets = [...new Set(secrets.filter((s) => s.length > 0))];
  }

  get empty(): boolean {
    return this.secrets.length === 0;
  }

  text(value: string): string {
    return this.empty ? value : redact(value, this.secrets);
  }

  /**
   * The same error with every secret removed from its message and stack and
   * those of its causes. The error is changed in place, so its class and an
   * ApplicationFailure's type, nonRetryable, nextRetryDelay and details stay
   * exactly as they were. A thrown non-Error value is redacted as text.
   */
  error(err: unknown): unknown {
    if (this.empty) return err;
    if (typeof err === 'string') return this.text(err);
    const seen = new Set<unknown>();
    // Duck-typed, not `instanceof Error`: errors from Node internals may come from another realm.
    for (let e: unknown = err; typeof e === 'object' && e !== null && !seen.has(e); e = (e as { cause?: unknown }).cause) {
      seen.add(e);
      this.rewrite(e as Error, 'message');
      this.rewrite(e as Error, 'stack');
    }
    return err;
  }

  private rewrite(e: Error, key: 'message' | 'stack'): void {
    const value = e[key];
    if (typeof value !== 'string') return;
    const clean = this.text(value);
    if (clean === value) return;
    try {
      e[key] = clean;
    } catch {
      // A frozen or getter-only property: define an own one instead.
      Object.defineProperty(e, key, { value: clean, configurable: true, writable: true });
    }
  }

  /** Wraps every activity function so whatever it throws is redacted first. */
  activities<T extends object>(activities: T): T {
    if (this.empty) return activities;
    const wrapped: Record<string, unknown> = {};
    for (const [name, fn] of Object.entries(activities)) {
      wrapped[name] =
        typeof fn === 'function'
          ? async (...args: unknown[]) => {
              try {
                return await (fn as (...a: unknown[]) => Promise<unknown>)(...args);
              } catch (err) {
                throw this.error(err);
              }
            }
          : fn;
    }
    return wrapped as T;
  }
}
