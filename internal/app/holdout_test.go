package app_test

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/stretchr/testify/require"
)

// casesDir holds the sample notifications and their expected outcomes.
const casesDir = "../../testdata/cases"

// TestDeliverHoldOutCases: the sample notifications (contract v1) through
// the deliver function as app wires it — real email and webhook senders,
// endpointsend and tracing around them, the circuit and delivered-once
// as middleware, the store on the DynamoDB fake — get the outcome
// expected.tsv names on a first receive (chat samples, which need the
// services' receivers, are make demo's); their copies, received again,
// are duplicates on the channels delivered once by default (email), sent
// again on the others (webhook: its receiver deduplicates on webhook-id),
// dropped or dead-lettered as before.
func TestDeliverHoldOutCases(t *testing.T) {
	t.Parallel()
	r := newRig(t, nil)
	r.ses.AddTemplate("password-reset")

	f, err := os.Open(filepath.Join(casesDir, "expected.tsv"))
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Scan() // header
	want := map[string]string{}
	var files []string
	for sc.Scan() {
		file, outcome, ok := strings.Cut(sc.Text(), "\t")
		require.True(t, ok, sc.Text())
		if strings.HasPrefix(file, "chat-") {
			continue
		}
		want[file] = outcome
		files = append(files, file)
	}
	require.NoError(t, sc.Err())
	require.GreaterOrEqual(t, len(files), 10, "every hold-out sample")

	bodies := map[string]string{}
	round := func(prefix, receives string) {
		var recs []events.SQSMessage
		for _, file := range files {
			raw, err := os.ReadFile(filepath.Join(casesDir, file))
			require.NoError(t, err)
			body := strings.ReplaceAll(string(raw), "https://hooks.example.test", r.hook.URL)
			bodies[file] = body
			recs = append(recs, sqsRecord(prefix+file, body, receives))
		}
		require.Empty(t, r.handle(t, context.Background(), recs...), "no record of the samples is retried")
	}

	round("first-", "1")
	lines, _ := r.lines(t)
	letters := r.deadLetters(t)
	for _, file := range files {
		l, outcome := lines["first-"+file], want[file]
		switch {
		case strings.HasPrefix(outcome, "delivered"):
			require.Equal(t, "delivered", l["outcome"], "%s: %v", file, l)
		case strings.HasPrefix(outcome, "dropped"):
			require.Equal(t, "dropped", l["outcome"], "%s: %v", file, l)
		case strings.HasPrefix(outcome, "dead-lettered"):
			require.Equal(t, "dead_lettered", l["outcome"], "%s: %v", file, l)
			named := outcome[strings.LastIndex(outcome, " ")+1:]
			if strings.Contains(outcome, "invalid JSON") {
				named = "invalid JSON"
			}
			reason, ok := letters[bodies[file]]
			require.True(t, ok, "%s: its dead letter", file)
			require.Contains(t, reason.Error, named, file)
		default:
			t.Fatalf("%s: outcome %q not known to this test", file, outcome)
		}
	}
	require.Len(t, r.ses.Emails(), 3, "the three emails, once each")
	require.Equal(t, 1, r.postsOf("evt_2Yq8mT4vN1xK7pR3sW9zB6cD"))
	require.Zero(t, r.postsOf("evt_stale_0001"), "an expired notification makes no request")

	round("copy-", "2")
	lines, _ = r.lines(t)
	for _, file := range files {
		l := lines["copy-"+file]
		switch first := lines["first-"+file]["outcome"]; {
		case strings.HasPrefix(file, "email-"):
			require.Equal(t, "duplicate", l["outcome"], "%s: email is delivered once: %v", file, l)
			require.NotEmpty(t, l["delivered_at"], file)
		default:
			require.Equal(t, first, l["outcome"], "%s: as on its first receive: %v", file, l)
		}
	}
	require.Len(t, r.ses.Emails(), 3, "no email twice")
	require.Equal(t, 2, r.postsOf("evt_2Yq8mT4vN1xK7pR3sW9zB6cD"), "a webhook is not among the channels delivered once by default")
	require.Zero(t, r.batchSum(t, "StoreErrors"))
}
