//go:build integration

package integration

import (
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/localenv"
)

// TestLogsAndDeadLettersKeepSecrets runs deliveries that carry planted
// secrets through every outcome (a webhook delivered, webhooks whose
// receiver answers 4xx and 5xx echoing the request URI, one to a URL with
// userinfo, path and query secrets, one to a blocked address, an email),
// captures every byte the processor and the local event source mapping log
// at DEBUG, and every dead letter's attributes, and checks that none holds
// the signing secrets, the email body, the URL password, the path segment
// or the query value. (A dead letter's body is the original message, so it
// holds the URL and the email body by design; its reason must not.)
func TestLogsAndDeadLettersKeepSecrets(t *testing.T) {
	t.Parallel()
	tag := randHex(6)
	planted := map[string]string{
		"url password":  "pa55word" + tag,
		"path segment":  "SECRETPATH" + tag,
		"query value":   "QSECRET" + tag,
		"email body":    "BODY-SECRET-" + tag,
		"signing key 1": "SIGNING-KEY-ONE-" + tag + "-0123456789",
		"signing key 2": "SIGNING-KEY-TWO-" + tag + "-0123456789",
	}
	secret1 := "whsec_" + base64.StdEncoding.EncodeToString([]byte(planted["signing key 1"]))
	secret2 := "whsec_" + base64.StdEncoding.EncodeToString([]byte(planted["signing key 2"]))
	planted["signing secret 1"], planted["signing secret 2"] = secret1, secret2
	planted["signing secret 1 base64"] = strings.TrimPrefix(secret1, "whsec_")
	planted["signing secret 2 base64"] = strings.TrimPrefix(secret2, "whsec_")

	// A receiver that answers with the request URI in its body: 204 on /ok,
	// 400 on /p/..., 503 on /retry/....
	var echoed localenv.SyncBuffer
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		switch {
		case r.URL.Path == "/ok":
			w.WriteHeader(http.StatusNoContent)
			return
		case strings.HasPrefix(r.URL.Path, "/retry/"):
			w.WriteHeader(http.StatusServiceUnavailable)
		default:
			w.WriteHeader(http.StatusBadRequest)
		}
		body := "you asked for " + r.RequestURI
		_, _ = io.WriteString(&echoed, body+"\n")
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)

	var all localenv.SyncBuffer
	e := setup(t, options{maxReceive: 2, deliver: func(e *env, c *config.Deliver, o *app.DeliverOptions) {
		useSecretARN(secret1+" "+secret2)(e, c, o)
		o.WebhookTLS = srv.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
		o.Logger = slog.New(slog.NewJSONHandler(io.MultiWriter(e.logs, &all), &slog.HandlerOptions{Level: slog.LevelDebug}))
	}})
	e.runner.Logger = slog.New(slog.NewJSONHandler(&all, &slog.HandlerOptions{Level: slog.LevelDebug}))

	u, err := url.Parse(srv.URL)
	require.NoError(t, err)
	secretURL := func(host, path string) string {
		return fmt.Sprintf("https://user:%s@%s%s/%s?token=%s", planted["url password"], host, path, planted["path segment"], planted["query value"])
	}
	webhookMsg := func(id, target string) string {
		return fmt.Sprintf(`{"version":1,"id":%q,"channel":"webhook","webhook":{"url":%q,"event_type":"scan","payload":{"k":1}}}`, id, target)
	}
	to := "scan." + tag + "@example.org"
	email := fmt.Sprintf(`{"version":1,"id":"scan-email","channel":"email","email":{"to":[%q],"subject":"scan","text":"Hello, %s"}}`, to, planted["email body"])
	e.send(
		webhookMsg("scan-ok", srv.URL+"/ok"),
		webhookMsg("scan-4xx", secretURL(u.Host, "/p")),
		webhookMsg("scan-5xx", secretURL(u.Host, "/retry")),
		webhookMsg("scan-blocked", secretURL("169.254.169.254", "/p")),
		email,
	)
	ids := []string{"scan-ok", "scan-4xx", "scan-5xx", "scan-blocked", "scan-email"}
	want := map[string]string{"scan-ok": "delivered", "scan-4xx": "dead_lettered", "scan-5xx": "dead_lettered", "scan-blocked": "dead_lettered", "scan-email": "delivered"}
	e.pollUntil(60*time.Second, func() bool {
		for _, id := range ids {
			o := e.logs.outcomes(id)
			if len(o) == 0 || o[len(o)-1] != want[id] {
				return false
			}
		}
		return true
	})
	dl := e.deadLetters()
	require.Len(t, dl, 3)

	// The secrets were in play: the receiver echoed them and SES got the body.
	require.Contains(t, echoed.String(), planted["path segment"])
	require.Contains(t, echoed.String(), planted["query value"])
	emails, err := localenv.SentEmails(e.ctx, os.Getenv("AWS_ENDPOINT_URL_SESV2"))
	require.NoError(t, err)
	var sent bool
	for _, m := range emails {
		if len(m.Destination.To) == 1 && strings.Contains(m.Destination.To[0], to) {
			sent = strings.Contains(m.Body.Text, planted["email body"])
		}
	}
	require.True(t, sent, "the email with the planted body reached the SES emulator")

	logs := all.String()
	require.Contains(t, logs, `"outcome":"retry"`, "the 5xx was retried once")
	require.Contains(t, logs, `"id":"scan-4xx"`)
	require.Contains(t, logs, "body: you asked for [redacted]", "the receiver's echo reached the log, scrubbed")
	var reasons strings.Builder
	for _, d := range dl {
		for k, v := range d.Attributes {
			fmt.Fprintf(&reasons, "%s=%s\n", k, v)
		}
	}
	require.Contains(t, reasons.String(), "webhook_http_4xx")
	for what, s := range planted {
		require.NotContains(t, logs, s, "the logs hold the %s", what)
		require.NotContains(t, reasons.String(), s, "a dead letter's reason holds the %s", what)
	}
}
