import type { AgentEvent } from '../../workflows/events';
import type { TurnOutcome } from '../../workflows/session-types';
import { paint, type Painter } from './terminal-style';

export interface EventRendererOptions {
  /** Where output goes; defaults to stdout. The chat wraps it to keep its prompt intact. */
  write?: (text: string) => void;
  /** ANSI colours; defaults to stdout being a TTY and NO_COLOR unset. */
  color?: boolean;
  /** Also print activity changes (thinking, running tools); lifecycle changes always print. */
  verbose?: boolean;
  /** Label in front of streamed answers. */
  assistantLabel?: string;
}

const ARGS_MAX = 140;
const PREVIEW_MAX = 160;

/**
 * Characters a terminal acts on rather than shows: C0 controls but tab and
 * newline, DEL, C1 controls (ESC and CSI start the sequences that move the
 * cursor, erase lines or retitle the window), and the bidirectional
 * overrides that reorder what is shown. Text from the model, a tool or an
 * MCP server could otherwise rewrite or hide what the chat printed before,
 * a confirmation prompt included.
 */
const TERMINAL_CONTROLS = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g;

/** Every string in `value` with the terminal's control characters taken out. */
export function withoutControls<T>(value: T): T {
  if (typeof value === 'string') return value.replace(TERMINAL_CONTROLS, '') as T;
  if (Array.isArray(value)) return value.map((v: unknown) => withoutControls(v)) as T;
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [withoutControls(k), withoutControls(v)])) as T;
  return value;
}

/** Cuts a single-line rendering of `value` to `max` characters. */
export function oneLine(value: unknown, max: number): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? String(value));
  const flat = withoutControls(text.replace(/\s+/g, ' ')).trim();
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`;
}

const OUTCOME_LABEL: Record<TurnOutcome, string> = {
  completed: 'completed',
  interrupted: 'interrupted',
  step_limit: 'stopped at the step limit',
  failed: 'failed',
  budget_exceeded: 'stopped: daily budget reached',
};

/**
 * Renders a session's events for a terminal as they arrive: text deltas
 * inline, tool calls as cards (numbered so parallel calls pair with their
 * results), confirmations, and a footer per turn. It only prints: answering
 * a confirmation is the caller's job.
 */
export class EventRenderer {
  private readonly write: (text: string) => void;
  private readonly style: Painter;
  private readonly verbose: boolean;
  private readonly assistantLabel: string;
  /** True while the cursor sits after streamed text with no newline yet. */
  private midLine = false;
  /** `turnId/step/attempt` of the text being streamed, to know when a new answer starts. */
  private textKey: string | null = null;
  private readonly attempts = new Map<string, number>();
  private readonly callNumbers = new Map<string, number>();
  private callTurn: string | null = null;
  private status: string | null = null;

  constructor(options: EventRendererOptions = {}) {
    this.write = options.write ?? ((text) => void process.stdout.write(text));
    this.style = paint(options.color ?? (process.stdout.isTTY === true && !process.env.NO_COLOR));
    this.verbose = options.verbose ?? false;
    this.assistantLabel = options.assistantLabel ?? 'assistant';
  }

  /** Whether streamed text is waiting for its line to end. */
  get inText(): boolean {
    return this.midLine;
  }

  /** Tells the renderer the session's current status, so resuming does not announce it again. */
  assumeStatus(status: string): void {
    this.status = status;
  }

  /** Ends a line of streamed text, so the next output starts on its own line. */
  breakLine(): void {
    if (!this.midLine) return;
    this.write('\n');
    this.midLine = false;
  }

  /** Prints a line of the caller's own, keeping streamed text intact. */
  line(text: string): void {
    this.breakLine();
    this.textKey = null;
    this.write(`${text}\n`);
  }

  render(received: AgentEvent): void {
    // Our own styling is added below; everything the event brings is shown, never acted on.
    const event = withoutControls(received);
    const s = this.style;
    switch (event.type) {
      case 'text_delta': {
        const stepKey = `${event.turnId}/${event.step}`;
        const previous = this.attempts.get(stepKey);
        this.attempts.set(stepKey, event.attempt);
        const key = `${stepKey}/${event.attempt}`;
        if (this.textKey !== key) {
          this.breakLine();
          if (previous !== undefined && previous < event.attempt) {
            this.write(s.dim(`  (the model call was retried, attempt ${event.attempt}: its answer starts again)\n`));
          }
          this.write(`${s.bold(s.cyan(`${this.assistantLabel} ›`))} `);
          this.textKey = key;
        }
        this.write(event.delta);
        this.midLine = !event.delta.endsWith('\n');
        return;
      }
      case 'tool_call_start': {
        const n = this.callNumber(event.turnId, event.toolCallId);
        this.line(`  ${s.yellow(`┌ tool #${n}`)} ${s.bold(event.toolName)} ${s.dim(oneLine(event.argumentsPreview, ARGS_MAX))}`);
        return;
      }
      case 'tool_call_result': {
        const n = this.callNumber(event.turnId, event.toolCallId);
        const mark = event.ok ? s.green('✓') : s.red(`✗ ${event.errorType ?? 'failed'}`);
        const took = s.dim(`${Math.round(event.durationMs)} ms`);
        this.line(`  ${s.yellow(`└ tool #${n}`)} ${mark} ${event.toolName} ${took} → ${oneLine(event.preview, PREVIEW_MAX)}`);
        return;
      }
      case 'tool_call_progress': {
        const n = this.callNumber(event.turnId, event.toolCallId);
        const amount = event.total !== undefined ? `${event.progress}/${event.total}` : String(event.progress);
        this.line(`  ${s.yellow(`│ tool #${n}`)} ${s.dim(`${event.toolName} ${amount}${event.message ? ` ${oneLine(event.message, ARGS_MAX)}` : ''}`)}`);
        return;
      }
      case 'status_change': {
        const lifecycle = event.status !== this.status;
        this.status = event.status;
        if (lifecycle) {
          this.line(s.dim(`  · session ${event.status}${event.reason ? ` (${event.reason})` : ''}`));
        } else if (this.verbose) {
          this.line(s.dim(`  · ${event.activity.replace(/_/g, ' ')}${event.reason ? ` (${event.reason})` : ''}`));
        }
        return;
      }
      case 'confirmation_required': {
        const c = event.confirmation;
        const n = this.callNumber(c.turnId, c.toolCallId);
        const until = c.expiresAt.slice(11, 19);
        this.line(
          `  ${s.magenta(`⚠ tool #${n} needs your confirmation:`)} ${s.bold(c.toolName)} ${oneLine(c.arguments, ARGS_MAX)} ` +
            s.dim(`(${c.risk}; counts as denied if unanswered by ${until} UTC)`),
        );
        return;
      }
      case 'confirmation_decided': {
        const verdict = event.approved ? s.green('approved') : s.red('denied');
        const who = event.decidedBy === 'user' ? '' : s.dim(` (${event.decidedBy})`);
        const why = event.reason ? s.dim(`: ${event.reason}`) : '';
        this.line(`  ${s.magenta('⚑')} ${verdict}${who}${why}`);
        return;
      }
      case 'turn_completed': {
        if (event.outcome === 'interrupted') {
          // Marks the partial answer itself, on the line where it stopped.
          this.write(this.midLine ? ` ${s.red('⏹ [interrupted]')}` : `${s.red('⏹ [interrupted]')}`);
          this.midLine = true;
        }
        this.line(s.dim(`  ── ${event.turnId} ${OUTCOME_LABEL[event.outcome]} · session version ${event.version}`));
        this.callNumbers.clear();
        return;
      }
      case 'error':
        this.line(`  ${s.red(`✗ ${event.errorType}:`)} ${event.message}`);
        return;
      case 'memory_recalled': {
        const ids = [...event.strong.map((id) => `[mem:${id}]`), ...event.weak.map((id) => `[mem:${id}]?`)];
        if (this.verbose || ids.length > 0) this.line(s.dim(`  · recalled ${ids.join(' ')}`));
        return;
      }
      case 'citation_flagged':
        this.line(
          `  ${s.yellow('⚑')} cited unknown memory ${event.unknownIds.map((id) => `[mem:${id}]`).join(', ')}: ` +
            (event.action === 'regenerated' ? 'asking the model again' : 'citation removed'),
        );
        return;
      case 'input_required': {
        const i = event.input;
        const n = this.callNumber(i.turnId, i.toolCallId);
        const fields = Object.keys((i.requestedSchema.properties ?? {}) as Record<string, unknown>).join(', ');
        this.line(
          `  ${s.magenta(`? tool #${n} (${i.server}) asks:`)} ${oneLine(i.message, PREVIEW_MAX)} ` +
            s.dim(`[${i.inputId}; fields: ${fields || 'none'}; cancelled if unanswered by ${i.expiresAt.slice(11, 19)} UTC]`),
        );
        return;
      }
      case 'input_answered': {
        const who = event.answeredBy === 'user' ? '' : s.dim(` (${event.answeredBy.replace('_', ' ')})`);
        this.line(`  ${s.magenta('?')} ${event.inputId}: ${event.action}${who}`);
        return;
      }
      default: {
        const unhandled: never = event;
        throw new Error(`render-events: unhandled event ${JSON.stringify(unhandled)}`);
      }
    }
  }

  private callNumber(turnId: string, toolCallId: string): number {
    if (this.callTurn !== turnId) {
      this.callTurn = turnId;
      this.callNumbers.clear();
    }
    let n = this.callNumbers.get(toolCallId);
    if (n === undefined) {
      n = this.callNumbers.size + 1;
      this.callNumbers.set(toolCallId, n);
    }
    return n;
  }
}
