/**
 * The slot for the per-capability metrics dashboard. It lands with the
 * metrics issue; until then the page says so and shows no numbers.
 */
export function DashboardPage() {
  return (
    <section aria-labelledby="dashboard-title">
      <h1 id="dashboard-title">Dashboard</h1>
      <div class="placeholder" role="note" aria-label="Dashboard not built yet">
        <h2>Metrics land with the metrics issue</h2>
        <p>
          This page will show per-capability metrics (sessions, tools, MCP, memory) once the runtime exports them. Nothing here is measured yet, so nothing is
          shown: no placeholder numbers.
        </p>
        <p>Until then: the Sessions and Approvals pages are live, and each session's inspector shows its counters and links to its workflow in the Temporal Web UI.</p>
      </div>
    </section>
  );
}
