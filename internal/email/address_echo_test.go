package email

import (
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSendErrorHoldsNoAddressFromSES: SES names the identities that failed
// a check in its error message ("…failed the check in region US-EAST-1:
// jana@example.org"); the error text is logged and kept in the dead
// letter's reason, so the addresses in it are written "<address>".
func TestSendErrorHoldsNoAddressFromSES(t *testing.T) {
	t.Parallel()
	msg := "Email address is not verified. The following identities failed the check in region US-EAST-1: jana.novak@mail.example.org, Herald <noreply@example.com>"
	b := setup(t, sesError(400, "MessageRejected", msg), Config{})
	err := b.sender.Send(t.Context(), parse(t, simpleMessage))
	requireOutcome(t, err, true, ClassMessageRejected, 0)
	require.Empty(t, regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+`).FindAllString(err.Error(), -1), "%v", err)
	require.Contains(t, err.Error(), "failed the check in region US-EAST-1: <address>, Herald <<address>>")
}
