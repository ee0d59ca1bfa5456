import { Context } from '@temporalio/activity';

type OperatorService = {
  listSearchAttributes(request: { namespace: string }): Promise<{ customAttributes?: Record<string, unknown> | null }>;
};

/** How long a worker trusts its view of the namespace's registered search attributes. */
const CACHE_MS = 60_000;

/**
 * Tells a session which of its search attributes the namespace has
 * registered, so it sets only those (an unregistered one fails the workflow
 * task). Asked once per session start, and only when the starter left some
 * unset; answers are cached per namespace.
 */
export function createSearchAttributeActivities() {
  const cache = new Map<string, { at: number; names: Promise<Set<string>> }>();

  const registered = (namespace: string, operator: OperatorService): Promise<Set<string>> => {
    const hit = cache.get(namespace);
    if (hit && Date.now() - hit.at < CACHE_MS) return hit.names;
    const names = operator.listSearchAttributes({ namespace }).then((r) => new Set(Object.keys(r.customAttributes ?? {})));
    cache.set(namespace, { at: Date.now(), names });
    names.catch(() => cache.delete(namespace));
    return names;
  };

  return {
    async describeSearchAttributes(input: { names: string[] }): Promise<string[]> {
      const ctx = Context.current();
      const operator = (ctx.client.connection as unknown as { operatorService?: OperatorService }).operatorService;
      if (!operator) return [];
      const namespace = ctx.info.workflowNamespace ?? ctx.info.activityNamespace;
      const known = await registered(namespace, operator);
      return input.names.filter((n) => known.has(n));
    },
  };
}
