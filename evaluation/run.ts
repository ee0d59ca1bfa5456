import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { probeTools, type ProbeLog } from '../test/support/probe-tools';
import { startTestEnv } from '../test/support/test-env';
import { evalModel, evaluateIsolation, evaluateMcp, evaluateMemory, evaluateSessions, evaluateTools, type CapabilityResult } from './capabilities';
import { judgeAll, renderHtml, type EvaluationReport } from './report';

/**
 * Runs the scripted evaluation of the four capabilities (and isolation)
 * against the local stack, which must be up, and writes `report.html` (SVG
 * charts inline) and `report.json` to `outDir`.
 */
export async function runEvaluation(options: { small: boolean; outDir: string; log?: (line: string) => void }): Promise<{ report: EvaluationReport; htmlPath: string; jsonPath: string }> {
  const log = options.log ?? (() => undefined);
  const started = Date.now();
  const probe: ProbeLog = { runs: [] };
  const env = await startTestEnv({ name: 'eval', extraTools: probeTools(probe), modelFallback: evalModel });
  const results: CapabilityResult[] = [];
  try {
    const ctx = { env, probe, small: options.small, log };
    for (const [name, run] of [
      ['sessions', evaluateSessions],
      ['tools', evaluateTools],
      ['mcp', evaluateMcp],
      ['memory', evaluateMemory],
      ['isolation', evaluateIsolation],
    ] as const) {
      const t = Date.now();
      results.push(await run(ctx));
      log(`eval: ${name} in ${((Date.now() - t) / 1000).toFixed(1)} s`);
    }
  } finally {
    await env.close();
  }
  const report: EvaluationReport = { startedAt: new Date(started).toISOString(), seconds: (Date.now() - started) / 1000, size: options.small ? 'small' : 'full', capabilities: judgeAll(results) };
  mkdirSync(options.outDir, { recursive: true });
  const htmlPath = path.join(options.outDir, 'report.html');
  const jsonPath = path.join(options.outDir, 'report.json');
  writeFileSync(htmlPath, renderHtml(report));
  writeFileSync(jsonPath, `${JSON.stringify(report, null, 2)}\n`);
  return { report, htmlPath, jsonPath };
}
