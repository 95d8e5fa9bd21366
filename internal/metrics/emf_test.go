package metrics_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/metrics"
)

// line writes e with a slog JSON handler, as the functions do, and returns
// the line without its newline.
func line(t *testing.T, e metrics.Entry, extra ...slog.Attr) []byte {
	t.Helper()
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	logger.LogAttrs(context.Background(), slog.LevelInfo, "notification", append(extra, e.Attrs()...)...)
	out := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	require.NotContains(t, string(out), "\n", "one log event is one line")
	return out
}

func TestEntryWritesValidEMF(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	e := metrics.Entry{
		Time: now,
		Dimensions: []metrics.Dimension{
			{Name: metrics.DimChannel, Value: "webhook"},
			{Name: metrics.DimOutcome, Value: "dead_lettered"},
			{Name: metrics.DimErrorClass, Value: "webhook_http_4xx"},
		},
		Sets: [][]string{{metrics.DimChannel, metrics.DimOutcome}, {metrics.DimChannel, metrics.DimErrorClass}},
		Metrics: []metrics.Metric{
			{Name: metrics.Notifications, Unit: metrics.Count, Value: 1},
			{Name: metrics.DeliveryDuration, Unit: metrics.Milliseconds, Value: 12.5},
		},
	}
	out := line(t, e, slog.String("id", "n-1"))
	require.NoError(t, metrics.Validate(out, now), string(out))
	require.JSONEq(t, `{
		"time": "`+"X"+`", "level": "INFO", "msg": "notification", "id": "n-1",
		"_aws": {"Timestamp": 1796104800000, "CloudWatchMetrics": [{"Namespace": "Herald",
			"Dimensions": [["channel","outcome"],["channel","error_class"]],
			"Metrics": [{"Name":"Notifications","Unit":"Count"},{"Name":"DeliveryDuration","Unit":"Milliseconds"}]}]},
		"channel": "webhook", "outcome": "dead_lettered", "error_class": "webhook_http_4xx",
		"Notifications": 1, "DeliveryDuration": 12.5}`, withTime(t, out, "X"))
}

// withTime replaces the slog time member so that the line compares exactly.
func withTime(t *testing.T, out []byte, v string) string {
	t.Helper()
	i := bytes.Index(out, []byte(`"time":"`))
	require.GreaterOrEqual(t, i, 0)
	j := bytes.IndexByte(out[i+8:], '"')
	return string(out[:i+8]) + v + string(out[i+8+j:])
}

func TestEntryLeavesOutWhatCloudWatchWouldReject(t *testing.T) {
	t.Parallel()
	now := time.Now()
	t.Run("no finite metric: no _aws", func(t *testing.T) {
		t.Parallel()
		e := metrics.Entry{Time: now, Metrics: []metrics.Metric{{Name: "A", Value: math.NaN()}, {Name: "B", Value: math.Inf(1)}}}
		require.Nil(t, e.Attrs())
	})
	t.Run("non-finite value and empty dimension dropped", func(t *testing.T) {
		t.Parallel()
		e := metrics.Entry{
			Time:       now,
			Dimensions: []metrics.Dimension{{Name: metrics.DimChannel, Value: "email"}, {Name: metrics.DimErrorClass, Value: ""}},
			Sets:       [][]string{{metrics.DimChannel}, {metrics.DimErrorClass}},
			Metrics:    []metrics.Metric{{Name: "A", Unit: metrics.Count, Value: 1}, {Name: "B", Value: math.NaN()}},
		}
		out := line(t, e)
		require.NoError(t, metrics.Validate(out, now), string(out))
		require.NotContains(t, string(out), `"B"`)
		require.NotContains(t, string(out), metrics.DimErrorClass)
		require.Contains(t, string(out), `"Dimensions":[["channel"]]`)
	})
	t.Run("more metrics than a directive allows", func(t *testing.T) {
		t.Parallel()
		e := metrics.Entry{Time: now}
		for i := range metrics.MaxMetricsPerDirective + 5 {
			e.Metrics = append(e.Metrics, metrics.Metric{Name: "m" + strings.Repeat("x", i), Unit: metrics.Count, Value: 1})
		}
		out := line(t, e)
		require.NoError(t, metrics.Validate(out, now), "a directive of more than 100 metrics is cut to 100")
	})
	t.Run("more dimensions than a set allows", func(t *testing.T) {
		t.Parallel()
		e := metrics.Entry{Time: now, Metrics: []metrics.Metric{{Name: "A", Value: 1}}}
		for i := range metrics.MaxDimensionsPerSet + 3 {
			e.Dimensions = append(e.Dimensions, metrics.Dimension{Name: "d" + strings.Repeat("x", i), Value: "v"})
		}
		out := line(t, e)
		require.NoError(t, metrics.Validate(out, now), "a set of more than 30 dimensions is cut to 30")
	})
	t.Run("a dimension named twice: the first value, once", func(t *testing.T) {
		t.Parallel()
		e := metrics.Entry{
			Time:       now,
			Dimensions: []metrics.Dimension{{Name: metrics.DimChannel, Value: "email"}, {Name: metrics.DimChannel, Value: "webhook"}},
			Metrics:    []metrics.Metric{{Name: "A", Unit: metrics.Count, Value: 1}},
		}
		out := line(t, e)
		require.NoError(t, metrics.Validate(out, now), string(out))
		require.Equal(t, 1, strings.Count(string(out), `"channel":`), string(out))
		require.Contains(t, string(out), `"channel":"email"`)
		require.Contains(t, string(out), `"Dimensions":[["channel"]]`)
	})
	t.Run("no dimension: one empty set", func(t *testing.T) {
		t.Parallel()
		out := line(t, metrics.Entry{Time: now, Metrics: []metrics.Metric{{Name: "A", Value: 3}}})
		require.NoError(t, metrics.Validate(out, now))
		require.Contains(t, string(out), `"Dimensions":[[]]`)
	})
}

func TestValidateRejectsBrokenRules(t *testing.T) {
	t.Parallel()
	now := time.UnixMilli(1796104800000)
	const good = `{"_aws":{"Timestamp":1796104800000,"CloudWatchMetrics":[{"Namespace":"Herald","Dimensions":[["channel"]],"Metrics":[{"Name":"N","Unit":"Count","StorageResolution":60}]}]},"channel":"email","N":1}`
	require.NoError(t, metrics.Validate([]byte(good), now))
	var dims31, members31 strings.Builder
	dims31.WriteString("[")
	for i := range 31 {
		if i > 0 {
			dims31.WriteString(",")
		}
		name := `"d` + strings.Repeat("x", i) + `"`
		dims31.WriteString(name)
		members31.WriteString(`,` + name + `:"v"`)
	}
	dims31.WriteString("]")
	var defs101, members101 strings.Builder
	for i := range 101 {
		if i > 0 {
			defs101.WriteString(",")
		}
		defs101.WriteString(`{"Name":"m` + strings.Repeat("x", i) + `"}`)
		members101.WriteString(`,"m` + strings.Repeat("x", i) + `":1`)
	}
	cases := map[string]string{
		"text before the object":   `INFO ` + good,
		"text after the object":    good + ` trailing`,
		"not an object":            `[1]`,
		"no _aws":                  `{"N":1}`,
		"_aws not an object":       `{"_aws":[],"N":1}`,
		"unknown _aws member":      strings.Replace(good, `"Timestamp"`, `"LogGroup":"x","Timestamp"`, 1),
		"no timestamp":             strings.Replace(good, `"Timestamp":1796104800000,`, ``, 1),
		"timestamp in seconds":     strings.Replace(good, `1796104800000`, `1796104800.5`, 1),
		"timestamp too old":        strings.Replace(good, `1796104800000`, `1794000000000`, 1),
		"timestamp in the future":  strings.Replace(good, `1796104800000`, `1796112100000`, 1),
		"no directives":            `{"_aws":{"Timestamp":1796104800000,"CloudWatchMetrics":[]}}`,
		"unknown directive member": strings.Replace(good, `"Namespace"`, `"Unit":"Count","Namespace"`, 1),
		"no namespace":             strings.Replace(good, `"Namespace":"Herald",`, ``, 1),
		"empty namespace":          strings.Replace(good, `"Herald"`, `""`, 1),
		"AWS namespace":            strings.Replace(good, `"Herald"`, `"AWS/Lambda"`, 1),
		"no dimensions member":     strings.Replace(good, `"Dimensions":[["channel"]],`, ``, 1),
		"dimension not a member":   strings.Replace(good, `[["channel"]]`, `[["outcome"]]`, 1),
		"dimension not a string":   strings.Replace(good, `"channel":"email"`, `"channel":7`, 1),
		"dimension value blank":    strings.Replace(good, `"channel":"email"`, `"channel":" "`, 1),
		"dimension value too long": strings.Replace(good, `"channel":"email"`, `"channel":"`+strings.Repeat("a", 1025)+`"`, 1),
		"dimension value unicode":  strings.Replace(good, `"channel":"email"`, `"channel":"é"`, 1),
		"dimension name colon":     strings.Replace(strings.Replace(good, `[["channel"]]`, `[[":c"]]`, 1), `"channel":"email"`, `":c":"email"`, 1),
		"dimension twice in set":   strings.Replace(good, `[["channel"]]`, `[["channel","channel"]]`, 1),
		"31 dimensions in a set":   strings.Replace(strings.Replace(good, `[["channel"]]`, `[`+dims31.String()+`]`, 1), `"N":1`, `"N":1`+members31.String(), 1),
		"no metrics":               strings.Replace(good, `[{"Name":"N","Unit":"Count","StorageResolution":60}]`, `[]`, 1),
		"101 metrics":              strings.Replace(strings.Replace(good, `{"Name":"N","Unit":"Count","StorageResolution":60}`, defs101.String(), 1), `"N":1`, `"N":1`+members101.String(), 1),
		"unknown unit":             strings.Replace(good, `"Count"`, `"Requests"`, 1),
		"unknown definition key":   strings.Replace(good, `"Unit":"Count"`, `"Unit":"Count","Stat":"p99"`, 1),
		"storage resolution 30":    strings.Replace(good, `"StorageResolution":60`, `"StorageResolution":30`, 1),
		"metric not a member":      strings.Replace(good, `"N":1`, `"M":1`, 1),
		"metric value a string":    strings.Replace(good, `"N":1`, `"N":"1"`, 1),
		"metric value empty array": strings.Replace(good, `"N":1`, `"N":[]`, 1),
		"metric 101 values":        strings.Replace(good, `"N":1`, `"N":[1`+strings.Repeat(",1", 100)+`]`, 1),
		"member twice":             strings.Replace(good, `"N":1`, `"N":1,"N":2`, 1),
		"empty metric name":        strings.Replace(strings.Replace(good, `"Name":"N"`, `"Name":""`, 1), `"N":1`, `"":1`, 1),
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			require.Error(t, metrics.Validate([]byte(in), now), in)
		})
	}
	t.Run("array of values", func(t *testing.T) {
		t.Parallel()
		require.NoError(t, metrics.Validate([]byte(strings.Replace(good, `"N":1`, `"N":[1,2.5]`, 1)), now))
	})
	t.Run("zero now skips the window", func(t *testing.T) {
		t.Parallel()
		require.NoError(t, metrics.Validate([]byte(strings.Replace(good, `1796104800000`, `1000`, 1)), time.Time{}))
	})
}

// TestAttrsWritesManyValuesAndDirectives: one line of two entries is one
// EMF document with two MetricDirectives; a metric of many values is an
// array member, cut at MaxValuesPerMetric, without its non-finite values,
// and left out when none is left.
func TestAttrsWritesManyValuesAndDirectives(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	var many []float64
	for i := range metrics.MaxValuesPerMetric + 20 {
		many = append(many, float64(i))
	}
	outcome := metrics.Entry{
		Time: now,
		Dimensions: []metrics.Dimension{
			{Name: metrics.DimChannel, Value: "webhook"},
			{Name: metrics.DimOutcome, Value: "delivered"},
			{Name: metrics.DimErrorClass, Value: ""},
		},
		Sets: [][]string{{metrics.DimChannel, metrics.DimOutcome}, {metrics.DimChannel, metrics.DimErrorClass}},
		Metrics: []metrics.Metric{
			{Name: metrics.Notifications, Unit: metrics.Count, Value: 3},
			{Name: metrics.DeliveryDuration, Unit: metrics.Milliseconds, Values: []float64{12.5, math.NaN(), 7, math.Inf(-1)}},
			{Name: metrics.AgeAtDelivery, Unit: metrics.Seconds, Values: []float64{math.NaN()}},
			{Name: metrics.ReceiveCountAtDelivery, Unit: metrics.Count, Values: many},
		},
	}
	batch := metrics.Entry{
		Time:       now.Add(time.Hour), // the first entry's time stands
		Dimensions: []metrics.Dimension{{Name: metrics.DimFunction, Value: "deliver"}},
		Metrics: []metrics.Metric{
			{Name: metrics.Paused, Unit: metrics.Count, Value: 0},
			{Name: metrics.Notifications, Unit: metrics.Count, Value: 99}, // named by the first entry: left out
		},
	}
	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).LogAttrs(context.Background(), slog.LevelInfo, "batch", metrics.Attrs(outcome, batch)...)
	out := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	require.NoError(t, metrics.Validate(out, now), string(out))
	var got map[string]any
	require.NoError(t, json.Unmarshal(out, &got))
	require.Equal(t, map[string]any{"Timestamp": float64(now.UnixMilli()), "CloudWatchMetrics": []any{
		map[string]any{"Namespace": "Herald", "Dimensions": []any{[]any{"channel", "outcome"}},
			"Metrics": []any{
				map[string]any{"Name": "Notifications", "Unit": "Count"},
				map[string]any{"Name": "DeliveryDuration", "Unit": "Milliseconds"},
				map[string]any{"Name": "ReceiveCountAtDelivery", "Unit": "Count"},
			}},
		map[string]any{"Namespace": "Herald", "Dimensions": []any{[]any{"function"}},
			"Metrics": []any{map[string]any{"Name": "Paused", "Unit": "Count"}}},
	}}, got["_aws"], "the set naming the absent error_class is dropped, not cut to [channel]")
	require.Equal(t, 3.0, got[metrics.Notifications], "the first entry's value")
	require.Equal(t, []any{12.5, 7.0}, got[metrics.DeliveryDuration])
	require.NotContains(t, got, metrics.AgeAtDelivery, "no finite value: no metric")
	require.Len(t, got[metrics.ReceiveCountAtDelivery], metrics.MaxValuesPerMetric)
	require.Equal(t, "deliver", got[metrics.DimFunction])
	require.Nil(t, metrics.Attrs(), "no entry: nothing")
	require.Nil(t, metrics.Attrs(metrics.Entry{Time: now, Metrics: []metrics.Metric{{Name: "A", Values: []float64{}}}}), "no value: nothing")
}
