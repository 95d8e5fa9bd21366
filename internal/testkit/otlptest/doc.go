// Package otlptest is an OTLP/HTTP traces receiver for tests: an httptest
// server that decodes each ExportTraceServiceRequest (protobuf) the way a
// collector does and keeps its spans, so that a test asserts on what an
// exporter really sent. It refuses what the OTLP/HTTP specification makes
// a receiver refuse: a method other than POST (405), a body that is not
// application/x-protobuf (415), one that does not decode (400)
// (https://opentelemetry.io/docs/specs/otlp/#otlphttp).
package otlptest
