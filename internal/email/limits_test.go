package email

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
)

// TestIDTagValueKeepsTheSESAlphabet: every character SES allows in a tag
// value other than "_" (A-Z a-z 0-9 -) passes unchanged, the ends of each
// range included; the characters just outside each range are escaped.
func TestIDTagValueKeepsTheSESAlphabet(t *testing.T) {
	t.Parallel()
	require.Equal(t, "AZaz09-", IDTagValue("AZaz09-"))
	for _, r := range []rune{'@', '[', '`', '{', '/', ';'} { // neighbours of A–Z, a–z, 0–9
		require.Equal(t, "x_u"+string("0123456789ABCDEF"[r>>4])+string("0123456789ABCDEF"[r&15])+"_", IDTagValue("x"+string(r)), string(r))
	}
}

// TestValidateSendingPausedDelayRange: the delay lies in (0, 12 h], the
// SQS visibility timeout limit; zero is out of range.
func TestValidateSendingPausedDelayRange(t *testing.T) {
	t.Parallel()
	require.ErrorContains(t, Config{SendingPausedDelay: 0}.Validate(), "SendingPausedDelay: 0s is out of range")
	require.NoError(t, Config{SendingPausedDelay: time.Nanosecond}.Validate())
	require.NoError(t, Config{SendingPausedDelay: 12 * time.Hour}.Validate())
	require.Error(t, Config{SendingPausedDelay: 12*time.Hour + time.Nanosecond}.Validate())
}

// TestSendStatusBoundaries: an SES answer whose body is no SES error
// document is classified by its status alone, at the edges of each range:
// 2xx delivered, 300 unknown (retried), 400 a permanent client error, 499
// too, 500 a retried server error.
func TestSendStatusBoundaries(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		status    int
		delivered bool
		permanent bool
		class     delivery.Class
	}{
		{status: 200, delivered: true},
		{status: 299, delivered: true},
		{status: 300, class: delivery.ClassUnknown},
		{status: 399, class: delivery.ClassUnknown},
		{status: 400, permanent: true, class: ClassClientError},
		{status: 499, permanent: true, class: ClassClientError},
		{status: 500, class: ClassServerError},
		{status: 503, class: ClassServerError},
	} {
		b := setup(t, func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(tc.status)
			fmt.Fprint(w, "not an SES document")
		}, Config{}, func(o *sesv2.Options) { o.RetryMaxAttempts = 1 })
		err := b.sender.Send(t.Context(), parse(t, simpleMessage))
		if tc.delivered {
			require.NoError(t, err, "status %d", tc.status)
			continue
		}
		requireOutcome(t, err, tc.permanent, tc.class, 0)
	}
}
