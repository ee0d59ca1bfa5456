import { copyFileSync, mkdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

/** Where the console's sources are, and where the API server expects its bundle (`console.dir`). */
export const WEB_DIR = __dirname;
export const DEFAULT_OUT_DIR = path.join(WEB_DIR, 'dist');

export interface ConsoleBuildOptions {
  /** Output folder (emptied first); default web/dist. */
  outDir?: string;
}

export interface ConsoleBuild {
  outDir: string;
  /** The files written, with their sizes in bytes. */
  files: Array<{ name: string; bytes: number }>;
}

/**
 * Bundles the web console: `app.js` and `app.css` (minified, with source
 * maps) and `index.html`, which loads them from `/assets/`. Everything the
 * page needs is in these files: nothing is fetched from elsewhere at run time.
 */
export async function buildConsole(options: ConsoleBuildOptions = {}): Promise<ConsoleBuild> {
  const outDir = path.resolve(options.outDir ?? DEFAULT_OUT_DIR);
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  const result = await build({
    entryPoints: { app: path.join(WEB_DIR, 'src', 'main.tsx') },
    outdir: outDir,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome109', 'firefox115', 'safari16'],
    minify: true,
    sourcemap: true,
    tsconfig: path.join(WEB_DIR, 'tsconfig.json'),
    jsx: 'automatic',
    jsxImportSource: 'preact',
    define: { 'process.env.NODE_ENV': '"production"' },
    // A failed build rejects with every error in its message.
    logLevel: 'silent',
    metafile: true,
  });
  copyFileSync(path.join(WEB_DIR, 'src', 'index.html'), path.join(outDir, 'index.html'));
  const names = ['index.html', 'app.js', 'app.css'];
  for (const name of names) {
    if (!statSync(path.join(outDir, name), { throwIfNoEntry: false })?.isFile()) throw new Error(`web console build: ${name} was not written to ${outDir}`);
  }
  const files = Object.keys(result.metafile.outputs)
    .map((p) => path.basename(p))
    .concat('index.html')
    .sort()
    .map((name) => ({ name, bytes: statSync(path.join(outDir, name)).size }));
  return { outDir, files };
}

if (require.main === module) {
  buildConsole().then(
    (b) => process.stdout.write(`web console built in ${path.relative(process.cwd(), b.outDir) || '.'}: ${b.files.map((f) => `${f.name} ${(f.bytes / 1024).toFixed(1)} KiB`).join(', ')}\n`),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
