package notification_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/notification"
)

// TestMailboxProblemDoesNotQuoteTheAddress: the reason of an invalid
// mailbox goes to the logs and the dead letter's herald.reason, which must
// hold no email address; net/mail's errors quote the rest of the text they
// could not read ("expected single address, got \", bob@…\""), so the
// problem says what is wrong without it.
func TestMailboxProblemDoesNotQuoteTheAddress(t *testing.T) {
	t.Parallel()
	for _, to := range []string{
		`alice@example.com, bob@secret.example`,    // two addresses in one string
		`alice@example.com bob@secret.example`,     // trailing text
		`bob@[999.1.2.3.secret]`,                   // invalid domain literal
		`\"bob@secret.example\" <x@example.com> y`, // quoted display name, then text
	} {
		body := `{"version":1,"id":"n1","channel":"email","email":{"from":"a@example.com","to":["` + to + `"],"subject":"s","text":"t"}}`
		_, err := notification.Parse([]byte(body))
		require.Error(t, err, to)
		require.Contains(t, err.Error(), "email.to[0]: not an RFC 5322 mailbox", to)
		require.NotContains(t, err.Error(), "secret.example", "the problem quotes the address: %v", err)
		require.NotContains(t, err.Error(), "999.1.2.3", "the problem quotes the address: %v", err)
		require.False(t, strings.Contains(err.Error(), "bob"), "the problem quotes the address: %v", err)
	}
}

// TestInvalidErrorTextHoldsNoAddress: the text of an InvalidError is
// logged and kept in the dead letter's reason, so an address wherever a
// producer put one (a member name in the payload, an unknown member, a
// header name, the channel) is written "<address>" there; the Problem's
// Field keeps the exact path for the producer.
func TestInvalidErrorTextHoldsNoAddress(t *testing.T) {
	t.Parallel()
	const addr = "jana.novak@mail.example.org"
	webhook := func(members string) string {
		return `{"version":1,"id":"n-2","channel":"webhook","webhook":{"url":"https://hooks.example.com/x","event_type":"e"` + members + `}}`
	}
	for _, c := range []struct{ body, field string }{
		{webhook(`,"payload":{"users":{"` + addr + `":1,"` + addr + `":2}}`), "webhook.payload.users." + addr},
		{webhook(`,"payload":{},"` + addr + `":1`), "webhook." + addr},
		{webhook(`,"payload":{},"headers":{"` + addr + `":"x"}`), "webhook.headers." + addr},
		{`{"version":1,"id":"n","channel":"` + addr + `"}`, "channel"},
		{`{"version":1,"id":"n","channel":"email","email":{"to":["b@example.org"],"subject":"s","text":"t","tags":{"` + addr + `":"v"}}}`, "email.tags." + addr},
	} {
		_, err := notification.Parse([]byte(c.body))
		require.Error(t, err)
		require.NotContains(t, err.Error(), addr)
		require.NotContains(t, err.Error(), "jana.novak")
		require.Contains(t, err.Error(), "<address>")
		var inv *notification.InvalidError
		require.ErrorAs(t, err, &inv)
		require.Equal(t, c.field, inv.Problems[0].Field)
	}
}
