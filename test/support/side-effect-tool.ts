import { z } from 'zod';
import type { Db } from 'mongodb';
import { defineTool, type NativeTool } from '../../activities/tools/native-tool';

export const SIDE_EFFECTS = 'side_effects';

/**
 * A slow, side-effecting tool that is idempotent by its key: the effect is an
 * upsert on the idempotency key, and every attempt is counted so a test can
 * tell "ran twice" from "happened twice".
 */
export function sideEffectTool(db: Db, holdMs = 4_000): NativeTool {
  return defineTool({
    name: 'slow_write',
    description: 'Writes a record, slowly. For tests.',
    parameters: z.object({ label: z.string() }),
    risk: 'write',
    idempotent: true,
    timeoutMs: 15_000,
    async execute(args, ctx) {
      await db
        .collection<{ _id: string }>(SIDE_EFFECTS)
        .updateOne({ _id: ctx.idempotencyKey }, { $setOnInsert: { label: args.label, createdAt: new Date() }, $inc: { attempts: 1 } }, { upsert: true });
      await new Promise((resolve) => setTimeout(resolve, holdMs));
      return { written: args.label };
    },
  }) as unknown as NativeTool;
}
