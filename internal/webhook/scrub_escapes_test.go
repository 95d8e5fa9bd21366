package webhook_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/stretchr/testify/require"
)

// phpJSONString is a string as PHP's json_encode writes it by default, and
// Python's json.dumps (ensure_ascii) too for the non-ASCII part: "/" as
// "\/", every character beyond ASCII as \u escapes (UTF-16, lower-case hex).
func phpJSONString(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '/':
			b.WriteString(`\/`)
		case r == '"' || r == '\\':
			b.WriteString(`\` + string(r))
		case r > 0x7e:
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&b, `\u%04x`, u)
			}
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestSendScrubsCredentialsEchoedAsPHPOrPythonJSON: a receiver that echoes
// its request headers as PHP's json_encode or Python's json.dumps write
// them by default (a common error page) gets no credential into the error
// text: base64 tokens and signatures hold "/", written "\/", and header
// values may hold non-ASCII characters, written as \u escapes.
func TestSendScrubsCredentialsEchoedAsPHPOrPythonJSON(t *testing.T) {
	t.Parallel()
	const (
		apiKey = "dGhpcy9pcy9hL2tleQ/+abc/xyz=="
		token  = "clé-secrète/42"
	)
	sent := make(chan http.Header, 1)
	b := setup(t, func(w http.ResponseWriter, r *http.Request) {
		sent <- r.Header.Clone()
		w.WriteHeader(http.StatusBadRequest)
		io.WriteString(w, `{"error":"bad","key":"`+phpJSONString(r.Header.Get("X-Api-Key"))+
			`","token":"`+phpJSONString(r.Header.Get("X-Token"))+
			`","sig":"`+phpJSONString(r.Header.Get("Webhook-Signature"))+`"}`)
	})
	m := message(b.srv.URL + "/in")
	m.Webhook.Headers = map[string]string{"X-Api-Key": apiKey, "X-Token": token}
	err := b.sender.Send(context.Background(), m)
	require.Error(t, err)
	var h http.Header
	select {
	case h = <-sent: // the handler sent it before answering
	default:
		t.Fatalf("the request never reached the receiver: %v", err)
	}
	_, sig, _ := strings.Cut(h.Get("Webhook-Signature"), ",")
	require.Contains(t, err.Error(), `"error":"bad"`, "the excerpt is still there")
	for _, secret := range []string{apiKey, token, sig} {
		require.NotContains(t, err.Error(), phpJSONString(secret), "echo of %q", secret)
	}
}
