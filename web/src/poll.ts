import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { asProblem, type Problem } from './api';

export interface Polled<T> {
  data: T | undefined;
  problem: Problem | undefined;
  loading: boolean;
  refresh(): void;
}

/**
 * Loads `load` now and every `everyMs` while the page is shown, and again
 * when `key` changes. The last good data stays on screen while a refresh
 * fails (the problem is shown next to it) or new data loads. A page that
 * must not show another item's data is keyed by it, so it starts empty.
 */
export function usePoll<T>(load: (signal: AbortSignal) => Promise<T>, everyMs: number, key: string): Polled<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [problem, setProblem] = useState<Problem | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  // A new key (other filters) keeps the old rows on screen until the new ones arrive.
  useEffect(() => {
    setLoading(true);
  }, [key]);

  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const run = async () => {
      try {
        const value = await loadRef.current(controller.signal);
        if (controller.signal.aborted) return;
        setData(value);
        setProblem(undefined);
      } catch (err) {
        if (controller.signal.aborted) return;
        setProblem(asProblem(err));
      } finally {
        if (!controller.signal.aborted) {
          setLoading(false);
          timer = setTimeout(() => void run(), everyMs);
        }
      }
    };
    void run();
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [key, tick, everyMs]);

  const refresh = useCallback(() => setTick((n) => n + 1), []);
  return { data, problem, loading, refresh };
}
