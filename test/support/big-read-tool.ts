import { z } from 'zod';
import { defineTool } from '../../activities/tools/native-tool';

/** A native tool (`local_big_read`) that returns `n` Chinese characters (3 bytes each in UTF-8): how tests make turns of any size. */
export const bigReadTool = defineTool({
  name: 'big_read',
  description: 'Reads one large file.',
  parameters: z.object({ n: z.number().int().min(1).max(200_000) }),
  risk: 'read',
  execute: async ({ n }) => '数'.repeat(n),
});
