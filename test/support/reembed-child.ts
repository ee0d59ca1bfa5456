import { MongoClient } from 'mongodb';
import { OfflineEmbedder } from '../../activities/memory/embedder';
import { reembedMemories } from '../../activities/memory/reembed';

/**
 * A re-embed run in its own process, so a test can SIGKILL it mid-way:
 * `reembed-child.ts <mongodb uri> <database> <dims> <batch>`. Each batch's
 * embedding is slowed down, and a line is printed after each checkpoint.
 */
async function main(): Promise<void> {
  const [uri, database, dims, batch] = process.argv.slice(2);
  if (!uri || !database || !dims || !batch) throw new Error('usage: reembed-child.ts <uri> <database> <dims> <batch>');
  const offline = new OfflineEmbedder(Number(dims));
  const slow = {
    id: offline.id,
    dims: offline.dims,
    embed: async (texts: string[]) => {
      await new Promise((resolve) => setTimeout(resolve, 400));
      return offline.embed(texts);
    },
  };
  const mongo = await new MongoClient(uri).connect();
  const report = await reembedMemories(mongo.db(database), { embedder: slow, batchSize: Number(batch), onProgress: (p) => process.stdout.write(`progress ${p.done}/${p.total}\n`) });
  process.stdout.write(`report ${JSON.stringify(report)}\n`);
  await mongo.close();
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
