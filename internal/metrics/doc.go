// Package metrics writes herald's metrics as CloudWatch Embedded Metric
// Format (EMF): members added to a function's JSON log line that tell
// CloudWatch Logs to extract metric values from it, at no API cost and with
// no cloudwatch:PutMetricData permission.
//
// A line carries EMF when it is one JSON object (nothing before or after it
// on the line) with an "_aws" member holding the metric directives, and the
// directives' dimension and metric names as members of the same object.
// herald's functions run on the OS-only runtime provided.al2023 with
// LoggingConfig LogFormat JSON: for that runtime Lambda formats only its own
// system logs as JSON and passes the function's standard output through
// unchanged (it does not wrap or re-encode a line that is already JSON), so
// each slog JSON line is one log event and its EMF is extracted as written.
// Runtimes that wrap application logs (Node.js console.log with JSON log
// format) would put the document under "message", where CloudWatch does not
// look; that is why the metrics go into the slog line itself and not through
// a logger that adds a prefix.
//
// Dimensions are bounded: channel, outcome, error class and function name.
// Never a URL, host, address or notification id: each distinct dimension
// value is a separate custom metric.
//
// Specification:
// https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch_Embedded_Metric_Format_Specification.html
// Lambda log formats:
// https://docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs-logformat.html
package metrics
