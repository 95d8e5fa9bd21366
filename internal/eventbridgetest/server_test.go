package eventbridgetest_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/announce"
	"github.com/heraldhq/herald/internal/eventbridgetest"
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
