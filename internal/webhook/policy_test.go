package webhook_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/webhook"
)

// TestSendRetriesEveryNon2xx: every status but 2xx is a failure and every
// failure is retried, except 410 Gone and the statuses an operator names
// (Standard Webhooks, "Delivery success and failure").
func TestSendRetriesEveryNon2xx(t *testing.T) {
	t.Parallel()

	stop := []int{404, 301, 503}
	tests := []struct {
		code      int
		stop      []int
		permanent bool
		class     delivery.Class
	}{
		{code: 401, class: webhook.ClassHTTP4xx}, // a receiver rotating its secret
		{code: 404, class: webhook.ClassHTTP4xx}, // a receiver mid-deploy
		{code: 400, class: webhook.ClassHTTP4xx},
		{code: 422, class: webhook.ClassHTTP4xx},
		{code: 301, class: webhook.ClassRedirect},
		{code: 308, class: webhook.ClassRedirect},
		{code: 410, permanent: true, class: webhook.ClassGone},
		{code: 410, stop: stop, permanent: true, class: webhook.ClassGone},
		{code: 404, stop: stop, permanent: true, class: webhook.ClassStopStatus},
		{code: 301, stop: stop, permanent: true, class: webhook.ClassStopStatus},
		{code: 503, stop: stop, permanent: true, class: webhook.ClassStopStatus},
		{code: 403, stop: stop, class: webhook.ClassHTTP4xx}, // not named: retried
		{code: 500, stop: stop, class: webhook.ClassHTTP5xx},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d stop %v", tt.code, tt.stop), func(t *testing.T) {
			t.Parallel()
			b := setup(t, status(tt.code), func(c *webhook.Config) { c.StopStatuses = tt.stop })
			err := b.sender.Send(context.Background(), message(b.srv.URL))
			requireOutcome(t, err, tt.permanent, tt.class)
			require.EqualValues(t, 1, b.hits.Load())
			if tt.class == webhook.ClassStopStatus {
				require.Contains(t, err.Error(), strconv.Itoa(tt.code)+" is a stop status (HERALD_WEBHOOK_STOP_STATUSES)")
			}
		})
	}
}

func TestConfigStopStatusesRange(t *testing.T) {
	t.Parallel()
	for _, bad := range []int{0, 200, 204, 299, 600, -404} {
		err := webhook.Config{Secret: testSecret, StopStatuses: []int{bad}}.WithDefaults().Validate()
		require.ErrorContains(t, err, "webhook stop statuses: "+strconv.Itoa(bad)+", want 300–599")
	}
	for _, good := range []int{300, 404, 599} {
		require.NoError(t, webhook.Config{Secret: testSecret, StopStatuses: []int{good}}.WithDefaults().Validate())
	}
	require.ErrorContains(t, webhook.Config{Secret: testSecret, SecretScope: "per-url"}.WithDefaults().Validate(), `webhook secret scope: "per-url"`)
}

// TestSendBodyIsTheSameOnEveryAttempt: the envelope's timestamp is the
// event's (created_at), so every attempt posts the same body; only
// webhook-timestamp, the attempt time, moves. The reference library
// verifies each attempt.
func TestSendBodyIsTheSameOnEveryAttempt(t *testing.T) {
	t.Parallel()

	created := []time.Time{
		time.Date(2026, 2, 1, 10, 0, 0, 0, time.UTC),
		time.Date(2026, 2, 1, 11, 30, 15, 123000000, time.FixedZone("CET", 3600)), // milliseconds, as SentTimestamp has
	}
	for _, at := range created {
		t.Run(at.String(), func(t *testing.T) {
			t.Parallel()
			h, got := capture()
			clock := time.Now()
			b := setup(t, h, func(c *webhook.Config) { c.Now = func() time.Time { return clock } })
			m := message(b.srv.URL)
			m.CreatedAt = &at
			secret, err := webhook.DeriveSecret(testSecret, b.srv.URL)
			require.NoError(t, err)
			wh, err := standardwebhooks.NewWebhook(secret)
			require.NoError(t, err)

			var bodies, stamps []string
			for i := range 3 {
				clock = time.Now().Add(time.Duration(i) * time.Minute) // a later attempt
				require.NoError(t, b.sender.Send(context.Background(), m))
				r := receivedBy(t, got)
				require.NoError(t, wh.VerifyIgnoringTimestamp(r.body, r.header), "attempt %d", i+1)
				bodies = append(bodies, string(r.body))
				stamps = append(stamps, r.header.Get("webhook-timestamp"))
			}
			require.Equal(t, bodies[0], bodies[1])
			require.Equal(t, bodies[0], bodies[2])
			require.NotEqual(t, stamps[0], stamps[2], "webhook-timestamp is the attempt time")
			var env struct{ Timestamp string }
			require.NoError(t, json.Unmarshal([]byte(bodies[0]), &env))
			require.Equal(t, at.UTC().Format(time.RFC3339Nano), env.Timestamp)
		})
	}
}

// TestDeriveSecretOrigin: one destination, however spelled, has one key;
// another origin (scheme, host or port) has another.
func TestDeriveSecretOrigin(t *testing.T) {
	t.Parallel()

	derive := func(u string) string {
		t.Helper()
		s, err := webhook.DeriveSecret(testSecret, u)
		require.NoError(t, err, u)
		key, err := webhook.DecodeSecret(s)
		require.NoError(t, err)
		require.Len(t, key, 32)
		return s
	}
	base := derive("https://hooks.example.com/billing")
	for _, same := range []string{
		"https://hooks.example.com",
		"HTTPS://Hooks.Example.COM:443/other?q=1#f",
		"https://user:pass@hooks.example.com/x",
		"https://hooks.example.com./x",
		"https://hooks.example.com:0443/x",
	} {
		require.Equal(t, base, derive(same), same)
	}
	for _, other := range []string{
		"https://hooks.example.com:8443/billing",
		"http://hooks.example.com/billing",
		"https://hooks.example.org/billing",
		"https://api.hooks.example.com/billing",
	} {
		require.NotEqual(t, base, derive(other), other)
	}
	require.Equal(t, derive("https://bücher.example/x"), derive("https://xn--bcher-kva.example/y"), "an IDN and its Punycode are one origin")
	require.Equal(t, derive("https://[2001:db8::1]/"), derive("https://[2001:0DB8:0:0::1]:443/"), "IPv6 in canonical form")

	other, err := webhook.DeriveSecret(secretOf(32), "https://hooks.example.com/billing")
	require.NoError(t, err)
	require.NotEqual(t, base, other, "each secret derives its own key")
	require.NotEqual(t, testSecret, base)

	for _, bad := range []struct{ secret, url, want string }{
		{testSecret, "ftp://hooks.example.com/", "https"},
		{testSecret, "https://hooks.example.com:99999/", "port"},
		{testSecret, "https://a..b/", "empty label"},
		{testSecret, "https://a.\u034f.b/", "empty label"},     // UTS #46 deletes U+034F: a..b
		{testSecret, "https://\u00ad\u200b/", "empty label"},   // nothing left of the name
		{testSecret, "https://a\u3002\u3002b/", "empty label"}, // U+3002 is a full stop
		{testSecret, "://nope", "does not parse"},
		{"whsec_!!", "https://hooks.example.com/", "base64"},
		{"secret", "https://hooks.example.com/", "whsec_"},
		{secretOf(8), "https://hooks.example.com/", "key is 8 bytes"},
	} {
		_, err := webhook.DeriveSecret(bad.secret, bad.url)
		require.ErrorContains(t, err, bad.want, bad.url)
	}
}

// TestSendPerDestinationSecrets: each receiver verifies with its own
// derived secret (the reference library's verifier), and neither with the
// deployment's secret nor with another receiver's; during a rotation a
// receiver on either secret's derived key verifies.
func TestSendPerDestinationSecrets(t *testing.T) {
	t.Parallel()

	oldSecret, newSecret := testSecret, secretOf(40)
	hA, gotA := capture()
	hB, gotB := capture()
	a, _ := newServer(t, hA)
	b, _ := newServer(t, hB) // another port: another origin
	s := newSender(t, a, func(c *webhook.Config) {
		c.Secret, c.Secrets, c.Now = "", []string{oldSecret, newSecret}, time.Now
	})
	// Both httptest servers share one certificate, so one TLS config trusts both.
	require.NoError(t, s.Send(context.Background(), message(a.URL+"/a")))
	require.NoError(t, s.Send(context.Background(), message(b.URL+"/b")))
	reqA, reqB := receivedBy(t, gotA), receivedBy(t, gotB)

	verify := func(secret string, r received) error {
		t.Helper()
		wh, err := standardwebhooks.NewWebhook(secret)
		require.NoError(t, err)
		return wh.Verify(r.body, r.header)
	}
	derived := func(secret, u string) string {
		d, err := webhook.DeriveSecret(secret, u)
		require.NoError(t, err)
		return d
	}
	for _, secret := range []string{oldSecret, newSecret} {
		require.NoError(t, verify(derived(secret, a.URL), reqA))
		require.NoError(t, verify(derived(secret, b.URL), reqB))
		require.Error(t, verify(derived(secret, b.URL), reqA), "B's key cannot sign for A")
		require.Error(t, verify(derived(secret, a.URL), reqB), "A's key cannot sign for B")
		require.Error(t, verify(secret, reqA), "the deployment secret itself does not verify")
	}
	require.Len(t, strings.Fields(reqA.header.Get("webhook-signature")), 2, "one signature per active secret")

	// ScopeShared: the deployment secret itself verifies, for every receiver.
	hC, gotC := capture()
	c, _ := newServer(t, hC)
	sh := newSender(t, c, shared, func(cfg *webhook.Config) { cfg.Now = time.Now })
	require.NoError(t, sh.Send(context.Background(), message(c.URL)))
	reqC := receivedBy(t, gotC)
	require.NoError(t, verify(testSecret, reqC))
	require.Error(t, verify(derived(testSecret, c.URL), reqC))
}

// TestSendSpecialUseNames: names that are local or special by definition
// are blocked by name, permanently, before any resolution or dial, even
// when AllowCIDRs allows every address.
func TestSendSpecialUseNames(t *testing.T) {
	t.Parallel()

	tests := []struct{ host, why string }{
		{"localhost", "localhost is a loopback name (localhost, RFC 6761 §6.3)"},
		{"LocalHost.", "localhost is a loopback name"},
		{"a.b.localhost", "a.b.localhost is a loopback name"},
		{"ｌｏｃａｌｈｏｓｔ", "localhost is a loopback name"}, // full-width: IDNA maps it
		{"nothing.invalid", "never resolves (invalid, RFC 6761 §6.4)"},
		{"api.test", "a testing name"},
		{"printer.local", "multicast DNS name (local, RFC 6762 §3)"},
		{"duckduckgogg42xjoc72x3sjasowoarfbgcmvfimaftt6twagswzczad.onion", "Tor onion service name"},
		{"router.home.arpa", "a home network name (home.arpa, RFC 8375)"},
		{"1.0.0.127.in-addr.arpa", "infrastructure name"},
		{"metadata.google.internal", "a private-use name"},
		{"x.alt", "outside the DNS (alt, RFC 9476)"},
		{"intranet", "a single-label name"},
		{"metadata", "a single-label name"},
	}
	for _, tt := range tests {
		t.Run(tt.host, func(t *testing.T) {
			t.Parallel()
			var dials dialLog
			s := newSender(t, nil, func(c *webhook.Config) {
				c.AllowCIDRs = []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0")}
			})
			webhook.SetDialHook(s, dials.hook)
			start := time.Now()
			err := s.Send(context.Background(), message("https://user:pa55@"+tt.host+"/path?token=SECRET"))
			requireOutcome(t, err, true, webhook.ClassBlockedDestination)
			require.Contains(t, err.Error(), tt.why)
			requireNoSecrets(t, err, "pa55", "SECRET", "/path")
			dialed, _ := dials.get()
			require.Empty(t, dialed, "judged by name: nothing resolved or dialled")
			require.Less(t, time.Since(start), time.Second)
		})
	}

	// Not special: example names resolve in the public DNS (RFC 6761 §6.5),
	// so they go on to resolution (which fails here: no DNS).
	s := newSender(t, nil)
	err := s.Send(context.Background(), message("https://herald-test.example.com/hook"))
	_, class, _ := delivery.Classify(err)
	require.NotEqual(t, webhook.ClassBlockedDestination, class, "%v", err)
}

// TestSendScrubsEchoedCredentials: a receiver that echoes the request in
// its error page, in any common encoding, gets none of the credentials
// herald sent into the error text (logged, and the dead letter's reason):
// the URL's userinfo and the Basic authorization made of it, the producer's
// header values, the signatures.
func TestSendScrubsEchoedCredentials(t *testing.T) {
	t.Parallel()

	const (
		user, pass = "hookuser", "hunter2-PASS"
		apiKey     = "sk_live_51HxQpZ2eZvKYlo2C"
		token      = "tok_9f8e7d6c5b4a"
		quoted     = `q"ote\<&>-k3y` // JSON and HTML escape it
	)
	type encoder func(dump string) string
	encodings := map[string]encoder{
		"raw":        func(d string) string { return d },
		"base64":     func(d string) string { return base64.StdEncoding.EncodeToString([]byte(d)) },
		"base64 +1":  func(d string) string { return base64.StdEncoding.EncodeToString([]byte("x" + d)) },
		"base64 +2":  func(d string) string { return base64.StdEncoding.EncodeToString([]byte("xy" + d)) },
		"base64url":  func(d string) string { return base64.RawURLEncoding.EncodeToString([]byte(d)) },
		"urlencoded": func(d string) string { return url.QueryEscape(d) },
		"lower hex %": func(d string) string {
			return regexp.MustCompile(`%[0-9A-F]{2}`).ReplaceAllStringFunc(url.PathEscape(d), strings.ToLower)
		},
		"json": func(d string) string { b, _ := json.Marshal(d); return string(b) },
		"json, no HTML escaping": func(d string) string {
			var buf strings.Builder
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			_ = enc.Encode(d)
			return buf.String()
		},
		"html": html.EscapeString,
		"hex":  func(d string) string { return hex.EncodeToString([]byte(d)) },
	}
	for name, enc := range encodings {
		for _, code := range []int{400, 500} {
			t.Run(fmt.Sprintf("%s %d", name, code), func(t *testing.T) {
				t.Parallel()
				sent := make(chan http.Header, 1)
				b := setup(t, func(w http.ResponseWriter, r *http.Request) {
					sent <- r.Header.Clone()
					// Only the credentials, so that they fall in the excerpt.
					dump := fmt.Sprintf("q=%s auth=%s key=%s sig=%s x=%s", r.Header.Get("X-Quoted"), r.Header.Get("Authorization"), r.Header.Get("X-Api-Key"), r.Header.Get("Webhook-Signature"), r.Header.Get("X-Token"))
					w.WriteHeader(code)
					io.WriteString(w, "echo: "+enc(dump))
				})
				m := message(strings.Replace(b.srv.URL, "https://", "https://"+user+":"+pass+"@", 1) + "/in")
				m.Webhook.Headers = map[string]string{"X-Api-Key": apiKey, "X-Token": "Bearer " + token, "X-Quoted": quoted}
				err := b.sender.Send(context.Background(), m)
				require.Error(t, err)
				h := receivedBy(t, sent)
				require.NotEmpty(t, h.Get("Authorization"), "Go sends the userinfo as Basic authorization")
				require.Contains(t, err.Error(), "echo: ", "the excerpt is still there")
				sig := h.Get("Webhook-Signature")
				_, sigB64, _ := strings.Cut(sig, ",")
				basic := strings.TrimPrefix(h.Get("Authorization"), "Basic ")
				for _, secret := range []string{pass, apiKey, token, sigB64, basic, quoted} {
					for ename, e := range encodings {
						form := strings.TrimSpace(e(secret))
						if strings.HasPrefix(ename, "json") {
							form = strings.Trim(form, `"`)
						}
						if strings.HasPrefix(ename, "base64 +") { // inside a longer text: the middle part
							form = form[4 : len(form)-4]
						}
						require.NotContains(t, err.Error(), form, "%s of %q", ename, secret)
					}
				}
				require.NotContains(t, err.Error(), pass)
			})
		}
	}
}
