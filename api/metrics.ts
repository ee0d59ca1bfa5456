import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { MiddlewareHandler } from 'hono';
import { routePath } from 'hono/route';

/*
 * The API server's own metrics (prom-client), served at /metrics: requests by
 * route and status, latency, open event streams and workflow subscriptions,
 * events fanned out, plus Node's process metrics. Names are `agent_api_*`, so
 * they never collide with the worker's (workflows/metric-catalog.ts) when both
 * are scraped into one Prometheus.
 */
export class ApiMetrics {
  readonly registry = new Registry();
  readonly requests = new Counter({ name: 'agent_api_requests_total', help: 'HTTP requests by route, method and status', labelNames: ['route', 'method', 'status'], registers: [this.registry] });
  readonly latency = new Histogram({
    name: 'agent_api_request_seconds',
    help: 'Time to answer (for event streams: to the headers)',
    labelNames: ['route', 'method'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly streams = new Gauge({ name: 'agent_api_event_streams', help: 'Open event streams (SSE readers)', registers: [this.registry] });
  readonly subscriptions: Gauge;
  readonly eventsSent = new Counter({ name: 'agent_api_events_sent_total', help: 'Events written to event streams', registers: [this.registry] });
  readonly streamsDropped = new Counter({
    name: 'agent_api_event_streams_dropped_total',
    help: 'Event streams the server closed because the reader took nothing for API_STREAM_STALL_MS (stalled) or fell too far behind (behind)',
    labelNames: ['reason'],
    registers: [this.registry],
  });

  /** `openFeeds`: how many sessions the server's event hub reads now. */
  constructor(openFeeds: () => number) {
    this.subscriptions = new Gauge({
      name: 'agent_api_event_subscriptions',
      help: 'Sessions the server reads events from (one each, however many readers)',
      registers: [this.registry],
      collect() {
        this.set(openFeeds());
      },
    });
    collectDefaultMetrics({ register: this.registry });
  }

  /** Counts and times every request by its route pattern (bounded labels, never a session id). */
  middleware(): MiddlewareHandler {
    return async (c, next) => {
      const started = performance.now();
      await next();
      // The matched route's pattern (a middleware's, such as /v1/*, for paths no route has).
      const route = routePath(c, -1) || 'unknown';
      const labels = { route, method: c.req.method };
      this.requests.inc({ ...labels, status: String(c.res.status) });
      this.latency.observe(labels, (performance.now() - started) / 1000);
    };
  }
}
