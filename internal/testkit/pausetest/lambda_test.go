package pausetest_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/testkit/pausetest"
)

const (
	fnArn    = "arn:aws:lambda:us-east-1:123456789012:function:herald-deliver"
	otherFn  = "arn:aws:lambda:us-east-1:123456789012:function:herald-deliver-2"
	queueArn = "arn:aws:sqs:us-east-1:123456789012:herald-notifications"
	otherQ   = "arn:aws:sqs:us-east-1:123456789012:other"
)

// code is the error code of a Lambda API error, as the SDK reads it from
// X-Amzn-ErrorType.
func code(t *testing.T, err error) string {
	t.Helper()
	var ae smithy.APIError
	require.ErrorAs(t, err, &ae)
	return ae.ErrorCode()
}

// list is one ListEventSourceMappings page: the UUIDs and the NextMarker.
func list(t *testing.T, c *lambda.Client, in *lambda.ListEventSourceMappingsInput) ([]string, string) {
	t.Helper()
	out, err := c.ListEventSourceMappings(context.Background(), in)
	require.NoError(t, err)
	var ids []string
	for _, m := range out.EventSourceMappings {
		ids = append(ids, aws.ToString(m.UUID))
	}
	return ids, aws.ToString(out.NextMarker)
}

func state(t *testing.T, c *lambda.Client, uuid string) string {
	t.Helper()
	out, err := c.ListEventSourceMappings(context.Background(), &lambda.ListEventSourceMappingsInput{})
	require.NoError(t, err)
	for _, m := range out.EventSourceMappings {
		if aws.ToString(m.UUID) == uuid {
			return aws.ToString(m.State)
		}
	}
	t.Fatalf("no mapping %s", uuid)
	return ""
}

func update(c *lambda.Client, uuid string, enabled bool) (*lambda.UpdateEventSourceMappingOutput, error) {
	return c.UpdateEventSourceMapping(context.Background(), &lambda.UpdateEventSourceMappingInput{UUID: aws.String(uuid), Enabled: aws.Bool(enabled)})
}

// TestListFiltersAsLambdaDoes: FunctionName matches the function's ARN or
// its name (not a name it merely ends with), EventSourceArn the source
// exactly, both together each; no filter lists every mapping.
func TestListFiltersAsLambdaDoes(t *testing.T) {
	t.Parallel()
	w := &pausetest.Lambda{Mappings: []pausetest.Mapping{
		{UUID: "a", FunctionArn: fnArn, EventSourceArn: queueArn, State: "Enabled"},
		{UUID: "b", FunctionArn: fnArn, EventSourceArn: otherQ, State: "Enabled"},
		{UUID: "c", FunctionArn: otherFn, EventSourceArn: queueArn, State: "Enabled"},
	}}
	c := pausetest.Client(t, w)
	for name, tc := range map[string]struct {
		in   lambda.ListEventSourceMappingsInput
		want []string
	}{
		"no filter":       {want: []string{"a", "b", "c"}},
		"function name":   {in: lambda.ListEventSourceMappingsInput{FunctionName: aws.String("herald-deliver")}, want: []string{"a", "b"}},
		"function ARN":    {in: lambda.ListEventSourceMappingsInput{FunctionName: aws.String(otherFn)}, want: []string{"c"}},
		"name suffix":     {in: lambda.ListEventSourceMappingsInput{FunctionName: aws.String("deliver")}},
		"source":          {in: lambda.ListEventSourceMappingsInput{EventSourceArn: aws.String(queueArn)}, want: []string{"a", "c"}},
		"function+source": {in: lambda.ListEventSourceMappingsInput{FunctionName: aws.String("herald-deliver"), EventSourceArn: aws.String(queueArn)}, want: []string{"a"}},
	} {
		got, next := list(t, c, &tc.in)
		require.Equal(t, tc.want, got, name)
		require.Empty(t, next, name)
	}
}

// TestListPages: pages of PageSize mappings (100 when PageSize is not
// set), NextMarker only while more remain, and a Marker that is not an
// offset into the list refused as Lambda refuses an invalid one.
func TestListPages(t *testing.T) {
	t.Parallel()
	w := &pausetest.Lambda{PageSize: 2}
	for i := range 5 {
		w.Mappings = append(w.Mappings, pausetest.Mapping{UUID: fmt.Sprint(i), FunctionArn: fnArn, EventSourceArn: queueArn, State: "Enabled"})
	}
	c := pausetest.Client(t, w)
	var pages [][]string
	marker := (*string)(nil)
	for {
		ids, next := list(t, c, &lambda.ListEventSourceMappingsInput{Marker: marker})
		pages = append(pages, ids)
		if next == "" {
			break
		}
		marker = aws.String(next)
	}
	require.Equal(t, [][]string{{"0", "1"}, {"2", "3"}, {"4"}}, pages)

	w.PageSize = 5
	ids, next := list(t, c, &lambda.ListEventSourceMappingsInput{})
	require.Len(t, ids, 5, "a page exactly as long as the list")
	require.Empty(t, next, "and no marker after it")
	ids, _ = list(t, c, &lambda.ListEventSourceMappingsInput{Marker: aws.String("0")})
	require.Len(t, ids, 5, "a marker of 0: the first page")
	ids, next = list(t, c, &lambda.ListEventSourceMappingsInput{Marker: aws.String("5")})
	require.Empty(t, ids, "a marker at the end: an empty page")
	require.Empty(t, next)

	for _, bad := range []string{"6", "-1", "x"} {
		_, err := c.ListEventSourceMappings(context.Background(), &lambda.ListEventSourceMappingsInput{Marker: aws.String(bad)})
		require.Equal(t, "InvalidParameterValueException", code(t, err), bad)
	}

	for _, size := range []int{0, -1} {
		w.PageSize = size
		for len(w.Mappings) < 101 {
			w.Mappings = append(w.Mappings, pausetest.Mapping{UUID: fmt.Sprint(len(w.Mappings)), FunctionArn: fnArn, EventSourceArn: queueArn})
		}
		ids, next = list(t, c, &lambda.ListEventSourceMappingsInput{})
		require.Len(t, ids, 100, "PageSize %d: Lambda's default of 100", size)
		require.Equal(t, "100", next)
	}
}

// TestUpdateSettlesAtTheNextList: an update answers 202 with the mapping
// Enabling or Disabling, records the UUID, and the next list sees it
// Enabled or Disabled; a mapping no update moved keeps its state.
func TestUpdateSettlesAtTheNextList(t *testing.T) {
	t.Parallel()
	w := &pausetest.Lambda{Mappings: []pausetest.Mapping{
		{UUID: "a", FunctionArn: fnArn, EventSourceArn: queueArn, State: "Enabled"},
		{UUID: "b", FunctionArn: fnArn, EventSourceArn: otherQ, State: "Disabled"},
		{UUID: "c", FunctionArn: fnArn, EventSourceArn: otherQ, State: "Enabling"},
	}}
	c := pausetest.Client(t, w)
	out, err := update(c, "a", false)
	require.NoError(t, err)
	require.Equal(t, "a", aws.ToString(out.UUID))
	require.Equal(t, "Disabling", aws.ToString(out.State))
	require.Equal(t, queueArn, aws.ToString(out.EventSourceArn))
	require.Equal(t, fnArn, aws.ToString(out.FunctionArn))
	out, err = update(c, "b", true)
	require.NoError(t, err)
	require.Equal(t, "Enabling", aws.ToString(out.State))
	require.Equal(t, []string{"a", "b"}, w.Updates)

	require.Equal(t, "Disabled", state(t, c, "a"))
	require.Equal(t, "Enabled", state(t, c, "b"))
	require.Equal(t, "Enabling", state(t, c, "c"), "no update of ours: it stays in its state")

	// A transition that leads nowhere settled (Updating) stays as it is.
	w.Mu.Lock()
	w.Transition("a", "Updating")
	w.Mu.Unlock()
	require.Equal(t, "Updating", state(t, c, "a"))
}

// TestUpdateRejectsWhatLambdaRejects: an update without Enabled, of an
// unknown UUID, of a denied UUID, of a mapping in a transitional state, and
// one that BeforeUpdate says conflicts, each with Lambda's error code and
// status; none is recorded as an update.
func TestUpdateRejectsWhatLambdaRejects(t *testing.T) {
	t.Parallel()
	w := &pausetest.Lambda{Deny: map[string]bool{"denied": true}, Mappings: []pausetest.Mapping{
		{UUID: "a", FunctionArn: fnArn, EventSourceArn: queueArn, State: "Enabled"},
		{UUID: "denied", FunctionArn: fnArn, EventSourceArn: queueArn, State: "Enabled"},
	}}
	for _, st := range []string{"Creating", "Enabling", "Disabling", "Updating", "Deleting"} {
		w.Mappings = append(w.Mappings, pausetest.Mapping{UUID: st, FunctionArn: fnArn, EventSourceArn: queueArn, State: st})
	}
	c := pausetest.Client(t, w)
	status := func(err error) int {
		var re interface{ HTTPStatusCode() int }
		require.ErrorAs(t, err, &re)
		return re.HTTPStatusCode()
	}

	_, err := c.UpdateEventSourceMapping(context.Background(), &lambda.UpdateEventSourceMappingInput{UUID: aws.String("a"), BatchSize: aws.Int32(5)})
	require.Equal(t, "InvalidParameterValueException", code(t, err), "no Enabled")
	require.Equal(t, http.StatusBadRequest, status(err))

	_, err = update(c, "nope", false)
	var nf *types.ResourceNotFoundException
	require.ErrorAs(t, err, &nf)
	require.Equal(t, http.StatusNotFound, status(err))

	_, err = update(c, "denied", false)
	require.Equal(t, "AccessDeniedException", code(t, err))
	require.Equal(t, http.StatusForbidden, status(err))

	for _, st := range []string{"Creating", "Enabling", "Disabling", "Updating", "Deleting"} {
		_, err = update(c, st, true)
		var inUse *types.ResourceInUseException
		require.ErrorAs(t, err, &inUse, st)
		require.Contains(t, err.Error(), "State: "+st)
		require.Equal(t, http.StatusBadRequest, status(err))
	}

	var seen []string
	w.BeforeUpdate = func(uuid string) string {
		seen = append(seen, uuid)
		if uuid == "a" {
			return "ResourceConflictException"
		}
		return ""
	}
	_, err = update(c, "a", false)
	var conflict *types.ResourceConflictException
	require.ErrorAs(t, err, &conflict)
	require.Equal(t, http.StatusConflict, status(err))
	require.Empty(t, w.Updates, "no refused update is recorded")

	_, err = update(c, "denied", false)
	require.Equal(t, "AccessDeniedException", code(t, err), "BeforeUpdate answering nothing: the update goes on")
	require.Equal(t, []string{"a", "denied"}, seen)
	require.Equal(t, "Enabled", state(t, c, "a"))
}

// TestBeforeUpdatePlaysAnotherEnvironment: a Transition made in
// BeforeUpdate is seen by the update (ResourceInUseException) and settled
// by the next list.
func TestBeforeUpdatePlaysAnotherEnvironment(t *testing.T) {
	t.Parallel()
	w := &pausetest.Lambda{Mappings: []pausetest.Mapping{
		{UUID: "a", FunctionArn: fnArn, EventSourceArn: queueArn, State: "Enabled"},
	}}
	w.BeforeUpdate = func(uuid string) string {
		w.Transition(uuid, "Disabling")
		return ""
	}
	c := pausetest.Client(t, w)
	_, err := update(c, "a", false)
	require.Equal(t, "ResourceInUseException", code(t, err))
	require.Equal(t, "Disabled", state(t, c, "a"))
}

// TestAnswersOnlyTheMappingCalls: another path or method is a 400, not
// an answer the SDK could take for a mapping.
func TestAnswersOnlyTheMappingCalls(t *testing.T) {
	t.Parallel()
	w := &pausetest.Lambda{Mappings: []pausetest.Mapping{{UUID: "a", FunctionArn: fnArn, EventSourceArn: queueArn, State: "Enabled"}}}
	c := pausetest.Client(t, w)
	_, err := c.GetFunction(context.Background(), &lambda.GetFunctionInput{FunctionName: aws.String("herald-deliver")})
	require.ErrorContains(t, err, "StatusCode: 400")
	_, err = c.GetEventSourceMapping(context.Background(), &lambda.GetEventSourceMappingInput{UUID: aws.String("a")})
	require.ErrorContains(t, err, "StatusCode: 400", "GET of one mapping is not answered")
	_, err = c.DeleteEventSourceMapping(context.Background(), &lambda.DeleteEventSourceMappingInput{UUID: aws.String("a")})
	require.ErrorContains(t, err, "StatusCode: 400")
	require.Len(t, w.Mappings, 1)
}
