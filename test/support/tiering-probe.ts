/**
 * Run as `node --allow-natives-syntax --import tsx tiering-probe.ts <budget>`:
 * applies the budget with applyInterruptBudget (unless "default") and prints
 * the number of calls after which a small function is first on its way to
 * V8's optimizing compiler (marked, compiling or compiled).
 */
import { applyInterruptBudget } from '../../workers/v8-tiering';

const arg = process.argv[2] ?? 'default';
if (arg !== 'default') applyInterruptBudget(Number(arg));
// Natives syntax only parses where the flag is on; a Function body is parsed at run time.
const status = new Function('f', 'return %GetOptimizationStatus(f)') as (f: unknown) => number;
// V8's OptimizationStatus bits: optimized 16, marked 256, marked for concurrent 512, optimizing concurrently 1024.
const TOWARD_TURBOFAN = 16 | 256 | 512 | 1024;
function work(x: number): number {
  let s = 0;
  for (let i = 0; i < 8; i++) s += (x + i) * 3;
  return s;
}
let calls = 0;
let sink = 0;
while ((status(work) & TOWARD_TURBOFAN) === 0 && calls < 10_000_000) sink += work(calls++);
process.stdout.write(`${JSON.stringify({ calls, sink: sink > 0 })}\n`);
