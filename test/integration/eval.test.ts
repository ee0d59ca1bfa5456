import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runEvaluation } from '../../evaluation/run';
import { labelledSet } from '../../evaluation/memory-set';

/* `npm run eval` on a small set, as CI runs it: every section of the report, with its figures, thresholds and verdict. */

it('the labelled memory set has 200 queries, each expecting one of the facts', () => {
  const set = labelledSet();
  expect(set.queries).toHaveLength(200);
  const predicates = new Set(set.facts.map((f) => f.predicate));
  expect(set.queries.every((q) => predicates.has(q.expected))).toBe(true);
  expect(new Set(set.queries.map((q) => q.query)).size).toBe(200);
});

it('writes a report with a verdict and the figures behind it for sessions, tools, MCP, memory and isolation', async () => {
  const outDir = mkdtempSync(path.join(tmpdir(), 'eval-'));
  const { report, htmlPath, jsonPath } = await runEvaluation({ small: true, outDir });
  const html = readFileSync(htmlPath, 'utf8');
  const json = JSON.parse(readFileSync(jsonPath, 'utf8')) as typeof report;
  expect(json.capabilities.map((c) => c.capability)).toEqual(['sessions', 'tools', 'mcp', 'memory', 'isolation']);
  for (const c of report.capabilities) {
    expect(html).toContain(`<section id="${c.capability}"`);
    expect(c.figures.length).toBeGreaterThan(0);
    for (const f of c.figures) {
      expect(Number.isFinite(f.value)).toBe(true);
      expect(html).toContain(f.name.replace(/'/g, '&#39;'));
    }
    expect(['good', 'usable', 'not usable']).toContain(c.verdict);
  }
  // Each section has its chart (inline SVG) and its thresholds table.
  expect(html.match(/<svg /g)).toHaveLength(5);
  expect(html.match(/<th scope="col">usable at<\/th>/g)).toHaveLength(5);
  // What this runtime must always get right, whatever the embedder.
  const figure = (cap: string, name: string) => report.capabilities.find((c) => c.capability === cap)!.figures.find((f) => f.name.startsWith(name))!.value;
  expect(figure('isolation', 'cross-principal attempts refused')).toBe(1);
  expect(figure('memory', "another user's memories recalled")).toBe(0);
  expect(figure('memory', 'citations of unrecalled ids caught')).toBe(1);
  expect(figure('tools', 'success rate')).toBe(1);
  expect(figure('tools', 'timeouts caught')).toBe(1);
  expect(figure('sessions', 'facts kept in the prompt')).toBeGreaterThan(0);
}, 240_000);
