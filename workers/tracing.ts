import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { Resource } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { WorkflowClientInterceptor } from '@temporalio/client';
import {
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  OpenTelemetryWorkflowClientInterceptor,
  makeWorkflowExporter,
} from '@temporalio/interceptors-opentelemetry';
import type { WorkerOptions } from '@temporalio/worker';

/*
 * OpenTelemetry traces across client, workflow and activities, through
 * Temporal's interceptors: a client's update-with-start, the workflow's run
 * and its update handlers, each activity it schedules, and the model call
 * inside (a GenAI span, activities/model-activities.ts) form one trace.
 * Workflow spans leave the sandbox through a sink, so replays export nothing
 * twice. Off unless configured: no interceptor is installed, no module is
 * added to the workflow bundle, and the model's span is the API's no-op.
 */

/** The workflow-side interceptors' module, to bundle with the workflows when tracing is on. */
export const WORKFLOW_TRACING_MODULE = require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors');

export interface Tracing {
  processor: SpanProcessor;
  resource: Resource;
  /** Flushes what is buffered and stops exporting. */
  shutdown(): Promise<void>;
}

/**
 * Registers a tracer provider for this process with `exporter` (tests pass an
 * in-memory one) or, given an endpoint, an OTLP/HTTP exporter.
 */
export function startTracing(options: { serviceName: string; exporter?: SpanExporter; otlpEndpoint?: string }): Tracing {
  const exporter = options.exporter ?? new OTLPTraceExporter({ url: tracesUrl(options.otlpEndpoint ?? '') });
  // In-memory exporters get each span at once; a network exporter gets batches.
  const processor = options.exporter ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(exporter);
  const resource = new Resource({ 'service.name': options.serviceName });
  const provider = new BasicTracerProvider({ resource });
  provider.addSpanProcessor(processor);
  // Also the W3C trace-context propagator, which carries a span's context in Temporal's headers.
  provider.register({ contextManager: new AsyncLocalStorageContextManager() });
  return {
    processor,
    resource,
    shutdown: async () => {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/** OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is the full URL; OTEL_EXPORTER_OTLP_ENDPOINT a base to which /v1/traces is added. */
function tracesUrl(endpoint: string): string {
  return /\/v1\/traces\/?$/.test(endpoint) ? endpoint : `${endpoint.replace(/\/+$/, '')}/v1/traces`;
}

/** The standard OpenTelemetry variables: tracing is on when an OTLP endpoint is set. */
export function tracingFromEnv(env: NodeJS.ProcessEnv, defaultServiceName: string): Tracing | undefined {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  const endpoint = traces || base;
  if (!endpoint || env.OTEL_TRACES_EXPORTER?.trim() === 'none') return undefined;
  if (!/^https?:\/\//.test(endpoint)) throw new Error(`OTEL_EXPORTER_OTLP_${traces ? 'TRACES_' : ''}ENDPOINT must be an http(s) URL, got "${endpoint.slice(0, 80)}"`);
  return startTracing({ serviceName: env.OTEL_SERVICE_NAME?.trim() || defaultServiceName, otlpEndpoint: endpoint });
}

/** What a worker adds when tracing is on: activity interceptors, the workflow interceptors' module and the span sink. */
export function workerTracingOptions(tracing: Tracing): Pick<WorkerOptions, 'interceptors' | 'sinks'> {
  return {
    interceptors: {
      workflowModules: [WORKFLOW_TRACING_MODULE],
      activity: [(ctx) => ({ inbound: new OpenTelemetryActivityInboundInterceptor(ctx), outbound: new OpenTelemetryActivityOutboundInterceptor(ctx) })],
    },
    sinks: { exporter: makeWorkflowExporter(tracing.processor, tracing.resource) },
  };
}

/** The client side: starts, updates, signals and queries open spans whose context travels in the request headers. */
export function clientTracingInterceptors(): { workflow: WorkflowClientInterceptor[] } {
  return { workflow: [new OpenTelemetryWorkflowClientInterceptor()] };
}
