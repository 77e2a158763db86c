/**
 * The workflow interceptors, bundled with the workflows (`workflowInterceptorModules`): the
 * OpenTelemetry ones of @temporalio/interceptors-opentelemetry. Each run is a span continuing the
 * trace its start carried in its headers, each activity or child it starts a span whose context
 * goes along. The spans leave the sandbox through the `exporter` sink (worker/Tracing.ts); they
 * add no command, so histories recorded without them replay unchanged.
 */
export { interceptors } from "@temporalio/interceptors-opentelemetry/lib/workflow-interceptors.js"
