import { clearLine, cursorTo, createInterface, type Interface } from 'node:readline';
import { WorkflowStreamClient } from '@temporalio/workflow-streams/client';
import type { AgentClient } from '../agent-client';
import { OffsetAheadError, SessionNotFoundError } from '../errors';
import { readEventsQuery, workflowIdFor } from '../../workflows/messages';
import type { AgentEvent } from '../../workflows/events';
import type { PendingConfirmation, SessionOptionsInput } from '../../workflows/session-types';
import { describeSession } from './describe-session';
import { EventRenderer, oneLine, withoutControls } from './render-events';
import { ProgressWatchdog } from './progress-watchdog';
import { SessionFeed } from './session-feed';
import { lookUpSession, workflowPollers } from './session-probe';
import { paint, type Painter } from './terminal-style';

export interface ChatAppOptions {
  agent: AgentClient;
  session: SessionOptionsInput & { sessionId: string };
  /** Where the worker should be, for the hints printed when nothing happens. */
  address: string;
  namespace: string;
  taskQueue: string;
  uiUrl: string | null;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WriteStream;
  /** Silence after which the chat says what may be wrong (default 10 s). */
  progressHintMs?: number;
}

type Mode = 'idle' | 'busy' | 'confirm';

const HELP = [
  'Type a message and press Enter. Commands:',
  '  /stop      interrupt the running turn (Ctrl-C does the same while a turn runs)',
  '  /session   show the session (getSession)',
  '  /prompts   list the MCP servers\' prompts',
  '  /prompt <server> <name> [json args]   expand an MCP prompt and send it as your message',
  '  /answer <inputId> accept {json} | decline | cancel   answer a question an MCP server asked',
  '  /quit      leave; the session stays open and --session resumes it',
  'When a tool needs confirmation, answer y or n.',
];

/**
 * An interactive terminal chat on one session: sends messages, renders the
 * event stream, asks the person to approve risky tool calls, interrupts on
 * /stop. Everything goes through AgentClient; a worker must be running.
 */
export class ChatApp {
  private readonly agent: AgentClient;
  private readonly sessionId: string;
  private readonly rl: Interface;
  private readonly out: NodeJS.WriteStream;
  private readonly renderer: EventRenderer;
  private readonly style: Painter;
  private feed: SessionFeed | null = null;
  private mode: Mode = 'idle';
  /** Turns this chat sent that have not completed. */
  private readonly running = new Set<string>();
  private readonly completed = new Set<string>();
  private sending = 0;
  /** Where the next subscription starts: after the last event seen on this run. */
  private resumeOffset = 0;
  /** First run id of the workflow chain being read. */
  private chain: string | null = null;
  private readonly confirmations: PendingConfirmation[] = [];
  private promptVisible = false;
  private readonly watchdog: ProgressWatchdog;
  private exit: ((code: number) => void) | null = null;
  private closing = false;

  constructor(private readonly options: ChatAppOptions) {
    this.agent = options.agent;
    this.sessionId = options.session.sessionId;
    this.out = options.output ?? process.stdout;
    const color = this.out.isTTY === true && !process.env.NO_COLOR;
    this.style = paint(color);
    this.renderer = new EventRenderer({ color, write: (text) => this.write(text) });
    this.watchdog = new ProgressWatchdog(options.progressHintMs ?? 10_000, () => this.stalled());
    this.rl = createInterface({ input: options.input ?? process.stdin, output: this.out, terminal: this.out.isTTY === true });
  }

  /** Runs until /quit, Ctrl-D or Ctrl-C while idle; resolves with the exit code. */
  async run(): Promise<number> {
    const done = new Promise<number>((resolve) => {
      this.exit = resolve;
    });
    this.rl.on('line', (line) => void this.onLine(line.trim()));
    this.rl.on('SIGINT', () => void (this.running.size > 0 || this.sending > 0 ? this.stop() : this.quit()));
    this.rl.on('close', () => void this.quit());
    await this.greet();
    this.settleMode();
    this.showPrompt();
    return done;
  }

  private async greet(): Promise<void> {
    const s = this.style;
    const { session, address, taskQueue, namespace } = this.options;
    this.say(s.bold(`durable-agent chat · session ${this.sessionId} · ${session.namespace.tenant}/${session.namespace.user}`));
    this.say(s.dim(`Temporal ${address} (namespace ${namespace}), task queue ${taskQueue}. /help lists commands.`));
    if (this.options.uiUrl) this.say(s.dim(`Web UI: ${this.agentUiLink()}`));
    const [found, pollers] = await Promise.all([
      lookUpSession(this.agent, this.sessionId),
      workflowPollers(this.agent.client, namespace, taskQueue),
    ]);
    if (pollers === 0) {
      this.say(s.yellow(`No worker has polled task queue "${taskQueue}" recently. Start one in another terminal: npm run worker`));
    }
    if (found.kind === 'error') {
      this.say(s.yellow(`Could not read session ${this.sessionId} (${found.message}); your first message will (re)start it.`));
      return;
    }
    if (found.kind === 'new') {
      this.say(s.dim('New session: your first message starts it.'));
      return;
    }
    const view = found.view;
    this.say(s.dim(`Resuming: ${view.counters.turns} turn(s) so far, version ${view.version}, ${view.status}.`));
    for (const turn of view.window.slice(-3)) {
      const user = turn.messages.find((m) => m.role === 'user');
      const answer = turn.messages.filter((m) => m.role === 'assistant' && m.content).at(-1);
      if (user) this.say(s.dim(`  you › ${oneLine(user.content, 100)}`));
      if (answer) this.say(s.dim(`  assistant › ${oneLine(answer.content, 100)}`));
    }
    if (view.status !== 'active' && view.status !== 'created') return;
    // Only what happens from now on: the turns above are the history.
    const offset = await WorkflowStreamClient.create(this.agent.client, workflowIdFor(this.sessionId)).getOffset().catch(() => 0);
    this.resumeOffset = offset;
    await this.followChain();
    this.renderer.assumeStatus(view.status);
    if (view.currentTurnId) this.running.add(view.currentTurnId);
    for (const pending of view.pendingConfirmations) this.enqueueConfirmation(pending);
    // Read now only if a turn runs; an idle session is read from this offset once a message is sent.
    if (this.running.size > 0 || this.confirmations.length > 0) this.startFeed(offset);
    this.settleMode();
  }

  private agentUiLink(): string {
    const { uiUrl, namespace } = this.options;
    return uiUrl ? `${uiUrl.replace(/\/$/, '')}/namespaces/${encodeURIComponent(namespace)}/workflows/${encodeURIComponent(workflowIdFor(this.sessionId))}` : '';
  }

  private async onLine(line: string): Promise<void> {
    this.promptVisible = false;
    if (this.closing) return;
    if (line.startsWith('/')) return this.command(line);
    if (this.mode === 'confirm' && this.confirmations.length > 0) return this.answer(line);
    if (line === '') return this.showPrompt();
    await this.send(line);
  }

  private async command(line: string): Promise<void> {
    const [name] = line.split(/\s+/);
    switch (name) {
      case '/stop':
        return this.stop();
      case '/quit':
      case '/exit':
        return this.quit();
      case '/session':
        return this.showSession();
      case '/prompts':
        return this.listPrompts();
      case '/prompt':
        return this.sendPrompt(line);
      case '/answer':
        return this.answerInput(line);
      case '/help':
        HELP.forEach((l) => this.say(this.style.dim(l)));
        return this.showPrompt();
      default:
        this.say(this.style.yellow(`Unknown command ${name}. /help lists them.`));
        return this.showPrompt();
    }
  }

  private async listPrompts(): Promise<void> {
    try {
      // Names and descriptions come from the MCP servers: shown, never acted on by the terminal.
      const { prompts, unavailable } = withoutControls(await this.agent.listPrompts());
      if (prompts.length === 0) this.say(this.style.dim('No MCP server offers prompts.'));
      for (const p of prompts) {
        const args = p.arguments.map((a) => `${a.name}${a.required ? '' : '?'}`).join(', ');
        this.say(`  ${p.server} ${this.style.bold(p.name)}(${args})${p.description ? this.style.dim(` ${p.description}`) : ''}`);
      }
      for (const u of unavailable) this.say(this.style.yellow(`  ${u.server}: ${u.reason}`));
    } catch (err) {
      this.say(this.style.red(`Could not list prompts: ${err instanceof Error ? err.message : String(err)}`));
    }
    return this.showPrompt();
  }

  /** `/prompt <server> <name> [json args]`: the expanded prompt becomes the user's message. */
  private async sendPrompt(line: string): Promise<void> {
    const match = /^\/prompt\s+(\S+)\s+(\S+)\s*(.*)$/.exec(line);
    if (!match) {
      this.say(this.style.yellow('Usage: /prompt <server> <name> [{"arg": "value"}]'));
      return this.showPrompt();
    }
    const [, server, name, rawArgs] = match as unknown as [string, string, string, string];
    let args: Record<string, string> = {};
    try {
      const parsed: unknown = rawArgs.trim() ? JSON.parse(rawArgs) : {};
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('arguments must be a JSON object');
      args = Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
      const expanded = await this.agent.expandPrompt(server, name, args);
      this.say(this.style.dim(`  (prompt ${server}/${name}) ${oneLine(expanded.text, 200)}`));
      return this.send(expanded.text);
    } catch (err) {
      this.say(this.style.red(`Could not expand the prompt: ${err instanceof Error ? err.message : String(err)}`));
      return this.showPrompt();
    }
  }

  /** `/answer <inputId> accept {json} | decline | cancel`. */
  private async answerInput(line: string): Promise<void> {
    const match = /^\/answer\s+(\S+)\s+(accept|decline|cancel)\s*(.*)$/.exec(line);
    if (!match) {
      this.say(this.style.yellow('Usage: /answer <inputId> accept {"field": "value"} | decline | cancel'));
      return this.showPrompt();
    }
    const [, inputId, action, rawContent] = match as unknown as [string, string, 'accept' | 'decline' | 'cancel', string];
    try {
      const content = action === 'accept' ? (JSON.parse(rawContent.trim() || '{}') as Record<string, string | number | boolean | string[]>) : undefined;
      await this.agent.answerInput(this.sessionId, { inputId, action, ...(content ? { content } : {}) });
    } catch (err) {
      this.say(this.style.red(`Could not answer: ${err instanceof Error ? err.message : String(err)}`));
    }
    return this.showPrompt();
  }

  private async send(text: string): Promise<void> {
    this.mode = this.mode === 'confirm' ? 'confirm' : 'busy';
    this.sending += 1;
    this.watchdog.reset();
    try {
      const { turnId } = await this.agent.send(this.options.session, { text });
      if (!this.feed) await this.followChain();
      if (!this.completed.has(turnId)) this.running.add(turnId);
      if (!this.feed) this.startFeed(this.resumeOffset);
    } catch (err) {
      this.say(this.style.red(`Could not send: ${err instanceof Error ? err.message : String(err)}`));
    } finally {
      this.sending -= 1;
      this.settleMode();
    }
  }

  /**
   * Notices when the message started a new run chain (the session had been
   * archived). A chain restored from the archive goes on with its offsets:
   * the chat reads on from where it was, and what it had shown is not shown
   * again. A chain that started afresh (nothing restored) starts its stream
   * at 0. A continue-as-new keeps the chain, and the offsets with it.
   */
  private async followChain(): Promise<void> {
    const description = await this.agent.client.workflow.getHandle(workflowIdFor(this.sessionId)).describe().catch(() => null);
    const chain = description?.raw.workflowExecutionInfo?.firstRunId ?? null;
    if (chain && this.chain && chain !== this.chain) {
      // A restored chain's stream starts where the archive ended; a fresh one's at 0 (however far it has got since).
      const kept = await this.agent.client.workflow
        .getHandle(workflowIdFor(this.sessionId))
        .query(readEventsQuery, { fromOffset: 0, limit: 1 })
        .catch(() => undefined);
      if (!kept || kept.earliestOffset === 0) this.resumeOffset = 0;
      this.completed.clear();
      this.say(this.style.dim('(the session had been archived: this message started it again)'));
    }
    this.chain = chain ?? this.chain;
  }

  private startFeed(fromOffset: number, attempt = 1): void {
    const feed = new SessionFeed(this.agent, this.sessionId, {
      fromOffset,
      onEvent: (event, offset) => {
        this.resumeOffset = offset + 1;
        this.onEvent(event);
      },
    });
    this.feed = feed;
    feed.finished.then(
      () => {
        // The run ended (archived): the next message starts a new chain, and followChain says where its stream starts.
        if (this.feed === feed) this.feed = null;
      },
      (err: unknown) => {
        if (this.feed !== feed || this.closing) return;
        this.feed = null;
        if ((err instanceof Error ? err.cause : undefined) instanceof OffsetAheadError && fromOffset > 0) {
          // Read past the stream's end: the session started afresh (taken above for a restored one). From its start.
          this.resumeOffset = 0;
          this.completed.clear();
          this.say(this.style.dim('(the session started afresh: reading it from its start)'));
          this.startFeed(0);
          return;
        }
        const message = err instanceof Error ? err.message : String(err);
        const next = this.resumeOffset > fromOffset ? 1 : attempt + 1;
        if (next <= 3) {
          // A poll fails when a workflow task fails (a worker restart, a bad deploy); the stream itself is intact.
          this.say(this.style.dim(`(${message}; reading again from offset ${this.resumeOffset})`));
          setTimeout(() => {
            if (!this.closing && !this.feed) this.startFeed(this.resumeOffset, next);
          }, 1_000).unref();
          return;
        }
        this.say(this.style.red(`${message}. Events are not shown until your next message; /session still works.`));
        this.running.clear();
        this.settleMode();
      },
    );
  }

  private onEvent(event: AgentEvent): void {
    if (this.running.size > 0 || this.sending > 0) this.watchdog.touch();
    this.renderer.render(event);
    switch (event.type) {
      case 'confirmation_required':
        this.enqueueConfirmation(event.confirmation);
        break;
      case 'confirmation_decided': {
        const index = this.confirmations.findIndex((c) => c.toolCallId === event.toolCallId);
        if (index >= 0) this.confirmations.splice(index, 1);
        break;
      }
      case 'turn_completed':
        this.running.delete(event.turnId);
        this.completed.add(event.turnId);
        // Stop reading while idle: a poll left parked in the workflow keeps the session
        // from archiving itself (see agent-session.ts, allHandlersFinished). The next message reads on.
        if (this.running.size === 0 && this.sending === 0 && this.confirmations.length === 0) {
          this.feed?.closeAfter((e) => e === event);
        }
        break;
      default:
        break;
    }
    this.settleMode();
  }

  private enqueueConfirmation(confirmation: PendingConfirmation): void {
    if (this.confirmations.some((c) => c.toolCallId === confirmation.toolCallId)) return;
    this.confirmations.push(confirmation);
  }

  private async answer(line: string): Promise<void> {
    const pending = this.confirmations[0];
    if (!pending) return this.settleMode();
    const yes = /^(y|yes)$/i.test(line);
    const no = /^(n|no)$/i.test(line);
    if (!yes && !no) {
      this.say(this.style.yellow('Please answer y or n (or /stop to interrupt the turn).'));
      return this.showPrompt();
    }
    this.confirmations.shift();
    try {
      // The request shown, not whatever waits under its id now: the model may have asked again under the same id.
      const which = pending.confirmationId ? { confirmationId: pending.confirmationId } : {};
      if (yes) await this.agent.approve(this.sessionId, pending.toolCallId, 'approved in the chat', which);
      else await this.agent.deny(this.sessionId, pending.toolCallId, 'declined in the chat', which);
    } catch (err) {
      this.say(this.style.red(`Could not send the decision: ${err instanceof Error ? err.message : String(err)}`));
    }
    this.settleMode();
  }

  /** Works out the mode from what is pending and shows the matching prompt. */
  private settleMode(): void {
    const next: Mode = this.confirmations.length > 0 ? 'confirm' : this.running.size > 0 || this.sending > 0 ? 'busy' : 'idle';
    const changed = next !== this.mode;
    // Waiting for the person is not a stall; the watch starts again once the turn runs on.
    if (next !== 'busy') this.watchdog.stop();
    else if (changed) this.watchdog.touch();
    this.mode = next;
    if (changed || next !== 'busy') this.showPrompt();
  }

  private showPrompt(): void {
    if (this.closing || this.mode === 'busy' || this.renderer.inText) return;
    const pending = this.confirmations[0];
    const text = this.mode === 'confirm' && pending ? this.style.magenta(`allow ${pending.toolName}? [y/n] `) : this.style.bold('you › ');
    this.rl.setPrompt(text);
    this.rl.prompt(true);
    this.promptVisible = true;
  }

  /** Writes output without trampling the prompt: the prompt line is cleared and shown again afterwards. */
  private write(text: string): void {
    if (this.promptVisible) {
      clearLine(this.out, 0);
      cursorTo(this.out, 0);
      this.promptVisible = false;
    }
    this.out.write(text);
  }

  private say(line: string): void {
    this.renderer.line(line);
  }

  /** The watchdog saw no event for a while: say what is probably wrong. */
  private stalled(): void {
    if (this.mode !== 'busy') return;
    const { taskQueue, address } = this.options;
    const quiet = this.watchdog.quietSeconds;
    const hint =
      this.running.size === 0
        ? `No worker has taken the message after ${quiet} s. Is a worker running on task queue "${taskQueue}" ` +
          `at ${address}? Start one with: npm run worker (same TEMPORAL_ADDRESS and TEMPORAL_TASK_QUEUE). The message is sent once it does.`
        : `No progress for ${quiet} s. The worker may be down or the model slow: check the worker's terminal ` +
          `(npm run worker). /stop interrupts the turn.`;
    this.say(this.style.yellow(hint));
  }

  private async stop(): Promise<void> {
    if (this.running.size === 0) {
      this.say(this.style.dim(this.sending > 0 ? 'Nothing runs yet: the message has not been taken by a worker.' : 'Nothing to stop.'));
      return this.showPrompt();
    }
    try {
      // The one turn shown running, named: a /stop that arrives after it ended leaves the next turn alone.
      const [only] = this.running.size === 1 ? [...this.running] : [];
      await this.agent.interrupt(this.sessionId, 'stopped from the chat', only !== undefined ? { turnId: only } : {});
    } catch (err) {
      this.say(this.style.red(`Could not interrupt: ${err instanceof Error ? err.message : String(err)}`));
    }
  }

  private async showSession(): Promise<void> {
    try {
      const view = await this.agent.getSession(this.sessionId);
      for (const line of describeSession(view)) this.say(this.style.dim(line));
      if (this.options.uiUrl) this.say(this.style.dim(`  Web UI: ${this.agentUiLink()}`));
    } catch (err) {
      this.say(this.style.yellow(err instanceof SessionNotFoundError ? 'The session has not started yet: send a message.' : String(err)));
    }
    this.showPrompt();
  }

  private async quit(): Promise<void> {
    if (this.closing) return;
    this.renderer.breakLine();
    this.closing = true;
    this.watchdog.stop();
    this.feed?.stop();
    this.out.write(this.style.dim(`\nSession ${this.sessionId} stays open; resume it with: npm run chat -- --session ${this.sessionId}\n`));
    this.rl.close();
    this.exit?.(0);
  }
}
