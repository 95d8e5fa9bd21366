package metrics

import (
	"log/slog"
	"math"
	"slices"
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

// Metric is one metric on a log line: Name is both the metric name and the
// line's member that holds its value.
type Metric struct {
	Name string
	Unit Unit
	// Value is the one value, written as a number, when Values is nil.
	Value float64
	// Values, when not nil, are many values of the metric, written as an
	// array of numbers: CloudWatch extracts each as one sample, so the
	// statistics (Sum, percentiles, SampleCount) are those of writing them
	// one per line. Non-finite values are left out, and values past
	// MaxValuesPerMetric are cut (the caller splits larger sets over lines);
	// a metric left without values is left out.
	Values []float64
}

// Entry is one MetricDirective of a log line: metrics in Namespace with
// their dimensions.
type Entry struct {
	// Time is the metrics' timestamp (_aws.Timestamp, milliseconds since
	// the Unix epoch). In a line of several entries, the first one's.
	Time time.Time
	// Dimensions are added to the line as string members. An empty Value
	// leaves the dimension out.
	Dimensions []Dimension
	// Sets are the DimensionSets, each a list of names from Dimensions;
	// every metric is extracted once per set. A set naming a dimension that
	// is absent (empty Value) is dropped, rather than cut to a set that
	// would be a further custom metric; with no set left, the metrics get
	// one empty set. Nil means one set of all Dimensions.
	Sets [][]string
	// Metrics are added to the line as number or array members.
	// Non-finite values are left out (JSON has no NaN or infinity).
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
func (e Entry) Attrs() []slog.Attr { return Attrs(e) }

// Attrs returns the members of one EMF document holding every entry of es:
// one MetricDirective per entry that has a finite metric, under one "_aws"
// whose Timestamp is es[0].Time. The entries share the line's members, so
// a dimension or metric named by two entries keeps the first entry's value
// (two entries that need different values of one dimension belong on two
// lines). It returns nil when no entry has a finite metric.
func Attrs(es ...Entry) []slog.Attr {
	if len(es) == 0 {
		return nil
	}
	attrs := make([]slog.Attr, 1, 8)
	var dirs []directive
	for _, e := range es {
		var defs []definition
		for _, m := range e.Metrics {
			if len(defs) == MaxMetricsPerDirective || hasKey(attrs[1:], m.Name) {
				continue
			}
			v, ok := value(m)
			if !ok {
				continue
			}
			defs = append(defs, definition{Name: m.Name, Unit: m.Unit})
			attrs = append(attrs, v)
		}
		if len(defs) == 0 {
			continue
		}
		// present and one backing array for the sets: this runs once per
		// batch line, and its allocations were most of the line's.
		var presentBuf [8]string
		present := presentBuf[:0]
		for _, d := range e.Dimensions {
			if d.Value == "" || slices.Contains(present, d.Name) {
				continue
			}
			present = append(present, d.Name)
			if !hasKey(attrs[1:], d.Name) {
				attrs = append(attrs, slog.String(d.Name, d.Value))
			}
		}
		sets := e.Sets
		if sets == nil {
			sets = [][]string{present}
		}
		names := 0
		for _, s := range sets {
			names += len(s)
		}
		flat := make([]string, 0, names)
		dims := make([][]string, 0, len(sets))
	sets:
		for _, s := range sets {
			start := len(flat)
			for _, name := range s {
				if !slices.Contains(present, name) {
					flat = flat[:start]
					continue sets
				}
				if !slices.Contains(flat[start:], name) && len(flat)-start < MaxDimensionsPerSet {
					flat = append(flat, name)
				}
			}
			if len(flat) > start {
				dims = append(dims, flat[start:len(flat):len(flat)])
			}
		}
		if len(dims) == 0 {
			dims = append(dims, []string{})
		}
		dirs = append(dirs, directive{Namespace: Namespace, Dimensions: dims, Metrics: defs})
	}
	if len(dirs) == 0 {
		return nil
	}
	attrs[0] = slog.Attr{Key: "_aws", Value: slog.GroupValue(
		slog.Int64("Timestamp", es[0].Time.UnixMilli()),
		slog.Any("CloudWatchMetrics", dirs),
	)}
	return attrs
}

// value is m's member: a number, or an array of at most MaxValuesPerMetric
// finite numbers; false when m has no finite value.
func value(m Metric) (slog.Attr, bool) {
	if m.Values == nil {
		return slog.Float64(m.Name, m.Value), isFinite(m.Value)
	}
	if len(m.Values) <= MaxValuesPerMetric && !slices.ContainsFunc(m.Values, func(v float64) bool { return !isFinite(v) }) {
		return slog.Any(m.Name, m.Values), len(m.Values) > 0 // as it is: no copy
	}
	vs := make([]float64, 0, min(len(m.Values), MaxValuesPerMetric))
	for _, v := range m.Values {
		if isFinite(v) && len(vs) < MaxValuesPerMetric {
			vs = append(vs, v)
		}
	}
	return slog.Any(m.Name, vs), len(vs) > 0
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
