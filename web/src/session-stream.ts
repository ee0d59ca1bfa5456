import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import type { Problem } from './api';
import { useSigned } from './auth';
import { followEvents, type StreamState } from './event-stream';
import { applyEvent, emptyTranscript, type Transcript } from './transcript';

export interface SessionStream {
  transcript: Transcript;
  state: StreamState | 'idle';
  problem: Problem | undefined;
  /** Follows the stream again after it ended (the session was restored by a new message). */
  ensureFollowing(): void;
}

/**
 * A session's transcript, rebuilt from offset 0 and kept live. Events are
 * applied by offset, so a resumed connection neither loses nor repeats text.
 * Nothing is read until `enabled` (a session the person may read).
 */
export function useSessionStream(sessionId: string, enabled: boolean): SessionStream {
  const { api, signOut } = useSigned();
  const [transcript, setTranscript] = useState<Transcript>(emptyTranscript);
  const [state, setState] = useState<StreamState | 'idle'>('idle');
  const [problem, setProblem] = useState<Problem | undefined>(undefined);
  const [generation, setGeneration] = useState(0);
  const lastOffset = useRef(-1);
  const stateRef = useRef<StreamState | 'idle'>('idle');

  useEffect(() => {
    setTranscript(emptyTranscript());
    lastOffset.current = -1;
  }, [sessionId]);

  useEffect(() => {
    if (!enabled) return;
    const controller = new AbortController();
    setProblem(undefined);
    void followEvents({
      sessionId,
      fromOffset: lastOffset.current + 1,
      headers: api.authHeaders(),
      signal: controller.signal,
      onUnauthorized: () => signOut(),
      handlers: {
        event(offset, event) {
          lastOffset.current = offset;
          setTranscript((t) => applyEvent(t, offset, event));
        },
        state(s) {
          stateRef.current = s;
          setState(s);
        },
        problem: setProblem,
        restarted() {
          lastOffset.current = -1;
          setTranscript(emptyTranscript());
          setProblem({
            status: 409,
            title: 'The session started afresh',
            detail: 'It had ended without an archive and a new message started it again: its events count from 0 again. The transcript shows the new start.',
            failureType: 'OffsetAhead',
          });
        },
        gap(from, to) {
          lastOffset.current = to - 1;
          setProblem({
            status: 410,
            title: 'Part of the stream was no longer kept',
            detail: `Events ${from} to ${to - 1} were gone when this page caught up (it was away while the session moved on); the transcript may miss parts of those turns. It goes on live from event ${to}.`,
            failureType: 'TruncatedOffset',
            earliestOffset: to,
          });
        },
      },
    });
    return () => controller.abort();
  }, [sessionId, enabled, generation, api, signOut]);

  const ensureFollowing = useCallback(() => {
    const s = stateRef.current;
    if (s === 'ended') {
      // The run this page read has closed, and the session runs again: restored from its archive (which holds
      // what was archived, not what a run that ended without archiving said last) or started afresh. Its
      // offsets may repeat ones this page has shown for other events, so the transcript is read again from 0.
      lastOffset.current = -1;
      setTranscript(emptyTranscript());
    }
    if (s === 'ended' || s === 'failed' || s === 'idle') setGeneration((g) => g + 1);
  }, []);

  return { transcript, state, problem, ensureFollowing };
}
