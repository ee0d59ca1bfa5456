import type { MemoryDoc } from './memory-types';

/** A committed write, as the writing process's recall caches learn of it. */
export interface NamespaceChange {
  nsKey: string;
  /** The namespace in its database (`cacheKeyOf`). */
  cacheKey: string;
  /** The generation this write produced. */
  generation: number;
  /** The documents as written (their new status decides whether they stay recallable). */
  changed: MemoryDoc[];
}

export interface NamespaceChangeListener {
  /** May return a promise; the write waits for it (a listener must not throw). */
  onNamespaceChange(change: NamespaceChange): void | Promise<void>;
}

// Held weakly: a cache that is no longer used elsewhere must not be kept alive by being subscribed.
const listeners = new Set<WeakRef<NamespaceChangeListener>>();

/**
 * Subscribes to this process's memory writes. Lets a worker's recall cache
 * apply its own writes in place instead of reloading the namespace, which on
 * FerretDB is a scan of the whole collection.
 */
export function subscribeToNamespaceChanges(listener: NamespaceChangeListener): () => void {
  const ref = new WeakRef(listener);
  listeners.add(ref);
  return () => listeners.delete(ref);
}

export async function notifyNamespaceChange(change: NamespaceChange): Promise<void> {
  const pending: Array<void | Promise<void>> = [];
  for (const ref of listeners) {
    const listener = ref.deref();
    if (listener) pending.push(listener.onNamespaceChange(change));
    else listeners.delete(ref);
  }
  await Promise.all(pending);
}
