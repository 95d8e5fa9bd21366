package eventbridgetest_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/announce"
	"github.com/heraldhq/herald/internal/testkit/eventbridgetest"
)

func entry(detail string) types.PutEventsRequestEntry {
	return types.PutEventsRequestEntry{Source: aws.String("herald"), DetailType: aws.String("t"), Detail: aws.String(detail)}
}

// TestPutEventsRejectsWhatEventBridgeRejects: no entry, 11 entries and
// entries over 256 KB fail the call; an entry without a field, with a
// detail that is not a JSON object or on an unknown bus is refused alone.
func TestPutEventsRejectsWhatEventBridgeRejects(t *testing.T) {
	t.Parallel()
	s := eventbridgetest.New(t)
	c := s.Client()
	ctx := context.Background()
	code := func(err error) string {
		var ae smithy.APIError
		require.True(t, errors.As(err, &ae), "%v", err)
		return ae.ErrorCode()
	}
	_, err := c.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{}})
	require.Equal(t, "ValidationException", code(err))
	var eleven []types.PutEventsRequestEntry
	for range eventbridgetest.MaxEntries + 1 {
		eleven = append(eleven, entry(`{}`))
	}
	_, err = c.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: eleven})
	require.Equal(t, "ValidationException", code(err))
	out, err := c.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: eleven[:10]})
	require.NoError(t, err)
	require.Zero(t, out.FailedEntryCount)
	big := `{"a":"` + strings.Repeat("x", eventbridgetest.MaxRequestBytes) + `"}`
	_, err = c.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{entry(big)}})
	require.Equal(t, "ValidationException", code(err))

	noSource := entry(`{}`)
	noSource.Source = nil
	unknownBus := entry(`{}`)
	unknownBus.EventBusName = aws.String("nope")
	out, err = c.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{
		noSource, entry(`[1]`), entry(`not json`), entry(`null`), unknownBus, entry(`{"ok":true}`),
	}})
	require.NoError(t, err)
	require.Equal(t, int32(5), out.FailedEntryCount)
	var codes []string
	for _, e := range out.Entries {
		codes = append(codes, aws.ToString(e.ErrorCode))
	}
	require.Equal(t, []string{"InvalidArgument", "MalformedDetail", "MalformedDetail", "MalformedDetail", "ResourceNotFoundException", ""}, codes)
	require.Len(t, s.Events(), 11)
}

// TestPublishSaysWhyAnEntryWasRefused: a refused entry is an error naming
// EventBridge's code; an accepted one lands on the named bus.
func TestPublishSaysWhyAnEntryWasRefused(t *testing.T) {
	t.Parallel()
	s := eventbridgetest.New(t)
	p, err := announce.New(s.Client(), "ops")
	require.NoError(t, err)
	err = p.Publish(context.Background(), announce.DestinationRecovered, announce.Event{Origin: "https://hooks.example.com"})
	require.ErrorContains(t, err, "ResourceNotFoundException")
	s.AddBus("ops")
	require.NoError(t, p.Publish(context.Background(), announce.DestinationRecovered, announce.Event{Origin: "https://hooks.example.com", State: "closed"}))
	evs := s.Events()
	require.Len(t, evs, 1)
	require.Equal(t, "ops", evs[0].Bus)
	require.Equal(t, "destination.recovered", evs[0].DetailType)
	require.Equal(t, "https://hooks.example.com", evs[0].Detail["origin"])
	_, err = announce.New(nil, "ops")
	require.Error(t, err)
}

// TestPutEventsSizesEntriesAsEventBridgeDoes: the entries' Source,
// DetailType, Detail, Resources and a Time (14 bytes) count towards
// MaxRequestBytes, across entries; exactly the limit is accepted, a byte
// more refused.
func TestPutEventsSizesEntriesAsEventBridgeDoes(t *testing.T) {
	t.Parallel()
	s := eventbridgetest.New(t)
	c := s.Client()
	ctx := context.Background()
	// detail is a JSON object of n bytes.
	detail := func(n int) string { return `{"a":"` + strings.Repeat("x", n-8) + `"}` }
	fixed := len("herald") + len("t")
	put := func(es ...types.PutEventsRequestEntry) error {
		_, err := c.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: es})
		return err
	}
	require.NoError(t, put(entry(detail(eventbridgetest.MaxRequestBytes-fixed))), "exactly the limit")
	require.ErrorContains(t, put(entry(detail(eventbridgetest.MaxRequestBytes-fixed+1))), "ValidationException")

	half := eventbridgetest.MaxRequestBytes / 2
	require.NoError(t, put(entry(detail(half-fixed)), entry(detail(half-fixed))), "two entries filling it")
	require.ErrorContains(t, put(entry(detail(half-fixed)), entry(detail(half-fixed+1))), "ValidationException", "the entries' sizes add up")

	timed := entry(detail(eventbridgetest.MaxRequestBytes - fixed - 14))
	timed.Time = aws.Time(time.Unix(1_700_000_000, 0))
	require.NoError(t, put(timed), "a Time counts 14 bytes")
	timed.Detail = aws.String(detail(eventbridgetest.MaxRequestBytes - fixed - 13))
	require.ErrorContains(t, put(timed), "ValidationException")

	res := entry(detail(eventbridgetest.MaxRequestBytes - fixed - 10))
	res.Resources = []string{"arn:a", "arn:b"}
	require.NoError(t, put(res), "resources count their bytes")
	res.Resources = []string{"arn:a", "arn:bc"}
	require.ErrorContains(t, put(res), "ValidationException")
	require.Equal(t, 5, len(s.Events()), "1 + 2 + 1 + 1 accepted")
}

// TestPutEventsBusesAndIds: an entry names its bus by name or ARN (none:
// the default bus); each accepted entry gets its own event id and the
// refused ones none.
func TestPutEventsBusesAndIds(t *testing.T) {
	t.Parallel()
	s := eventbridgetest.New(t)
	s.AddBus("ops")
	c := s.Client()
	byArn, byName, refused := entry(`{"n":1}`), entry(`{"n":2}`), entry(`{"n":3}`)
	byArn.EventBusName = aws.String("arn:aws:events:us-east-1:123456789012:event-bus/ops")
	byName.EventBusName = aws.String("ops")
	refused.EventBusName = aws.String("arn:aws:events:us-east-1:123456789012:event-bus/gone")
	out, err := c.PutEvents(context.Background(), &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{byArn, refused, byName, entry(`{"n":4}`)}})
	require.NoError(t, err)
	require.Equal(t, int32(1), out.FailedEntryCount)
	require.Equal(t, "Event bus gone does not exist.", aws.ToString(out.Entries[1].ErrorMessage))
	ids := map[string]bool{}
	for i, e := range out.Entries {
		if i == 1 {
			require.Nil(t, e.EventId)
			continue
		}
		require.NotEmpty(t, aws.ToString(e.EventId))
		ids[aws.ToString(e.EventId)] = true
	}
	require.Len(t, ids, 3, "distinct ids")
	var buses []string
	for _, e := range s.Events() {
		buses = append(buses, e.Bus)
	}
	require.Equal(t, []string{"ops", "ops", "default"}, buses)

	// An id names the event's place among all the server's events, so a
	// second call's ids differ from the first's.
	again, err := c.PutEvents(context.Background(), &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{entry(`{}`)}})
	require.NoError(t, err)
	require.False(t, ids[aws.ToString(again.Entries[0].EventId)], "a new id")
}

// TestFailInjectsServerErrors: Fail(n) makes exactly the next n calls
// answer 500 InternalException, then calls succeed again; a request that is
// not PutEvents, or whose body is not JSON, is refused.
func TestFailInjectsServerErrors(t *testing.T) {
	t.Parallel()
	s := eventbridgetest.New(t)
	c := s.Client()
	put := func() error {
		_, err := c.PutEvents(context.Background(), &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{entry(`{}`)}})
		return err
	}
	s.Fail(2)
	for range 2 {
		err := put()
		var ae smithy.APIError
		require.ErrorAs(t, err, &ae)
		require.Equal(t, "InternalException", ae.ErrorCode())
		require.ErrorContains(t, err, "StatusCode: 500")
	}
	require.NoError(t, put())
	require.Len(t, s.Events(), 1)

	for name, tc := range map[string]struct{ target, ctype, body, code string }{
		"another action":  {"AWSEvents.PutRule", "application/x-amz-json-1.1", `{}`, "UnknownOperationException"},
		"JSON 1.0":        {"AWSEvents.PutEvents", "application/x-amz-json-1.0", `{"Entries":[]}`, "UnknownOperationException"},
		"body not JSON":   {"AWSEvents.PutEvents", "application/x-amz-json-1.1", `{"Entries":`, "SerializationException"},
		"entries missing": {"AWSEvents.PutEvents", "application/x-amz-json-1.1", `{}`, "ValidationException"},
	} {
		req, err := http.NewRequest(http.MethodPost, s.URL(), strings.NewReader(tc.body))
		require.NoError(t, err)
		req.Header.Set("X-Amz-Target", tc.target)
		req.Header.Set("Content-Type", tc.ctype)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		var e struct {
			Type string `json:"__type"`
		}
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&e))
		require.NoError(t, resp.Body.Close())
		require.Equal(t, http.StatusBadRequest, resp.StatusCode, name)
		require.Equal(t, tc.code, e.Type, name)
	}
}

// TestRefuseAnswersPerEntry: refusals go to entries one by one, across
// calls, as EventBridge refuses entries of one call (API Reference,
// PutEventsResultEntry): the refused one has the ErrorCode and no EventId
// and FailedEntryCount counts it; the others of the call are accepted.
func TestRefuseAnswersPerEntry(t *testing.T) {
	t.Parallel()
	s := eventbridgetest.New(t)
	c := s.Client()
	ctx := context.Background()
	s.Refuse(eventbridgetest.CodeThrottling, "", eventbridgetest.CodeInternalFailure, eventbridgetest.CodeThrottling)
	out, err := c.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{entry(`{"n":1}`), entry(`{"n":2}`), entry(`{"n":3}`)}})
	require.NoError(t, err)
	require.Equal(t, int32(2), out.FailedEntryCount)
	require.Equal(t, eventbridgetest.CodeThrottling, aws.ToString(out.Entries[0].ErrorCode))
	require.Nil(t, out.Entries[0].EventId)
	require.NotEmpty(t, aws.ToString(out.Entries[1].EventId))
	require.Equal(t, eventbridgetest.CodeInternalFailure, aws.ToString(out.Entries[2].ErrorCode))
	out, err = c.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []types.PutEventsRequestEntry{entry(`{"n":4}`), entry(`{"n":5}`)}})
	require.NoError(t, err)
	require.Equal(t, int32(1), out.FailedEntryCount, "the last refusal, then accepted as usual")
	require.Equal(t, eventbridgetest.CodeThrottling, aws.ToString(out.Entries[0].ErrorCode))
	evs := s.Events()
	require.Len(t, evs, 2)
	require.Equal(t, float64(2), evs[0].Detail["n"])
	require.Equal(t, float64(5), evs[1].Detail["n"])
	require.Equal(t, 2, s.Calls())
}
