import { z } from 'zod';
import { runChecks, type CheckAnswer } from './shared-zod-checks';

/*
 * Workflows for test/integration/shared-zod.test.ts, bundled with the agent
 * worker's bundler options, which preload zod (workflows/shared-libraries.ts).
 */

/** The checks' answers, and whether this run's zod is the preloaded one (the SDK freezes what it preloads). */
export async function zodChecks(): Promise<{ shared: boolean; answers: CheckAnswer[] }> {
  return { shared: Object.isFrozen(z.ZodType), answers: runChecks() };
}

/**
 * A string format that tests an expression kept in zod's module: what the lint rule keeps out of
 * workflows/, run here on purpose. Returns what it threw (caught, so the workflow task does not fail).
 */
export async function zodEmailCheck(value: string): Promise<{ accepted?: boolean; threw?: string }> {
  try {
    return { accepted: z.string().email().safeParse(value).success };
  } catch (err) {
    return { threw: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
  }
}
