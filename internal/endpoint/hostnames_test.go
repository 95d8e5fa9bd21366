package endpoint_test

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/endpoint"
)

// TestValidateRefusesWhatTheSenderRefusesByName: a webhook endpoint's URL
// whose host the webhook sender refuses before anything is resolved — a
// special-use name (localhost, .internal, .local, .test, …), a single
// label the resolver would complete from its search list, a host that the
// IDNA mapping turns into a blocked address (full-width digits and full
// stops), an invalid internationalized name — is refused when the endpoint
// is created, not accepted and then dead-lettered as
// webhook_blocked_destination on every event. The error names the field
// and never quotes the URL's path or query.
func TestValidateRefusesWhatTheSenderRefusesByName(t *testing.T) {
	t.Parallel()
	for _, host := range []string{
		"localhost", "LOCALHOST.", "api.localhost", "billing.internal", "printer.local",
		"hooks.acme.test", "x.invalid", "svc.home.arpa", "intranet", "metadata",
		"１２７．０．０．１", "127。0。0。1", "１６９．２５４．１６９．２５４",
		"a..example",
	} {
		e := valid()
		e.URL = "https://" + host + "/hook?token=tok-s3cret"
		requireField(t, endpoint.Validate(e), "url", "tok-s3cret")
	}
	// Names the sender judges only when it dials them are fine, IDNA ones
	// too; so is a loopback address a deployment allows, written plainly.
	for _, host := range []string{"hooks.acme.example.com", "h.example", "bücher.example", "xn--bcher-kva.example", "hooks.acme.example.com."} {
		e := valid()
		e.URL = "https://" + host + "/hook"
		require.NoError(t, endpoint.Validate(e), host)
	}
	local := endpoint.URLRules{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}
	e := valid()
	e.URL = "https://127.0.0.1:8443/hook"
	require.NoError(t, local.Validate(e))
	e.URL = "https://１２７．０．０．１:8443/hook"
	requireField(t, local.Validate(e), "url") // allowed, but not in dotted decimal: the sender refuses it
	e.URL = "https://localhost:8443/hook"
	requireField(t, local.Validate(e), "url") // a name is judged by name, whatever AllowCIDRs holds
}
