package webhook_test

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestSendScrubsURLSecretsEchoedEncoded: a receiver that echoes the URL's
// query value or path secret percent-encoded, base64-encoded or as PHP
// writes JSON gets none of them into the error text, as with the
// credentials sent in headers.
func TestSendScrubsURLSecretsEchoedEncoded(t *testing.T) {
	t.Parallel()
	const (
		query = "sk/live:Q5ecret+v@lue"
		path  = "B0T:t0ken=xyz"
	)
	encodings := map[string]func(string) string{
		"query escaped": url.QueryEscape,
		"path escaped":  url.PathEscape,
		"base64":        func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
		"php json":      phpJSONString,
	}
	for name, enc := range encodings {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, func(w http.ResponseWriter, r *http.Request) {
				w.WriteHeader(http.StatusBadRequest)
				io.WriteString(w, "echo: token="+enc(r.URL.Query().Get("token"))+" path="+enc(strings.TrimPrefix(r.URL.Path, "/")))
			})
			err := b.sender.Send(context.Background(), message(b.srv.URL+"/"+url.PathEscape(path)+"?token="+url.QueryEscape(query)))
			require.Error(t, err)
			require.Contains(t, err.Error(), "echo: ", "the excerpt is still there")
			require.NotContains(t, err.Error(), enc(query))
			require.NotContains(t, err.Error(), enc(path))
		})
	}
}
