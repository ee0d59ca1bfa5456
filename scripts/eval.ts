/**
 * `npm run eval`: the scripted evaluation of sessions, tools, MCP and memory
 * (and isolation) on the local stack, brought up if needed, with the scripted
 * model and fixed data. Writes .data/eval/report.html (charts as inline SVG)
 * and report.json with a usable/good verdict per capability and the
 * thresholds behind it; the last line printed is one JSON object.
 *
 *   npm run eval -- [--small] [--out dir]
 */
import path from 'node:path';
import { parseArgs } from 'node:util';
import { runEvaluation } from '../evaluation/run';
import { ensureStack } from './stack';

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { small: { type: 'boolean', default: false }, out: { type: 'string', default: path.join(__dirname, '..', '.data', 'eval') } } });
  await ensureStack({ log: (line) => process.stderr.write(`${line}\n`) });
  const { report, htmlPath } = await runEvaluation({ small: values.small, outDir: path.resolve(values.out), log: (line) => process.stderr.write(`${line}\n`) });
  process.stderr.write(`report: ${htmlPath}\n`);
  const verdicts = Object.fromEntries(report.capabilities.map((c) => [c.capability, c.verdict]));
  const figures = Object.fromEntries(report.capabilities.flatMap((c) => c.figures.map((f) => [`${c.capability}: ${f.name}`, Math.round(f.value * 1000) / 1000])));
  process.stdout.write(`${JSON.stringify({ size: report.size, seconds: Math.round(report.seconds), verdicts, figures, report: htmlPath })}\n`);
  process.exit(0);
}

main().catch((err: unknown) => {
  process.stderr.write(`eval failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
