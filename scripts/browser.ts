import { execFileSync, spawnSync } from 'node:child_process';
import { findOnPath, isExecutableFile } from './stack/processes';

/**
 * A Chromium to drive pages with (puppeteer-core): CHROMIUM_PATH if set, else
 * one on PATH, else Debian's `chromium` package installed with apt-get when
 * we run as root (bundled browser downloads do not work on these machines).
 * Throws a message that says what to install otherwise.
 */
export function ensureChromium(env: NodeJS.ProcessEnv = process.env, log: (line: string) => void = (l) => process.stderr.write(`${l}\n`)): string {
  const configured = env.CHROMIUM_PATH?.trim();
  if (configured) {
    if (!isExecutableFile(configured)) throw new Error(`CHROMIUM_PATH=${configured} is not an executable file`);
    return configured;
  }
  const found = findChromium(env);
  if (found) return found;
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!root || !findOnPath('apt-get', env)) {
    throw new Error('No Chromium found (tried chromium, chromium-browser, google-chrome on PATH): install one (Debian: apt-get install chromium) or set CHROMIUM_PATH');
  }
  log('browser: Chromium is missing; installing Debian\'s chromium package (apt-get install chromium)');
  const aptEnv = { ...env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () => spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], { env: aptEnv, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' });
  let result = install();
  if (result.status !== 0) {
    // A fresh machine may have no package lists yet.
    execFileSync('apt-get', ['update'], { env: aptEnv, stdio: 'ignore' });
    result = install();
  }
  const installed = findChromium(env);
  if (result.status !== 0 || !installed) {
    throw new Error(`apt-get install chromium failed (exit ${result.status}): ${(result.stderr || result.stdout || '').trim().split('\n').slice(-3).join(' | ')}`);
  }
  log(`browser: installed ${installed}`);
  return installed;
}

function findChromium(env: NodeJS.ProcessEnv): string | null {
  for (const name of ['chromium', 'chromium-browser', 'google-chrome', 'google-chrome-stable']) {
    const found = findOnPath(name, env);
    if (found) return found;
  }
  return null;
}

/** Flags for a headless Chromium in a container (no sandbox as root, no GPU, small /dev/shm). */
export const HEADLESS_CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--no-default-browser-check'];

if (require.main === module) {
  try {
    process.stdout.write(`${ensureChromium()}\n`);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    process.exit(1);
  }
}
