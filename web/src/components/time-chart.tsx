import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Chart } from '../dashboard-data';

/** Line colours with at least 4.5:1 contrast on white. */
const PALETTE = ['#1d4ed8', '#b91c1c', '#047857', '#7c2d92', '#9a3412', '#0f766e', '#4338ca', '#a16207'];

const COMPACT = new Intl.NumberFormat('en', { notation: 'compact', maximumFractionDigits: 2 });
const compact = (v: number) => COMPACT.format(v);

const fmt = (v: number | null | undefined, digits: number) => (v === null || v === undefined ? 'none' : v.toFixed(digits));

/**
 * One time series chart (uPlot, on a canvas), sized to its container, with
 * the newest values written out beneath it for screen readers and quick
 * reading.
 */
export function TimeChart({ title, chart, unit, digits = 1 }: { title: string; chart: Chart; unit: string; digits?: number }) {
  const box = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const width = () => Math.max(240, Math.floor(el.clientWidth));
    const data: uPlot.AlignedData = [chart.times, ...chart.lines.map((l) => l.values)];
    plot.current?.destroy();
    plot.current = new uPlot(
      {
        width: width(),
        height: 180,
        // One interval is one point: show the minutes around it, not years.
        scales: { x: { time: true, ...(chart.times.length === 1 ? { range: (): uPlot.Range.MinMax => [chart.times[0]! - 300, chart.times[0]! + 60] } : {}) } },
        axes: [{ stroke: '#1f2937' }, { stroke: '#1f2937', size: 60, values: (_u: uPlot, ticks: number[]) => ticks.map(compact) }],
        series: [{}, ...chart.lines.map((l, i) => ({ label: l.label, stroke: PALETTE[i % PALETTE.length], width: 2, spanGaps: false, value: (_u: uPlot, v: number | null) => fmt(v, digits) }))],
        legend: { live: false },
      },
      data,
      el,
    );
    const observer = new ResizeObserver(() => plot.current?.setSize({ width: width(), height: 180 }));
    observer.observe(el);
    return () => {
      observer.disconnect();
      plot.current?.destroy();
      plot.current = null;
    };
  }, [chart, digits]);

  const latest = chart.lines.map((l) => {
    const last = [...l.values].reverse().find((v) => v !== null);
    return `${l.label} ${fmt(last, digits)}${unit}`;
  });
  return (
    <figure class="chart">
      <figcaption>{title}</figcaption>
      {chart.times.length === 0 || chart.lines.length === 0 ? (
        <p class="muted">Nothing recorded yet.</p>
      ) : (
        <>
          <div ref={box} class="chart-canvas" role="img" aria-label={`${title}: chart over time; latest ${latest.join(', ')}`} />
          <p class="chart-latest">Latest: {latest.join(' · ')}</p>
        </>
      )}
    </figure>
  );
}
