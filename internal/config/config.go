// Package config reads the functions' settings from environment variables
// and validates them at cold start, with errors that name the variable and
// its allowed range. The variables are listed in docs/configuration.md.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/internal/backoff"
	"github.com/heraldhq/herald/internal/webhook"
)

// Names of the environment variables other packages' errors refer to.
const (
	EnvDeadLetterQueueURL = "HERALD_DLQ_URL"
	EnvMaxReceiveCount    = "HERALD_MAX_RECEIVE_COUNT"
	EnvBackoffBase        = "HERALD_BACKOFF_BASE_SECONDS"
	EnvBackoffCap         = "HERALD_BACKOFF_CAP_SECONDS"
)

// maxBackoffSeconds is the longest backoff setting: backoff.MaxDelay.
const maxBackoffSeconds = int(backoff.MaxDelay / time.Second)

// Deliver is the configuration of the deliver function.
type Deliver struct {
	// QueueURL is the notification queue (HERALD_QUEUE_URL). Required.
	QueueURL string
	// DeadLetterQueueURL is its dead-letter queue (HERALD_DLQ_URL). Required.
	DeadLetterQueueURL string
	// MaxReceiveCount must equal the queue's redrive policy maxReceiveCount
	// (HERALD_MAX_RECEIVE_COUNT, 1–1000). Defaults to 13.
	MaxReceiveCount int
	// BackoffBase is the first retry delay (HERALD_BACKOFF_BASE_SECONDS,
	// 1–42300). Defaults to 60 s.
	BackoffBase time.Duration
	// BackoffCap is the longest retry delay (HERALD_BACKOFF_CAP_SECONDS,
	// 1–42300: the SQS visibility timeout limit of 12 h less the 15 min a
	// Lambda invocation can last). Defaults to 21600 s (6 h).
	BackoffCap time.Duration
	// Concurrency is how many records of a batch are delivered at once
	// (HERALD_CONCURRENCY, 1–1000). Defaults to 10.
	Concurrency int
	// EmailDefaultFrom is the sender of emails that name none
	// (HERALD_EMAIL_DEFAULT_FROM). Optional.
	EmailDefaultFrom string
	// EmailConfigurationSet is the SES configuration set of emails that name
	// none (HERALD_EMAIL_CONFIGURATION_SET). Optional.
	EmailConfigurationSet string
	// WebhookSecret holds the active Standard Webhooks signing secrets, each
	// "whsec_" and base64, separated by white space (HERALD_WEBHOOK_SECRET):
	// the local and development alternative to WebhookSecretARN. Exactly one
	// of the two is set.
	WebhookSecret string
	// WebhookSecretARN is the ARN of the AWS Secrets Manager secret whose
	// SecretString holds the active signing secrets in the same form
	// (HERALD_WEBHOOK_SECRET_ARN); the function reads it once, at cold
	// start. Exactly one of WebhookSecret and WebhookSecretARN is set.
	WebhookSecretARN string
	// WebhookTimeout bounds one webhook request (HERALD_WEBHOOK_TIMEOUT_MS,
	// 100–900000). Defaults to 15000 ms.
	WebhookTimeout time.Duration
	// WebhookAllowCIDRs are networks webhooks may reach although they are
	// private or otherwise special-purpose (HERALD_WEBHOOK_ALLOW_CIDRS,
	// comma-separated network addresses such as "10.20.0.0/16,fd00:1::/64";
	// see docs/security.md). Defaults to none: webhooks reach public
	// addresses only.
	WebhookAllowCIDRs []netip.Prefix
	// WebhookAllowHTTP lets webhooks use plain http URLs, for local testing
	// only (HERALD_WEBHOOK_ALLOW_HTTP, true or false). Defaults to false.
	WebhookAllowHTTP bool
	// LogLevel is DEBUG, INFO, WARN or ERROR (HERALD_LOG_LEVEL). Defaults to INFO.
	LogLevel slog.Level
	// CheckQueues makes the function compare the queues' attributes with
	// these settings at cold start, two GetQueueAttributes calls, and refuse
	// to start on a disagreement (HERALD_CHECK_QUEUES, true or false; see
	// docs/reliability.md). Defaults to true.
	CheckQueues bool
}

// Backoff returns the retry schedule the settings describe.
func (d Deliver) Backoff() backoff.Policy {
	return backoff.Policy{Base: d.BackoffBase, Cap: d.BackoffCap, Jitter: backoff.DefaultJitter}.WithDefaults()
}

// Retention is the configuration of the retention function.
type Retention struct {
	// DeadLetterQueueURL is the queue swept (HERALD_DLQ_URL). Required.
	DeadLetterQueueURL string
	// MaxAge is how long a dead letter is kept, from its original
	// SentTimestamp (HERALD_DLQ_MAX_AGE_HOURS, 1–336, the SQS retention
	// limit of 14 days). Defaults to 168 h (7 days).
	MaxAge time.Duration
	// LogLevel as for Deliver (HERALD_LOG_LEVEL).
	LogLevel slog.Level
}

// LoadDeliver reads the deliver function's settings through getenv
// (os.Getenv in production). It returns every problem found, joined.
func LoadDeliver(getenv func(string) string) (Deliver, error) {
	r := reader{getenv: getenv}
	d := Deliver{
		QueueURL:              r.required("HERALD_QUEUE_URL"),
		DeadLetterQueueURL:    r.required(EnvDeadLetterQueueURL),
		MaxReceiveCount:       r.integer(EnvMaxReceiveCount, 13, 1, 1000),
		BackoffBase:           time.Duration(r.integer(EnvBackoffBase, 60, 1, maxBackoffSeconds)) * time.Second,
		BackoffCap:            time.Duration(r.integer(EnvBackoffCap, 21600, 1, maxBackoffSeconds)) * time.Second,
		Concurrency:           r.integer("HERALD_CONCURRENCY", 10, 1, 1000),
		EmailDefaultFrom:      strings.TrimSpace(getenv("HERALD_EMAIL_DEFAULT_FROM")),
		EmailConfigurationSet: strings.TrimSpace(getenv("HERALD_EMAIL_CONFIGURATION_SET")),
		WebhookSecret:         strings.TrimSpace(getenv("HERALD_WEBHOOK_SECRET")),
		WebhookSecretARN:      strings.TrimSpace(getenv("HERALD_WEBHOOK_SECRET_ARN")),
		WebhookTimeout:        time.Duration(r.integer("HERALD_WEBHOOK_TIMEOUT_MS", 15000, 100, 900000)) * time.Millisecond,
		WebhookAllowCIDRs:     r.prefixes("HERALD_WEBHOOK_ALLOW_CIDRS"),
		WebhookAllowHTTP:      r.boolean("HERALD_WEBHOOK_ALLOW_HTTP", false),
		CheckQueues:           r.boolean("HERALD_CHECK_QUEUES", true),
		LogLevel:              r.level("HERALD_LOG_LEVEL"),
	}
	switch {
	case d.WebhookSecret == "" && d.WebhookSecretARN == "":
		r.problem("HERALD_WEBHOOK_SECRET", "required, or HERALD_WEBHOOK_SECRET_ARN instead")
	case d.WebhookSecret != "" && d.WebhookSecretARN != "":
		r.problem("HERALD_WEBHOOK_SECRET", "set together with HERALD_WEBHOOK_SECRET_ARN; set only one")
	case d.WebhookSecretARN != "" && !strings.HasPrefix(d.WebhookSecretARN, "arn:"):
		r.problem("HERALD_WEBHOOK_SECRET_ARN", fmt.Sprintf("%q: want a Secrets Manager secret ARN (arn:aws:secretsmanager:…)", d.WebhookSecretARN))
	}
	if d.BackoffBase > d.BackoffCap {
		r.problem(EnvBackoffBase, fmt.Sprintf("%d is above %s (%d)", int(d.BackoffBase.Seconds()), EnvBackoffCap, int(d.BackoffCap.Seconds())))
	}
	return d, r.err()
}

// LoadRetention reads the retention function's settings through getenv.
func LoadRetention(getenv func(string) string) (Retention, error) {
	r := reader{getenv: getenv}
	c := Retention{
		DeadLetterQueueURL: r.required(EnvDeadLetterQueueURL),
		MaxAge:             time.Duration(r.integer("HERALD_DLQ_MAX_AGE_HOURS", 168, 1, 336)) * time.Hour,
		LogLevel:           r.level("HERALD_LOG_LEVEL"),
	}
	return c, r.err()
}

type reader struct {
	getenv   func(string) string
	problems []error
}

func (r *reader) problem(name, msg string) {
	r.problems = append(r.problems, fmt.Errorf("%s: %s", name, msg))
}

func (r *reader) err() error { return errors.Join(r.problems...) }

func (r *reader) required(name string) string {
	v := strings.TrimSpace(r.getenv(name))
	if v == "" {
		r.problem(name, "required")
	}
	return v
}

func (r *reader) integer(name string, def, lo, hi int) int {
	s := strings.TrimSpace(r.getenv(name))
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		r.problem(name, fmt.Sprintf("%q: want a whole number from %d to %d", s, lo, hi))
		return def
	}
	return n
}

// prefixes reads a comma-separated list of CIDR network addresses with
// webhook.ParseAllowCIDR (which holds the rules); empty entries are skipped.
func (r *reader) prefixes(name string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range strings.Split(r.getenv(name), ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		p, err := webhook.ParseAllowCIDR(s)
		if err != nil {
			r.problem(name, fmt.Sprintf("%q: %v; comma-separated", s, err))
			continue
		}
		out = append(out, p)
	}
	return out
}

func (r *reader) boolean(name string, def bool) bool {
	s := strings.TrimSpace(r.getenv(name))
	if s == "" {
		return def
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		r.problem(name, fmt.Sprintf("%q: want true or false", s))
		return def
	}
	return b
}

func (r *reader) level(name string) slog.Level {
	s := strings.TrimSpace(r.getenv(name))
	if s == "" {
		return slog.LevelInfo
	}
	var l slog.Level
	if err := l.UnmarshalText([]byte(s)); err != nil {
		r.problem(name, fmt.Sprintf("%q: want DEBUG, INFO, WARN or ERROR", s))
	}
	return l
}
