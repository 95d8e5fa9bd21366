package email

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
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
