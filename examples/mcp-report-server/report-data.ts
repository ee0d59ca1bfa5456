/** A small internal-report domain: quarterly figures per region, enough to make the tools worth calling. */
export const REPORTS = ['revenue', 'support', 'headcount'] as const;
export type ReportName = (typeof REPORTS)[number];

export const REGIONS = ['emea', 'americas', 'apac'] as const;
export type Region = (typeof REGIONS)[number];

export const QUARTERS = ['2025-Q1', '2025-Q2', '2025-Q3', '2025-Q4'] as const;

interface Row {
  quarter: string;
  region: Region;
  value: number;
}

const UNITS: Record<ReportName, string> = { revenue: 'kEUR', support: 'tickets closed', headcount: 'people' };

function seeded(report: ReportName, quarter: string, region: Region): number {
  let h = 2166136261;
  for (const ch of `${report}|${quarter}|${region}`) h = Math.imul(h ^ ch.charCodeAt(0), 16777619) >>> 0;
  const base = { revenue: 1200, support: 900, headcount: 40 }[report];
  return Math.round(base * (0.7 + (h % 600) / 1000));
}

/** Rows of one report, optionally filtered; deterministic so tests can assert on values. */
export function queryReport(report: ReportName, filter: { quarter?: string; region?: Region }): { unit: string; rows: Row[] } {
  const rows: Row[] = [];
  for (const quarter of QUARTERS) {
    if (filter.quarter && filter.quarter !== quarter) continue;
    for (const region of REGIONS) {
      if (filter.region && filter.region !== region) continue;
      rows.push({ quarter, region, value: seeded(report, quarter, region) });
    }
  }
  return { unit: UNITS[report], rows };
}
