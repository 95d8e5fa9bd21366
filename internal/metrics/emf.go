package metrics

import (
	"log/slog"
	"math"
	"time"
)

// Namespace is the CloudWatch namespace of every herald metric.
const Namespace = "Herald"

// Limits of the EMF specification and of CloudWatch metrics.
const (
	// MaxDimensionsPerSet is the most dimension keys in one DimensionSet.
	MaxDimensionsPerSet = 30
	// MaxMetricsPerDirective is the most MetricDefinitions in one
	// MetricDirective.
	MaxMetricsPerDirective = 100
	// MaxValuesPerMetric is the most values of one metric's target member
	// when it is an array.
	MaxValuesPerMetric = 100
	// MaxNameLength is the longest namespace, metric name or dimension name
	// (CloudWatch PutMetricData's limits, which EMF extraction applies).
	MaxNameLength = 255
	// MaxDimensionValueLength is the longest dimension value.
	MaxDimensionValueLength = 1024
	// MaxTimestampPast and MaxTimestampFuture bound _aws.Timestamp around
	// the time CloudWatch receives the event: metrics outside are not
	// extracted.
	MaxTimestampPast   = 14 * 24 * time.Hour
	MaxTimestampFuture = 2 * time.Hour
)

// Unit is a CloudWatch metric unit (MetricDatum.Unit).
type Unit string

// The CloudWatch units herald uses. Units lists every unit CloudWatch
// accepts.
const (
	Count        Unit = "Count"
	Milliseconds Unit = "Milliseconds"
	Seconds      Unit = "Seconds"
	None         Unit = "None"
)

// Units is every unit CloudWatch accepts
// (https://docs.aws.amazon.com/AmazonCloudWatch/latest/APIReference/API_MetricDatum.html).
var Units = []Unit{
	"Seconds", "Microseconds", "Milliseconds",
	"Bytes", "Kilobytes", "Megabytes", "Gigabytes", "Terabytes",
	"Bits", "Kilobits", "Megabits", "Gigabits", "Terabits",
	"Percent", "Count",
	"Bytes/Second", "Kilobytes/Second", "Megabytes/Second", "Gigabytes/Second", "Terabytes/Second",
	"Bits/Second", "Kilobits/Second", "Megabits/Second", "Gigabits/Second", "Terabits/Second",
	"Count/Second", "None",
}

// Dimension is one dimension of a line's metrics: a member of the log line
// whose string value CloudWatch uses as the dimension value. Values must be
// bounded (a class, not an identifier) and non-empty.
type Dimension struct {
	Name  string
	Value string
}

// Metric is one metric value on a log line: Name is both the metric name
// and the line's member that holds Value.
type Metric struct {
	Name  string
	Unit  Unit
	Value float64
}

// Entry is the metrics of one log line, all in Namespace.
type Entry struct {
	// Time is the metrics' timestamp (_aws.Timestamp, milliseconds since
	// the Unix epoch).
	Time time.Time
	// Dimensions are added to the line as string members. An empty Value
	// leaves the dimension out.
	Dimensions []Dimension
	// Sets are the DimensionSets, each a list of names from Dimensions;
	// every metric is extracted once per set. Names whose dimension is
	// absent are left out of the set, and a set left empty is dropped. Nil
	// means one set of all Dimensions.
	Sets [][]string
	// Metrics are added to the line as number members. Non-finite values
	// are left out (JSON has no NaN or infinity).
	Metrics []Metric
}

// directive is the EMF MetricDirective object.
type directive struct {
	Namespace  string       `json:"Namespace"`
	Dimensions [][]string   `json:"Dimensions"`
	Metrics    []definition `json:"Metrics"`
}

// definition is the EMF MetricDefinition object.
type definition struct {
	Name string `json:"Name"`
	Unit Unit   `json:"Unit,omitempty"`
}

// Attrs returns the members that make a slog JSON line (slog.JSONHandler,
// no group opened on the logger) an EMF document: "_aws" with one
// MetricDirective, then the dimensions, then the metric values. It returns
// nil when e has no finite metric, so a line without metrics carries no
// "_aws". The caller must not add members of the same names to the line.
func (e Entry) Attrs() []slog.Attr {
	// Allocations here are paid on every record's log line, so the
	// slices are sized once and the dimension sets share one backing array.
	finite := 0
	for _, m := range e.Metrics {
		if isFinite(m.Value) {
			finite++
		}
	}
	finite = min(finite, MaxMetricsPerDirective)
	if finite == 0 {
		return nil
	}
	attrs := make([]slog.Attr, 1, 1+len(e.Dimensions)+finite)
	for _, d := range e.Dimensions {
		if d.Value != "" && !hasKey(attrs[1:], d.Name) {
			attrs = append(attrs, slog.String(d.Name, d.Value))
		}
	}
	present := attrs[1:]
	sets := e.Sets
	names := 0
	for _, s := range sets {
		names += len(s)
	}
	if sets == nil {
		names = len(present)
	}
	flat := make([]string, 0, names)
	dims := make([][]string, 0, max(len(sets), 1))
	addSet := func(start int) {
		if len(flat) > start {
			dims = append(dims, flat[start:len(flat):len(flat)])
		}
	}
	if sets == nil {
		for _, a := range present {
			if len(flat) < MaxDimensionsPerSet {
				flat = append(flat, a.Key)
			}
		}
		addSet(0)
	}
	for _, s := range sets {
		start := len(flat)
		for _, name := range s {
			if hasKey(present, name) && len(flat)-start < MaxDimensionsPerSet {
				flat = append(flat, name)
			}
		}
		addSet(start)
	}
	if len(dims) == 0 {
		dims = append(dims, []string{})
	}
	defs := make([]definition, 0, finite)
	for _, m := range e.Metrics {
		if !isFinite(m.Value) || len(defs) == finite {
			continue
		}
		defs = append(defs, definition{Name: m.Name, Unit: m.Unit})
		attrs = append(attrs, slog.Float64(m.Name, m.Value))
	}
	attrs[0] = slog.Attr{Key: "_aws", Value: slog.GroupValue(
		slog.Int64("Timestamp", e.Time.UnixMilli()),
		slog.Any("CloudWatchMetrics", &[1]directive{{Namespace: Namespace, Dimensions: dims, Metrics: defs}}),
	)}
	return attrs
}

// isFinite reports whether v can be written as a JSON number.
func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// hasKey reports whether one of attrs has key: dimensions are few (at most
// MaxDimensionsPerSet per set), so a scan beats a map.
func hasKey(attrs []slog.Attr, key string) bool {
	for _, a := range attrs {
		if a.Key == key {
			return true
		}
	}
	return false
}
