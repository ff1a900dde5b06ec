// A small agent traced with the OpenTelemetry JS SDK. Its task span has two client spans, one per
// call to the sidecar (PUT /v1/context, POST /v1/checkpoints), each sent with the W3C traceparent
// header of its span, so the sidecar's spans join this trace. The agent's spans go to the OTLP
// collector at OTEL_EXPORTER_OTLP_ENDPOINT. Prints {"traceId", "putSpanId", "postSpanId",
// "checkpointId"} and exits 0, or prints the error and exits 1.
//   SIDECAR_URL=http://127.0.0.1:PORT OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:PORT2 \
//     node dist/agent.js
import { context, propagation, trace, Span, SpanKind, SpanStatusCode } from "@opentelemetry/api";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";

const sidecar = process.env.SIDECAR_URL ?? "http://127.0.0.1:8080";
const collector = process.env.OTEL_EXPORTER_OTLP_ENDPOINT ?? "http://127.0.0.1:4318";

const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ "service.name": process.env.OTEL_SERVICE_NAME ?? "ts-agent" }),
  spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${collector}/v1/traces` }))],
});
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
const tracer = provider.getTracer("agentckpt-traced-agent");

// Calls the sidecar in a client span under `parent`, with that span's traceparent header.
async function call(parent: Span, method: string, path: string, body: unknown) {
  const span = tracer.startSpan(`${method} ${path}`, { kind: SpanKind.CLIENT },
                                trace.setSpan(context.active(), parent));
  const headers: Record<string, string> = { "content-type": "application/json" };
  propagation.inject(trace.setSpan(context.active(), span), headers);
  try {
    const res = await fetch(`${sidecar}${path}`, { method, headers, body: JSON.stringify(body) });
    const text = await res.text();
    span.setAttribute("http.response.status_code", res.status);
    if (!res.ok) {
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw new Error(`${method} ${path}: HTTP ${res.status} ${text}`);
    }
    return { span, reply: JSON.parse(text) };
  } finally {
    span.end();
  }
}

async function main() {
  const task = tracer.startSpan("agent.task");
  task.setAttribute("gen_ai.agent.id", process.env.AGENT_ID ?? "");
  const put = await call(task, "PUT", "/v1/context", {
    contextSummary: {
      systemPromptHash: "3b7e4f0d1c9a8b2e6f5d4c3b2a1908f7e6d5c4b3a29180f7e6d5c4b3a2918070",
      gatheringResults: "three incident logs read",
      planOutline: ["read the logs", "write the summary"],
      completedSteps: 1,
      draftContent: "",
      toolCallLog: [],
    },
  });
  const post = await call(task, "POST", "/v1/checkpoints", {});
  task.end();
  await provider.shutdown();  // sends the spans
  console.log(JSON.stringify({
    traceId: task.spanContext().traceId,
    putSpanId: put.span.spanContext().spanId,
    postSpanId: post.span.spanContext().spanId,
    checkpointId: post.reply.checkpointId,
  }));
}

main().catch(async (e) => {
  console.log(String(e instanceof Error ? e.stack : e));
  await provider.shutdown().catch(() => undefined);
  process.exit(1);
});
