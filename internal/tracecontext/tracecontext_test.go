package tracecontext_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/trace"

	"github.com/heraldhq/herald/internal/tracecontext"
)

const (
	tp       = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	xrayTP   = "Root=1-4bf92f35-77b34da6a3ce929d0e0e4736;Parent=00f067aa0ba902b7;Sampled=1"
	xrayElse = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=0"
)

func TestFromTraceParent(t *testing.T) {
	t.Parallel()
	ctx, err := tracecontext.FromTraceParent(context.Background(), " "+tp+" ")
	require.NoError(t, err)
	sc := trace.SpanContextFromContext(ctx)
	require.Equal(t, "4bf92f3577b34da6a3ce929d0e0e4736", sc.TraceID().String())
	require.True(t, sc.IsRemote())
	require.True(t, sc.IsSampled())
	for _, bad := range []string{
		"",
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01", // all-zero trace id
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", // all-zero parent id
		"00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",  // 31 hex
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", // version ff is invalid
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7",    // no flags
		xrayTP, // another format
	} {
		_, err := tracecontext.FromTraceParent(context.Background(), bad)
		require.Error(t, err, bad)
	}
}

func TestTraceParentAndXRayHeaderRoundTrip(t *testing.T) {
	t.Parallel()
	ctx, err := tracecontext.FromTraceParent(context.Background(), tp)
	require.NoError(t, err)
	got, ok := tracecontext.TraceParent(ctx)
	require.True(t, ok)
	require.Equal(t, tp, got)
	x, ok := tracecontext.XRayHeader(ctx)
	require.True(t, ok)
	require.Equal(t, xrayTP, x)
	require.Len(t, got, 55, "MessageAttributeBytes counts a 55-character value")
	require.Equal(t, len("traceparent")+len("String")+55, tracecontext.MessageAttributeBytes)

	_, ok = tracecontext.TraceParent(context.Background())
	require.False(t, ok)
	_, ok = tracecontext.XRayHeader(context.Background())
	require.False(t, ok)
}

func TestLinks(t *testing.T) {
	t.Parallel()
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		name string
		msg  events.SQSMessage
		want []string // trace ids
	}{
		{name: "none", msg: events.SQSMessage{}},
		{name: "traceparent", msg: events.SQSMessage{MessageAttributes: map[string]events.SQSMessageAttribute{"traceparent": {StringValue: str(tp)}}}, want: []string{"4bf92f3577b34da6a3ce929d0e0e4736"}},
		{name: "AWSTraceHeader", msg: events.SQSMessage{Attributes: map[string]string{"AWSTraceHeader": xrayElse}}, want: []string{"5759e988bd862e3fe1be46a994272793"}},
		{name: "both, one trace", msg: events.SQSMessage{
			MessageAttributes: map[string]events.SQSMessageAttribute{"traceparent": {StringValue: str(tp)}},
			Attributes:        map[string]string{"AWSTraceHeader": xrayTP},
		}, want: []string{"4bf92f3577b34da6a3ce929d0e0e4736"}},
		{name: "both, two traces", msg: events.SQSMessage{
			MessageAttributes: map[string]events.SQSMessageAttribute{"traceparent": {StringValue: str(tp)}},
			Attributes:        map[string]string{"AWSTraceHeader": xrayElse},
		}, want: []string{"4bf92f3577b34da6a3ce929d0e0e4736", "5759e988bd862e3fe1be46a994272793"}},
		{name: "malformed ignored", msg: events.SQSMessage{
			MessageAttributes: map[string]events.SQSMessageAttribute{"traceparent": {StringValue: str("00-zz-00f067aa0ba902b7-01")}},
			Attributes:        map[string]string{"AWSTraceHeader": "Root=nonsense"},
		}},
		{name: "binary attribute ignored", msg: events.SQSMessage{MessageAttributes: map[string]events.SQSMessageAttribute{"traceparent": {BinaryValue: []byte(tp)}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			links := tracecontext.Links(&tc.msg)
			var got []string
			for _, l := range links {
				got = append(got, l.SpanContext.TraceID().String())
			}
			require.Equal(t, tc.want, got)
		})
	}
}

func TestInjectHeader(t *testing.T) {
	t.Parallel()
	h := http.Header{}
	tracecontext.InjectHeader(context.Background(), h)
	require.Empty(t, h, "no span, no header")

	ctx, err := tracecontext.FromTraceParent(context.Background(), tp)
	require.NoError(t, err)
	h.Set("traceparent", "00-11111111111111111111111111111111-2222222222222222-01")
	tracecontext.InjectHeader(ctx, h)
	require.Equal(t, []string{tp}, h.Values("traceparent"), "herald's span replaces a value the producer set")
}

// TestNoSpanCostsNothing: without a span (tracing off), the calls on every
// record's and every POST's path allocate nothing.
func TestNoSpanCostsNothing(t *testing.T) {
	h := http.Header{}
	ctx := context.Background()
	allocs := testing.AllocsPerRun(100, func() {
		tracecontext.InjectHeader(ctx, h)
		_, _ = tracecontext.TraceParent(ctx)
		_, _ = tracecontext.XRayHeader(ctx)
	})
	require.Zero(t, allocs)
}
