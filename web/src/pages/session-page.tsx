import { useEffect, useId, useMemo, useRef, useState } from 'preact/hooks';
import { asProblem, seg, type Problem } from '../api';
import { SESSION_ID_PATTERN, type SessionView } from '../api-types';
import { useSigned } from '../auth';
import { ChatTranscript, type ShownTurn } from '../components/chat-transcript';
import { Inspector } from '../components/inspector';
import { ProblemView } from '../components/problem-view';
import { usePoll } from '../poll';
import { useSessionStream } from '../session-stream';
import { isRunning } from '../transcript';

/** The user's message of a turn, from the session's window. */
function messageInWindow(view: SessionView | undefined, turnId: string): string | null {
  const turn = view?.window.find((t) => t.turnId === turnId);
  const m = turn?.messages.find((x) => x.role === 'user');
  return m && m.role === 'user' ? m.content : null;
}

const STREAM_NOTE: Record<string, string> = {
  connecting: 'Connecting to the event stream…',
  reconnecting: 'The event stream dropped; reconnecting…',
  ended: 'This run of the session has ended; a new message restores it.',
};

/** A session: the chat with its live answer, and the inspector beside it. */
export function SessionPage({ sessionId }: { sessionId: string }) {
  if (!SESSION_ID_PATTERN.test(sessionId)) {
    return (
      <ProblemView
        problem={{ status: 422, title: 'Not a session id', detail: 'A session id has letters, digits, ".", "_", ":" or "-", at most 128 of them.', failureType: 'SessionInputInvalid' }}
      />
    );
  }
  return <SessionChat key={sessionId} sessionId={sessionId} />;
}

function SessionChat({ sessionId }: { sessionId: string }) {
  const { api, me } = useSigned();
  const view = usePoll((signal) => api.get<SessionView>(`/v1/sessions/${seg(sessionId)}`, signal), 5_000, sessionId);
  const isNew = !view.data && view.problem?.failureType === 'SessionNotFound';
  const refused = !view.data && view.problem && !isNew;
  const stream = useSessionStream(sessionId, view.data !== undefined);
  const { transcript } = stream;
  const [sent, setSent] = useState<Map<string, string>>(() => new Map());
  const [sending, setSending] = useState(false);
  const [actionProblem, setActionProblem] = useState<Problem | undefined>(undefined);

  // The inspector follows the turn: read the session again when a turn or a confirmation moves.
  const milestone = transcript.turns.map((t) => `${t.outcome ?? ''}:${t.parts.filter((p) => p.kind === 'tool' && (p.confirmation || p.decision)).length}`).join('|');
  const refreshView = view.refresh;
  useEffect(() => {
    if (milestone) refreshView();
  }, [milestone, refreshView]);

  // A stream that ended (the run archived, or ended) is followed again once the session runs again: restored or
  // started afresh by a message from anywhere (another tab, the chat, the API), or by this page's own message sent
  // while the end was still on its way. The session is read again when the stream ends, so a view from before
  // the end does not count.
  // A run that closed without archiving (terminated, failed) still answers as it was, 'active': the page follows
  // again only once another chain of runs answers (restored, or started afresh), so a closed run is not followed
  // again and again. (Workers from before the chain was shown: a new version or start time stands in for it.)
  const streamState = stream.state;
  const movedKey = (v: SessionView | undefined) => (v ? (v.chainId ?? `${v.createdAt}:${v.version}`) : '');
  const viewAtEnd = useRef('');
  useEffect(() => {
    if (streamState !== 'ended') return;
    viewAtEnd.current = movedKey(view.data);
    refreshView();
  }, [streamState, refreshView]);
  const { ensureFollowing } = stream;
  useEffect(() => {
    const status = view.data?.status;
    if (streamState === 'ended' && movedKey(view.data) !== viewAtEnd.current && (status === 'active' || status === 'created')) ensureFollowing();
  }, [streamState, view.data, ensureFollowing]);

  const shown: ShownTurn[] = useMemo(() => {
    const fromEvents = transcript.turns.map((turn) => ({ turn, message: sent.get(turn.turnId) ?? messageInWindow(view.data, turn.turnId) }));
    const seen = new Set(transcript.turns.map((t) => t.turnId));
    const waiting = [...sent].filter(([turnId]) => !seen.has(turnId)).map(([turnId, message]) => ({ turn: { turnId, parts: [] }, message }));
    return [...fromEvents, ...waiting];
  }, [transcript.turns, sent, view.data]);

  if (refused) {
    return (
      <section aria-labelledby="session-title">
        <h1 id="session-title">Session {sessionId}</h1>
        <ProblemView problem={view.problem!} context={view.problem!.status === 403 ? 'You may not open this session' : 'The session could not be read'} />
      </section>
    );
  }

  const running = sending || isRunning(transcript) || shown.some((s) => s.turn.outcome === undefined);
  const send = async (text: string, key: string): Promise<boolean> => {
    setSending(true);
    setActionProblem(undefined);
    try {
      const accepted = await api.post<{ turnId: string }>(`/v1/sessions/${seg(sessionId)}/messages`, { text }, { 'idempotency-key': key });
      setSent((m) => new Map(m).set(accepted.turnId, text));
      if (isNew) view.refresh();
      else stream.ensureFollowing();
      return true;
    } catch (err) {
      setActionProblem(asProblem(err));
      return false;
    } finally {
      setSending(false);
    }
  };
  const stop = async () => {
    setActionProblem(undefined);
    try {
      // The turn on screen: a Stop that arrives after it ended does not stop the next one.
      const shownTurn = transcript.turns.find((t) => t.outcome === undefined)?.turnId;
      await api.post(`/v1/sessions/${seg(sessionId)}/interrupt`, { reason: 'Stopped from the web console', ...(shownTurn ? { turnId: shownTurn } : {}) });
    } catch (err) {
      setActionProblem(asProblem(err));
    }
  };

  return (
    <div class="session-layout">
      <section class="chat" aria-labelledby="session-title">
        <h1 id="session-title">
          Session <code>{sessionId}</code>
        </h1>
        {isNew ? <p class="muted">A new session: your first message starts it.</p> : null}
        {view.problem && !isNew ? <ProblemView problem={view.problem} context="The session could not be refreshed" /> : null}
        {STREAM_NOTE[stream.state] ? <p class="muted" role="status">{STREAM_NOTE[stream.state]}</p> : null}
        {stream.problem ? <ProblemView problem={stream.problem} context="Events" /> : null}
        <section class="transcript" aria-label="Transcript">
          <ChatTranscript sessionId={sessionId} turns={shown} notices={transcript.sessionNotices} />
        </section>
        {actionProblem ? <ProblemView problem={actionProblem} /> : null}
        <Composer disabled={view.loading} sending={sending} running={running} onSend={send} onStop={stop} />
      </section>
      <Inspector me={me} sessionId={sessionId} view={view.data} turns={transcript.turns} />
    </div>
  );
}

/** The message box, Send, and Stop while a turn runs. */
function Composer({ disabled, sending, running, onSend, onStop }: { disabled: boolean; sending: boolean; running: boolean; onSend: (text: string, key: string) => Promise<boolean>; onStop: () => Promise<void> }) {
  const id = useId();
  const [draft, setDraft] = useState('');
  // One Idempotency-Key per message: a resend after a failed request cannot start a second turn.
  const key = useRef<string | null>(null);
  const submit = async () => {
    const text = draft.trim();
    if (!text || sending) return;
    key.current ??= crypto.randomUUID();
    if (await onSend(text, key.current)) {
      key.current = null;
      setDraft('');
    }
  };
  return (
    <form
      class="composer"
      aria-label="Send a message"
      onSubmit={(e) => {
        e.preventDefault();
        void submit();
      }}
    >
      <label for={id}>Message</label>
      <textarea
        id={id}
        rows={3}
        maxLength={100_000}
        value={draft}
        disabled={disabled}
        onInput={(e) => {
          setDraft(e.currentTarget.value);
          key.current = null;
        }}
        onKeyDown={(e) => {
          if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
            e.preventDefault();
            void submit();
          }
        }}
      />
      <div class="buttons">
        <button type="submit" disabled={disabled || sending || draft.trim() === ''}>
          {sending ? 'Sending…' : 'Send'}
        </button>
        {running ? (
          <button type="button" class="stop" onClick={() => void onStop()}>
            Stop
          </button>
        ) : null}
      </div>
      <p class="hint">Enter sends, Shift+Enter starts a new line.</p>
    </form>
  );
}
