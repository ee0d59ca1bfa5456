import type { CapabilityResult, Figure } from './capabilities';

export type Verdict = 'good' | 'usable' | 'not usable';

export interface EvaluationReport {
  startedAt: string;
  seconds: number;
  size: 'small' | 'full';
  capabilities: Array<Omit<CapabilityResult, 'figures'> & { verdict: Verdict; figures: Array<Figure & { verdict: Verdict }> }>;
}

function judge(f: Figure): Verdict {
  const meets = (limit: number) => (f.higherIsBetter ? f.value >= limit : f.value <= limit);
  if (!Number.isFinite(f.value)) return 'not usable';
  return meets(f.good) ? 'good' : meets(f.usable) ? 'usable' : 'not usable';
}

/** A capability is as good as its weakest figure. */
export function judgeAll(results: CapabilityResult[]): EvaluationReport['capabilities'] {
  const order: Verdict[] = ['not usable', 'usable', 'good'];
  return results.map((r) => {
    const figures = r.figures.map((f) => ({ ...f, verdict: judge(f) }));
    const verdict = figures.reduce<Verdict>((worst, f) => (order.indexOf(f.verdict) < order.indexOf(worst) ? f.verdict : worst), 'good');
    return { ...r, figures, verdict };
  });
}

const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);
const fmt = (v: number, unit: string) => (unit === 'share' ? `${(v * 100).toFixed(1)}%` : `${Number.isInteger(v) ? v : v.toFixed(3)} ${unit}`);

/** One horizontal bar per figure, against its usable and good marks (an SVG image, no script). */
function chart(figures: Array<Figure & { verdict: Verdict }>): string {
  const width = 640;
  const row = 44;
  const left = 260;
  const span = width - left - 20;
  const bars = figures.map((f, i) => {
    const max = Math.max(f.value, f.usable, f.good, f.unit === 'share' ? 1 : 0) * 1.1 || 1;
    const x = (v: number) => left + (Math.max(0, v) / max) * span;
    const y = 10 + i * row;
    const colour = f.verdict === 'good' ? '#047857' : f.verdict === 'usable' ? '#a16207' : '#b91c1c';
    return [
      `<text x="${left - 8}" y="${y + 16}" text-anchor="end" font-size="12" fill="#1f2937">${esc(f.name.length > 36 ? `${f.name.slice(0, 35)}…` : f.name)}</text>`,
      `<rect x="${left}" y="${y + 4}" width="${Math.max(1, x(f.value) - left).toFixed(1)}" height="18" fill="${colour}"><title>${esc(`${f.name}: ${fmt(f.value, f.unit)} (${f.verdict})`)}</title></rect>`,
      `<line x1="${x(f.usable).toFixed(1)}" x2="${x(f.usable).toFixed(1)}" y1="${y}" y2="${y + 26}" stroke="#a16207" stroke-dasharray="3,2"/>`,
      `<line x1="${x(f.good).toFixed(1)}" x2="${x(f.good).toFixed(1)}" y1="${y}" y2="${y + 26}" stroke="#047857" stroke-width="2"/>`,
      `<text x="${Math.min(width - 4, x(f.value) + 4).toFixed(1)}" y="${y + 38}" font-size="11" fill="#1f2937">${esc(fmt(f.value, f.unit))}</text>`,
    ].join('');
  });
  const height = 20 + figures.length * row;
  return `<svg xmlns="http://www.w3.org/2000/svg" role="img" aria-label="Figures against their thresholds: dashed line usable, solid line good" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}">${bars.join('')}</svg>`;
}

export function renderHtml(report: EvaluationReport): string {
  const sections = report.capabilities.map(
    (c) => `<section id="${c.capability}" aria-labelledby="h-${c.capability}">
<h2 id="h-${c.capability}">${esc(c.title)} <span class="verdict ${c.verdict.replace(' ', '-')}">${c.verdict}</span></h2>
${chart(c.figures)}
<table><thead><tr><th scope="col">figure</th><th scope="col">value</th><th scope="col">usable at</th><th scope="col">good at</th><th scope="col">verdict</th></tr></thead><tbody>
${c.figures.map((f) => `<tr><td>${esc(f.name)}</td><td>${esc(fmt(f.value, f.unit))}</td><td>${f.higherIsBetter ? '≥' : '≤'} ${esc(fmt(f.usable, f.unit))}</td><td>${f.higherIsBetter ? '≥' : '≤'} ${esc(fmt(f.good, f.unit))}</td><td>${f.verdict}</td></tr>`).join('\n')}
</tbody></table>
${c.notes.map((n) => `<p>${esc(n)}</p>`).join('\n')}
</section>`,
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>durable-agent evaluation</title>
<style>body{font:15px/1.5 system-ui,sans-serif;color:#1f2937;max-width:60rem;margin:2rem auto;padding:0 1rem}table{border-collapse:collapse;margin:.5rem 0}td,th{border:1px solid #cbd5e1;padding:.25rem .5rem;text-align:left}.verdict{font-size:.8em;padding:.1rem .5rem;border-radius:4px;color:#fff}.good{background:#047857}.usable{background:#a16207}.not-usable{background:#b91c1c}</style>
</head><body>
<h1>durable-agent evaluation</h1>
<p>${report.size === 'small' ? 'Small run (CI)' : 'Full run'} on the local stack with the scripted model and fixed data, ${esc(report.startedAt)}, ${report.seconds.toFixed(1)} s. A capability is <strong>good</strong> when every figure reaches its good mark, <strong>usable</strong> when every figure reaches its usable mark; the marks are in each table.</p>
<ul>${report.capabilities.map((c) => `<li><a href="#${c.capability}">${esc(c.title)}</a>: ${c.verdict}</li>`).join('')}</ul>
${sections.join('\n')}
</body></html>
`;
}
