package config_test

import (
	"log/slog"
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/backoff"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/notification"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadDeliverDefaults(t *testing.T) {
	t.Parallel()
	d, err := config.LoadDeliver(env(map[string]string{
		"HERALD_QUEUE_URL":      "http://127.0.0.1:4566/000000000000/q",
		"HERALD_DLQ_URL":        "http://127.0.0.1:4566/000000000000/dlq",
		"HERALD_WEBHOOK_SECRET": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
	}))
	require.NoError(t, err)
	require.Equal(t, 13, d.MaxReceiveCount)
	require.Equal(t, 60*time.Second, d.BackoffBase)
	require.Equal(t, 6*time.Hour, d.BackoffCap)
	require.Equal(t, 100, d.Concurrency, "a batch of 100 in one round")
	require.Equal(t, 100, d.WebhookMaxInFlightPerDestination)
	require.Equal(t, 15*time.Second, d.WebhookTimeout)
	require.Empty(t, d.WebhookAllowCIDRs)
	require.Empty(t, d.ChatAllowHosts, "chat webhooks reach their services' own hosts only")
	require.Equal(t, slog.LevelInfo, d.LogLevel)
	p := d.Backoff()
	require.Equal(t, backoff.DefaultJitter, p.Jitter, "retries of one outage spread out")
	seen := map[time.Duration]bool{}
	for range 50 {
		seen[p.Delay(9, 0)] = true
	}
	require.Greater(t, len(seen), 1, "the jittered delay varies")
}

func TestLoadDeliverWebhookAllowCIDRs(t *testing.T) {
	t.Parallel()
	base := map[string]string{"HERALD_QUEUE_URL": "q", "HERALD_DLQ_URL": "d", "HERALD_WEBHOOK_SECRET": "whsec_x"}
	load := func(v string) (config.Deliver, error) {
		m := maps.Clone(base)
		m["HERALD_WEBHOOK_ALLOW_CIDRS"] = v
		return config.LoadDeliver(env(m))
	}

	for v, want := range map[string][]string{
		"":                                 nil,
		" , ":                              nil,
		"127.0.0.1/32":                     {"127.0.0.1/32"},
		" 10.20.0.0/16 ,fd00:1::/64,":      {"10.20.0.0/16", "fd00:1::/64"},
		"0.0.0.0/0,::/0":                   {"0.0.0.0/0", "::/0"},
		"192.168.7.0/24, 169.254.10.12/32": {"192.168.7.0/24", "169.254.10.12/32"},
	} {
		d, err := load(v)
		require.NoError(t, err, "%q", v)
		var got []string
		for _, p := range d.WebhookAllowCIDRs {
			got = append(got, p.String())
		}
		require.Equal(t, want, got, "%q", v)
	}

	for v, wantErr := range map[string]string{
		"10.0.0.1":                  `HERALD_WEBHOOK_ALLOW_CIDRS: "10.0.0.1": want a CIDR network address such as 10.20.0.0/16 or fd00:1::/64; comma-separated`,
		"10.0.0.0/8;192.168.0.0/16": `HERALD_WEBHOOK_ALLOW_CIDRS: "10.0.0.0/8;192.168.0.0/16": want a CIDR`,
		"127.0.0.1/32,nope":         `HERALD_WEBHOOK_ALLOW_CIDRS: "nope": want a CIDR`,
		"10.0.0.0/33":               `HERALD_WEBHOOK_ALLOW_CIDRS: "10.0.0.0/33": want a CIDR`,
		"fe80::1%eth0/64":           `HERALD_WEBHOOK_ALLOW_CIDRS: "fe80::1%eth0/64": want a CIDR`,
		"10.1.2.3/8":                `HERALD_WEBHOOK_ALLOW_CIDRS: "10.1.2.3/8": 10.1.2.3/8 is not a network address: did you mean 10.0.0.0/8 or 10.1.2.3/32?`,
		"::ffff:10.0.0.0/104":       `HERALD_WEBHOOK_ALLOW_CIDRS: "::ffff:10.0.0.0/104": ::ffff:10.0.0.0/104 is an IPv4-mapped prefix: write the IPv4 network (like 10.0.0.0/8)`,
	} {
		_, err := load(v)
		require.ErrorContains(t, err, wantErr, "%q", v)
	}
}

func TestLoadDeliverChatAllowHosts(t *testing.T) {
	t.Parallel()
	load := func(v string) (config.Deliver, error) {
		return config.LoadDeliver(env(map[string]string{"HERALD_QUEUE_URL": "q", "HERALD_DLQ_URL": "d", "HERALD_WEBHOOK_SECRET": "whsec_x", "HERALD_CHAT_ALLOW_HOSTS": v}))
	}
	for v, want := range map[string][]string{
		"":          nil,
		" , ":       nil,
		"127.0.0.1": {"127.0.0.1"},
		" chat-proxy.example.com, .example.org ,::1": {"chat-proxy.example.com", ".example.org", "::1"},
	} {
		d, err := load(v)
		require.NoError(t, err, "%q", v)
		require.Equal(t, want, d.ChatAllowHosts, "%q", v)
	}
	for _, v := range []string{"https://hooks.example.com", "x.example:443", "*.example.com", "a b"} {
		_, err := load(v)
		require.ErrorContains(t, err, "HERALD_CHAT_ALLOW_HOSTS: ", v)
	}
}

func TestLoadDeliverNamesEveryBadVariable(t *testing.T) {
	t.Parallel()
	_, err := config.LoadDeliver(env(map[string]string{
		"HERALD_MAX_RECEIVE_COUNT":    "zero",
		"HERALD_BACKOFF_CAP_SECONDS":  "86400",
		"HERALD_WEBHOOK_TIMEOUT_MS":   "5",
		"HERALD_LOG_LEVEL":            "LOUD",
		"HERALD_BACKOFF_BASE_SECONDS": "30",
		"HERALD_WEBHOOK_ALLOW_CIDRS":  "10.0.0.0/8,private",
		"HERALD_CONCURRENCY":          "1001",

		"HERALD_WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION": "0",
	}))
	require.Error(t, err)
	for _, name := range []string{
		"HERALD_EMAIL_QUEUE_URL: required: a queue for each channel (HERALD_<CHANNEL>_QUEUE_URL), or HERALD_QUEUE_URL", "HERALD_WEBHOOK_SECRET: required, or HERALD_WEBHOOK_SECRET_ARN instead",
		`HERALD_MAX_RECEIVE_COUNT: "zero": want a whole number from 1 to 1000`,
		`HERALD_BACKOFF_CAP_SECONDS: "86400": want a whole number from 1 to 42300`,
		`HERALD_WEBHOOK_TIMEOUT_MS: "5"`, `HERALD_LOG_LEVEL: "LOUD"`,
		`HERALD_WEBHOOK_ALLOW_CIDRS: "private"`,
		`HERALD_CONCURRENCY: "1001": want a whole number from 1 to 1000`,
		`HERALD_WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION: "0": want a whole number from 1 to 1000`,
	} {
		require.Contains(t, err.Error(), name)
	}
}

func TestLoadDeliverWebhookSecretSource(t *testing.T) {
	t.Parallel()
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	const arn = "arn:aws:secretsmanager:us-east-1:000000000000:secret:herald/webhook-signing-AbCdEf"
	load := func(secretValue, arnValue string) (config.Deliver, error) {
		return config.LoadDeliver(env(map[string]string{
			"HERALD_QUEUE_URL": "q", "HERALD_DLQ_URL": "d",
			"HERALD_WEBHOOK_SECRET": secretValue, "HERALD_WEBHOOK_SECRET_ARN": arnValue,
		}))
	}

	d, err := load(" "+secret+"\n", "")
	require.NoError(t, err)
	require.Equal(t, secret, d.WebhookSecret)
	require.Empty(t, d.WebhookSecretARN)

	d, err = load("", arn)
	require.NoError(t, err)
	require.Empty(t, d.WebhookSecret)
	require.Equal(t, arn, d.WebhookSecretARN)

	_, err = load(secret, arn)
	require.ErrorContains(t, err, "HERALD_WEBHOOK_SECRET: set together with HERALD_WEBHOOK_SECRET_ARN; set only one")
	require.NotContains(t, err.Error(), secret[len("whsec_"):], "the error never quotes the secret")

	_, err = load("", "herald/webhook-signing")
	require.ErrorContains(t, err, `HERALD_WEBHOOK_SECRET_ARN: "herald/webhook-signing": want a Secrets Manager secret ARN`)

	_, err = load(" ", " ")
	require.ErrorContains(t, err, "HERALD_WEBHOOK_SECRET: required, or HERALD_WEBHOOK_SECRET_ARN instead")
}

func TestLoadDeliverBaseAboveCap(t *testing.T) {
	t.Parallel()
	_, err := config.LoadDeliver(env(map[string]string{
		"HERALD_QUEUE_URL": "q", "HERALD_DLQ_URL": "d", "HERALD_WEBHOOK_SECRET": "whsec_x",
		"HERALD_BACKOFF_BASE_SECONDS": "600", "HERALD_BACKOFF_CAP_SECONDS": "60",
	}))
	require.ErrorContains(t, err, "HERALD_BACKOFF_BASE_SECONDS: 600 is above HERALD_BACKOFF_CAP_SECONDS (60)")

	// A base equal to the cap is a constant delay.
	d, err := config.LoadDeliver(env(map[string]string{
		"HERALD_QUEUE_URL": "q", "HERALD_DLQ_URL": "d", "HERALD_WEBHOOK_SECRET": "whsec_x",
		"HERALD_BACKOFF_BASE_SECONDS": "60", "HERALD_BACKOFF_CAP_SECONDS": "60",
	}))
	require.NoError(t, err)
	require.Equal(t, time.Minute, d.BackoffBase)
	require.Equal(t, time.Minute, d.BackoffCap)
}

func TestLoadRetention(t *testing.T) {
	t.Parallel()
	r, err := config.LoadRetention(env(map[string]string{"HERALD_DLQ_URL": "d", "HERALD_DLQ_MAX_AGE_HOURS": "24"}))
	require.NoError(t, err)
	require.Equal(t, 24*time.Hour, r.MaxAge)
	require.Equal(t, []string{"d"}, r.DeadLetterQueueURLs)
	r, err = config.LoadRetention(env(map[string]string{"HERALD_WEBHOOK_DLQ_URL": "w", "HERALD_DLQ_URL": "d", "HERALD_EMAIL_DLQ_URL": "e"}))
	require.NoError(t, err)
	require.Equal(t, []string{"e", "w", "d"}, r.DeadLetterQueueURLs, "every channel's, in notification.Channels order, then the shared one")
	_, err = config.LoadRetention(env(map[string]string{"HERALD_DLQ_MAX_AGE_HOURS": "400"}))
	require.ErrorContains(t, err, "HERALD_EMAIL_DLQ_URL: required: each channel's dead-letter queue (HERALD_<CHANNEL>_DLQ_URL), or HERALD_DLQ_URL")
	require.ErrorContains(t, err, "HERALD_DLQ_MAX_AGE_HOURS")
}

func TestLoadFeedback(t *testing.T) {
	t.Parallel()
	f, err := config.LoadFeedback(env(map[string]string{"HERALD_LOG_LEVEL": "WARN"}))
	require.NoError(t, err)
	require.Equal(t, slog.LevelWarn, f.LogLevel)
	f, err = config.LoadFeedback(env(nil))
	require.NoError(t, err)
	require.Equal(t, slog.LevelInfo, f.LogLevel, "defaults to INFO")
	_, err = config.LoadFeedback(env(map[string]string{"HERALD_LOG_LEVEL": "LOUD"}))
	require.ErrorContains(t, err, "HERALD_LOG_LEVEL")
}

// TestLoadDeliverChannelQueues: each channel's queue and its dead-letter
// queue come as a pair; the queue of every channel (HERALD_QUEUE_URL) may
// stand beside them while a deployment moves; one queue at least.
func TestLoadDeliverChannelQueues(t *testing.T) {
	t.Parallel()
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	d, err := config.LoadDeliver(env(map[string]string{
		"HERALD_WEBHOOK_QUEUE_URL": "wq", "HERALD_WEBHOOK_DLQ_URL": "wd",
		"HERALD_EMAIL_QUEUE_URL": " eq ", "HERALD_EMAIL_DLQ_URL": "ed",
		"HERALD_WEBHOOK_SECRET": secret,
	}))
	require.NoError(t, err)
	require.Equal(t, []redrive.Queue{
		{Channel: notification.ChannelEmail, URL: "eq", DeadLetterURL: "ed"},
		{Channel: notification.ChannelWebhook, URL: "wq", DeadLetterURL: "wd"},
	}, d.Queues)
	require.Equal(t, d.Queues, d.AllQueues(), "no queue of every channel")
	require.Equal(t, []string{"ed", "wd"}, d.DeadLetterQueueURLs())

	d, err = config.LoadDeliver(env(map[string]string{
		"HERALD_EMAIL_QUEUE_URL": "eq", "HERALD_EMAIL_DLQ_URL": "ed",
		"HERALD_QUEUE_URL": "q", "HERALD_DLQ_URL": "d", "HERALD_WEBHOOK_SECRET": secret,
	}))
	require.NoError(t, err, "a channel queue beside the queue of every channel")
	require.Equal(t, []redrive.Queue{
		{Channel: notification.ChannelEmail, URL: "eq", DeadLetterURL: "ed"},
		{URL: "q", DeadLetterURL: "d"},
	}, d.AllQueues())

	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"HERALD_EMAIL_QUEUE_URL": "eq"}, "HERALD_EMAIL_DLQ_URL: required with HERALD_EMAIL_QUEUE_URL"},
		{map[string]string{"HERALD_WEBHOOK_DLQ_URL": "wd"}, "HERALD_WEBHOOK_QUEUE_URL: required with HERALD_WEBHOOK_DLQ_URL"},
		{map[string]string{"HERALD_QUEUE_URL": "q"}, "HERALD_DLQ_URL: required with HERALD_QUEUE_URL"},
		{map[string]string{"HERALD_DLQ_URL": "d", "HERALD_EMAIL_QUEUE_URL": "eq", "HERALD_EMAIL_DLQ_URL": "ed"}, "HERALD_QUEUE_URL: required with HERALD_DLQ_URL"},
		{map[string]string{}, "HERALD_EMAIL_QUEUE_URL: required"},
	} {
		tc.env["HERALD_WEBHOOK_SECRET"] = secret
		_, err := config.LoadDeliver(env(tc.env))
		require.ErrorContains(t, err, tc.want, "%v", tc.env)
	}
}
