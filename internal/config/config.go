// Package config reads the functions' settings from environment variables
// and validates them at cold start, with errors that name the variable and
// its allowed range. The variables are listed in docs/configuration.md.
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heraldhq/herald/internal/backoff"
	"github.com/heraldhq/herald/internal/chat"
	"github.com/heraldhq/herald/internal/circuit"
	"github.com/heraldhq/herald/internal/outbound"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/internal/sqsbatch"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/notification"
	"github.com/heraldhq/herald/producer"
)

// Names of the environment variables other packages' errors refer to.
const (
	EnvSharedQueueURL     = "HERALD_QUEUE_URL"
	EnvDeadLetterQueueURL = "HERALD_DLQ_URL"
	EnvMaxReceiveCount    = "HERALD_MAX_RECEIVE_COUNT"
	EnvBackoffBase        = "HERALD_BACKOFF_BASE_SECONDS"
	EnvBackoffCap         = "HERALD_BACKOFF_CAP_SECONDS"
	EnvBatchingWindow     = "HERALD_BATCHING_WINDOW_SECONDS"
)

// EnvQueueURL is the variable naming channel c's queue:
// HERALD_<CHANNEL>_QUEUE_URL, such as HERALD_EMAIL_QUEUE_URL.
func EnvQueueURL(c notification.Channel) string { return producer.QueueURLEnv(c) }

// EnvChannelDeadLetterQueueURL is the variable naming the dead-letter queue
// of channel c's queue: HERALD_<CHANNEL>_DLQ_URL, such as
// HERALD_EMAIL_DLQ_URL.
func EnvChannelDeadLetterQueueURL(c notification.Channel) string {
	return producer.DeadLetterQueueURLEnv(c)
}

// maxBackoffSeconds is the longest backoff setting: backoff.MaxDelay.
const maxBackoffSeconds = int(backoff.MaxDelay / time.Second)

// Deliver is the configuration of the deliver function.
type Deliver struct {
	// QueueURL is a queue of every channel (HERALD_QUEUE_URL): the single
	// queue of herald before each channel had its own, kept for a
	// deployment moving to channel queues (docs/deploy.md). Optional when
	// Queues has a queue.
	QueueURL string
	// DeadLetterQueueURL is its dead-letter queue (HERALD_DLQ_URL).
	// Required with QueueURL.
	DeadLetterQueueURL string
	// Queues are the channels' queues, each with its dead-letter queue
	// (HERALD_<CHANNEL>_QUEUE_URL and HERALD_<CHANNEL>_DLQ_URL, both or
	// neither, for each channel of DeliverChannels), in that order.
	// At least one queue, here or QueueURL, is required.
	Queues []redrive.Queue
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
	// (HERALD_CONCURRENCY, 1–1000). Defaults to sqsbatch.DefaultConcurrency
	// (100).
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
	// WebhookTimeout bounds one webhook or chat request
	// (HERALD_WEBHOOK_TIMEOUT_MS, 100–900000, the upper end
	// outbound.MaxTimeout). Defaults to outbound.DefaultTimeout (15000 ms).
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
	// WebhookStopStatuses are response statuses, besides 410 Gone, that
	// dead-letter a webhook at once instead of retrying it
	// (HERALD_WEBHOOK_STOP_STATUSES, comma-separated, each 300–599, such as
	// "404,301"; docs/delivery.md). Defaults to none: every other non-2xx
	// status is retried, as the Standard Webhooks specification advises.
	WebhookStopStatuses []int
	// WebhookSecretScope is "destination" (each webhook origin gets its own
	// key, derived with HKDF from each signing secret: `herald secret
	// derive URL` prints it) or "shared" (every receiver installs the
	// signing secret itself) (HERALD_WEBHOOK_SECRET_SCOPE; docs/security.md).
	// Defaults to destination: with one shared key any receiver can forge
	// webhooks that every other receiver accepts.
	WebhookSecretScope webhook.SecretScope
	// FunctionTimeout is the deliver function's timeout
	// (HERALD_FUNCTION_TIMEOUT_SECONDS, 0–900), for the cold-start check
	// of the queue's visibility timeout; Lambda does not tell a function
	// its timeout before an invocation. Defaults to 0: not checked.
	FunctionTimeout time.Duration
	// BatchingWindow is the event source mapping's
	// MaximumBatchingWindowInSeconds (HERALD_BATCHING_WINDOW_SECONDS,
	// 0–300), for the same check: the visibility timeout must be at least
	// 6 × FunctionTimeout + BatchingWindow. Defaults to 0.
	BatchingWindow time.Duration
	// WebhookMaxInFlightPerDestination bounds the webhook requests in flight
	// to one destination (scheme, host and port) at once, whatever
	// Concurrency is (HERALD_WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION,
	// 1–webhook.MaxMaxInFlightPerDestination). Defaults to
	// webhook.DefaultMaxInFlightPerDestination (100).
	WebhookMaxInFlightPerDestination int
	// ChatAllowHosts are host names chat webhooks may use besides each
	// service's own (hooks.slack.com; discord.com, discordapp.com;
	// *.webhook.office.com, *.logic.azure.com,
	// *.environment.api.powerplatform.com): exact names or ".suffix" for
	// every name under suffix (HERALD_CHAT_ALLOW_HOSTS, comma-separated, such
	// as "127.0.0.1" for a local receiver or "chat-proxy.example.com"). The
	// destination check of HERALD_WEBHOOK_ALLOW_CIDRS and
	// HERALD_WEBHOOK_ALLOW_HTTP apply to chat webhooks too. Defaults to none:
	// each service's own hosts only.
	ChatAllowHosts []string
	// StoreTable is the name of herald's DynamoDB table (HERALD_STORE_TABLE;
	// package store). Defaults to empty: no store, and every copy SQS hands
	// over is sent (at least once).
	StoreTable string
	// DeliveredOnceWindow is how long the store remembers a delivered
	// notification, so that a copy SQS hands over within it is not sent
	// again (HERALD_DELIVERED_ONCE_WINDOW_SECONDS, 0–1209600: SQS keeps a
	// message 14 days at most). 0 turns delivered-once off. Defaults to
	// 86400 s (24 h).
	DeliveredOnceWindow time.Duration
	// DeliveredOnceChannels are the channels delivered once
	// (HERALD_DELIVERED_ONCE_CHANNELS, comma-separated channel names; needs
	// HERALD_STORE_TABLE and a window). A copy of another channel's
	// notification is sent again. Defaults to [DefaultDeliveredOnceChannels]:
	// email and chat, not webhook, whose receivers deduplicate on
	// webhook-id (docs/reliability.md "Delivered once"); nil in a Deliver
	// built in code: every channel.
	DeliveredOnceChannels []notification.Channel
	// SendOnStoreError sends a notification whose lease the store could not
	// take (it failed or throttled) without one, instead of retrying it
	// later (HERALD_ON_STORE_ERROR, "retry" or "send"; docs/reliability.md).
	// Defaults to retry: nothing is sent that might have been sent.
	SendOnStoreError bool
	// CircuitThreshold is how many consecutive failures that say a webhook
	// or chat origin is down (5xx, 408, 429, timeout, DNS, connection,
	// TLS) open its circuit (HERALD_CIRCUIT_THRESHOLD, 0–1000; needs
	// HERALD_STORE_TABLE). 0 turns the circuit off. Defaults to
	// circuit.DefaultThreshold (10; docs/configuration.md).
	CircuitThreshold int
	// CircuitProbeInterval is how long after an open circuit's last
	// failure one probe is let through
	// (HERALD_CIRCUIT_PROBE_INTERVAL_SECONDS, 1–43200). Defaults to 60 s.
	CircuitProbeInterval time.Duration
	// DestinationDisableAfter disables a webhook or chat origin whose
	// circuit is open and whose failures began this long ago with no
	// success since (HERALD_DESTINATION_DISABLE_AFTER_SECONDS, 0–2592000;
	// needs the circuit). 0 never disables one automatically. Defaults to
	// circuit.DefaultDisableAfter (5 days).
	DestinationDisableAfter time.Duration
	// EventBus is the Amazon EventBridge event bus (name or ARN) that
	// destination.disabled events go to (HERALD_EVENT_BUS; package
	// announce). Defaults to "": no events are published.
	EventBus string
}

// DefaultDeliveredOnceChannels is HERALD_DELIVERED_ONCE_CHANNELS' default:
// a person cannot deduplicate two emails or two chat messages, and an
// email costs SES $0.10 per thousand, against which the table's write is
// under 1 %; a Standard Webhooks receiver deduplicates on webhook-id, and
// the table's write would be most of a webhook's cost
// (docs/benchmarks.md).
var DefaultDeliveredOnceChannels = []notification.Channel{notification.ChannelEmail, notification.ChannelChat}

// Store values of HERALD_ON_STORE_ERROR.
const (
	OnStoreErrorRetry = "retry"
	OnStoreErrorSend  = "send"
)

// maxDeliveredOnceWindowSeconds is SQS's longest message retention, 14
// days: no copy of a message comes later.
const maxDeliveredOnceWindowSeconds = 14 * 24 * 3600

// maxDisableAfterSeconds is 30 days: a health item is kept 30 days after
// its last write (store.HealthRetention).
const maxDisableAfterSeconds = 30 * 24 * 3600

// DeliveredOnce reports whether the deliver function delivers each
// notification once: a table is named and the window is not 0.
func (d Deliver) DeliveredOnce() bool { return d.StoreTable != "" && d.DeliveredOnceWindow > 0 }

// Circuit reports whether the deliver function keeps origin health and
// opens circuits: a table is named and the threshold is not 0.
func (d Deliver) Circuit() bool { return d.StoreTable != "" && d.CircuitThreshold > 0 }

// Backoff returns the retry schedule the settings describe.
func (d Deliver) Backoff() backoff.Policy {
	return backoff.Policy{Base: d.BackoffBase, Cap: d.BackoffCap, Jitter: backoff.DefaultJitter}.WithDefaults()
}

// Retention is the configuration of the retention function.
type Retention struct {
	// DeadLetterQueueURLs are the queues swept: each channel's dead-letter
	// queue (HERALD_<CHANNEL>_DLQ_URL), then HERALD_DLQ_URL's, those that
	// are set. At least one is required.
	DeadLetterQueueURLs []string
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
		QueueURL:              strings.TrimSpace(getenv(EnvSharedQueueURL)),
		DeadLetterQueueURL:    strings.TrimSpace(getenv(EnvDeadLetterQueueURL)),
		Queues:                r.channelQueues(),
		MaxReceiveCount:       r.integer(EnvMaxReceiveCount, 13, 1, 1000),
		BackoffBase:           time.Duration(r.integer(EnvBackoffBase, 60, 1, maxBackoffSeconds)) * time.Second,
		BackoffCap:            time.Duration(r.integer(EnvBackoffCap, 21600, 1, maxBackoffSeconds)) * time.Second,
		Concurrency:           r.integer("HERALD_CONCURRENCY", sqsbatch.DefaultConcurrency, 1, 1000),
		EmailDefaultFrom:      strings.TrimSpace(getenv("HERALD_EMAIL_DEFAULT_FROM")),
		EmailConfigurationSet: strings.TrimSpace(getenv("HERALD_EMAIL_CONFIGURATION_SET")),
		WebhookSecret:         strings.TrimSpace(getenv("HERALD_WEBHOOK_SECRET")),
		WebhookSecretARN:      strings.TrimSpace(getenv("HERALD_WEBHOOK_SECRET_ARN")),
		WebhookTimeout:        time.Duration(r.integer("HERALD_WEBHOOK_TIMEOUT_MS", int(outbound.DefaultTimeout/time.Millisecond), 100, int(outbound.MaxTimeout/time.Millisecond))) * time.Millisecond,
		WebhookAllowCIDRs:     r.prefixes("HERALD_WEBHOOK_ALLOW_CIDRS"),
		WebhookAllowHTTP:      r.boolean("HERALD_WEBHOOK_ALLOW_HTTP", false),
		CheckQueues:           r.boolean("HERALD_CHECK_QUEUES", true),
		LogLevel:              r.level("HERALD_LOG_LEVEL"),
		WebhookStopStatuses:   r.statuses("HERALD_WEBHOOK_STOP_STATUSES", webhook.MinStopStatus, webhook.MaxStopStatus),
		WebhookSecretScope:    r.secretScope(),
		FunctionTimeout:       time.Duration(r.integer("HERALD_FUNCTION_TIMEOUT_SECONDS", 0, 0, 900)) * time.Second,
		BatchingWindow:        time.Duration(r.integer(EnvBatchingWindow, 0, 0, 300)) * time.Second,
		WebhookMaxInFlightPerDestination: r.integer("HERALD_WEBHOOK_MAX_IN_FLIGHT_PER_DESTINATION",
			webhook.DefaultMaxInFlightPerDestination, 1, webhook.MaxMaxInFlightPerDestination),
		ChatAllowHosts: r.hosts("HERALD_CHAT_ALLOW_HOSTS"),
		StoreTable:     strings.TrimSpace(getenv("HERALD_STORE_TABLE")),
		DeliveredOnceWindow: time.Duration(r.integer("HERALD_DELIVERED_ONCE_WINDOW_SECONDS",
			int(store.DefaultWindow/time.Second), 0, maxDeliveredOnceWindowSeconds)) * time.Second,
		DeliveredOnceChannels: r.channels("HERALD_DELIVERED_ONCE_CHANNELS", DefaultDeliveredOnceChannels),
		SendOnStoreError:      r.oneOf("HERALD_ON_STORE_ERROR", OnStoreErrorRetry, OnStoreErrorRetry, OnStoreErrorSend) == OnStoreErrorSend,
		CircuitThreshold:      r.integer("HERALD_CIRCUIT_THRESHOLD", circuit.DefaultThreshold, 0, 1000),
		CircuitProbeInterval: time.Duration(r.integer("HERALD_CIRCUIT_PROBE_INTERVAL_SECONDS",
			int(circuit.DefaultProbeInterval/time.Second), 1, 43200)) * time.Second,
		DestinationDisableAfter: time.Duration(r.integer("HERALD_DESTINATION_DISABLE_AFTER_SECONDS",
			int(circuit.DefaultDisableAfter/time.Second), 0, maxDisableAfterSeconds)) * time.Second,
		EventBus: strings.TrimSpace(getenv("HERALD_EVENT_BUS")),
	}
	switch {
	case d.QueueURL == "" && len(d.Queues) == 0:
		r.problem(EnvQueueURL(notification.Channels[0]), "required: a queue for each channel (HERALD_<CHANNEL>_QUEUE_URL), or "+EnvSharedQueueURL+" for one queue of every channel")
	case d.QueueURL != "" && d.DeadLetterQueueURL == "":
		r.problem(EnvDeadLetterQueueURL, "required with "+EnvSharedQueueURL)
	case d.QueueURL == "" && d.DeadLetterQueueURL != "":
		r.problem(EnvSharedQueueURL, "required with "+EnvDeadLetterQueueURL)
	}
	switch {
	case d.WebhookSecret == "" && d.WebhookSecretARN == "":
		r.problem("HERALD_WEBHOOK_SECRET", "required, or HERALD_WEBHOOK_SECRET_ARN instead")
	case d.WebhookSecret != "" && d.WebhookSecretARN != "":
		r.problem("HERALD_WEBHOOK_SECRET", "set together with HERALD_WEBHOOK_SECRET_ARN; set only one")
	case strings.Contains(d.WebhookSecretARN, webhook.SecretPrefix):
		// The secret itself: a setup error is logged, so it is not quoted.
		r.problem("HERALD_WEBHOOK_SECRET_ARN", "holds a secret ("+webhook.SecretPrefix+"…), not its ARN: give the secret as HERALD_WEBHOOK_SECRET, or store it in Secrets Manager and give its ARN here")
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
		MaxAge:   time.Duration(r.integer("HERALD_DLQ_MAX_AGE_HOURS", 168, 1, 336)) * time.Hour,
		LogLevel: r.level("HERALD_LOG_LEVEL"),
	}
	for _, c2 := range notification.Channels {
		if u := strings.TrimSpace(getenv(EnvChannelDeadLetterQueueURL(c2))); u != "" {
			c.DeadLetterQueueURLs = append(c.DeadLetterQueueURLs, u)
		}
	}
	if u := strings.TrimSpace(getenv(EnvDeadLetterQueueURL)); u != "" {
		c.DeadLetterQueueURLs = append(c.DeadLetterQueueURLs, u)
	}
	if len(c.DeadLetterQueueURLs) == 0 {
		r.problem(EnvChannelDeadLetterQueueURL(notification.Channels[0]), "required: each channel's dead-letter queue (HERALD_<CHANNEL>_DLQ_URL), or "+EnvDeadLetterQueueURL)
	}
	return c, r.err()
}

// Fanout is the configuration of the fan-out function, which turns each
// event of the event queue into one delivery per subscribed endpoint
// (package fanout).
type Fanout struct {
	// EventQueue is the event queue and its dead-letter queue
	// (HERALD_EVENT_QUEUE_URL and HERALD_EVENT_DLQ_URL). Required.
	EventQueue redrive.Queue
	// WebhookQueueURL and ChatQueueURL are the queues the deliveries go to
	// (HERALD_WEBHOOK_QUEUE_URL, HERALD_CHAT_QUEUE_URL). Required.
	WebhookQueueURL, ChatQueueURL string
	// StoreTable is the table of the endpoints and the fan-outs' progress
	// (HERALD_STORE_TABLE). Required.
	StoreTable string
	// MaxReceiveCount, BackoffBase, BackoffCap, Concurrency and LogLevel
	// as for Deliver (HERALD_MAX_RECEIVE_COUNT, HERALD_BACKOFF_BASE_SECONDS,
	// HERALD_BACKOFF_CAP_SECONDS, HERALD_CONCURRENCY, HERALD_LOG_LEVEL);
	// Concurrency defaults to DefaultFanoutConcurrency.
	MaxReceiveCount int
	BackoffBase     time.Duration
	BackoffCap      time.Duration
	Concurrency     int
	LogLevel        slog.Level
	// Window is how long a finished fan-out is remembered
	// (HERALD_DELIVERED_ONCE_WINDOW_SECONDS, 1–1209600): a copy of the
	// event within it creates nothing. Defaults to 86400 s (24 h).
	Window time.Duration
}

// DefaultFanoutConcurrency is the fan-out function's HERALD_CONCURRENCY
// default: events of a batch fanned out at once, each a sequence of
// batches of 10 deliveries.
const DefaultFanoutConcurrency = 10

// Backoff returns the retry schedule the settings describe.
func (f Fanout) Backoff() backoff.Policy {
	return backoff.Policy{Base: f.BackoffBase, Cap: f.BackoffCap, Jitter: backoff.DefaultJitter}.WithDefaults()
}

// LoadFanout reads the fan-out function's settings through getenv. It
// returns every problem found, joined.
func LoadFanout(getenv func(string) string) (Fanout, error) {
	r := reader{getenv: getenv}
	f := Fanout{
		WebhookQueueURL: strings.TrimSpace(getenv(EnvQueueURL(notification.ChannelWebhook))),
		ChatQueueURL:    strings.TrimSpace(getenv(EnvQueueURL(notification.ChannelChat))),
		StoreTable:      strings.TrimSpace(getenv("HERALD_STORE_TABLE")),
		MaxReceiveCount: r.integer(EnvMaxReceiveCount, 13, 1, 1000),
		BackoffBase:     time.Duration(r.integer(EnvBackoffBase, 60, 1, maxBackoffSeconds)) * time.Second,
		BackoffCap:      time.Duration(r.integer(EnvBackoffCap, 21600, 1, maxBackoffSeconds)) * time.Second,
		Concurrency:     r.integer("HERALD_CONCURRENCY", DefaultFanoutConcurrency, 1, 1000),
		LogLevel:        r.level("HERALD_LOG_LEVEL"),
		Window: time.Duration(r.integer("HERALD_DELIVERED_ONCE_WINDOW_SECONDS",
			int(store.DefaultWindow/time.Second), 1, maxDeliveredOnceWindowSeconds)) * time.Second,
	}
	before := len(r.problems)
	qs := r.queuesOf([]notification.Channel{notification.ChannelEvent})
	if len(qs) == 1 {
		f.EventQueue = qs[0]
	} else if len(r.problems) == before { // neither given
		r.problem(EnvQueueURL(notification.ChannelEvent), "required, with "+EnvChannelDeadLetterQueueURL(notification.ChannelEvent))
	}
	for _, v := range []struct{ name, value string }{
		{EnvQueueURL(notification.ChannelWebhook), f.WebhookQueueURL},
		{EnvQueueURL(notification.ChannelChat), f.ChatQueueURL},
		{"HERALD_STORE_TABLE", f.StoreTable},
	} {
		if v.value == "" {
			r.problem(v.name, "required by the fan-out function")
		}
	}
	if f.BackoffBase > f.BackoffCap {
		r.problem(EnvBackoffBase, fmt.Sprintf("%d is above %s (%d)", int(f.BackoffBase.Seconds()), EnvBackoffCap, int(f.BackoffCap.Seconds())))
	}
	return f, r.err()
}

// Feedback is the configuration of the feedback function, which logs the
// SES events of herald's email.
type Feedback struct {
	// LogLevel as for Deliver (HERALD_LOG_LEVEL).
	LogLevel slog.Level
}

// LoadFeedback reads the feedback function's settings through getenv.
func LoadFeedback(getenv func(string) string) (Feedback, error) {
	r := reader{getenv: getenv}
	c := Feedback{LogLevel: r.level("HERALD_LOG_LEVEL")}
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

// WebhookSecretScope reads HERALD_WEBHOOK_SECRET_SCOPE through getenv as
// [LoadDeliver] does (case and surrounding space ignored; empty:
// webhook.ScopeDestination), for the herald commands that must agree with
// the deliver function on it. It returns an error naming the variable when
// the value is neither scope.
func WebhookSecretScope(getenv func(string) string) (webhook.SecretScope, error) {
	r := reader{getenv: getenv}
	scope := r.secretScope()
	return scope, r.err()
}

func (r *reader) secretScope() webhook.SecretScope {
	return webhook.SecretScope(r.oneOf("HERALD_WEBHOOK_SECRET_SCOPE", string(webhook.ScopeDestination), string(webhook.ScopeDestination), string(webhook.ScopeShared)))
}

// DeliverChannels are the channels the deliver function sends:
// notification.Channels but the event channel, whose queue the fan-out
// function reads (LoadFanout) and turns into deliveries on the others.
var DeliverChannels = func() []notification.Channel {
	var out []notification.Channel
	for _, c := range notification.Channels {
		if c != notification.ChannelEvent {
			out = append(out, c)
		}
	}
	return out
}()

// channelQueues reads the queue and dead-letter queue URLs of each channel
// of DeliverChannels, both or neither.
func (r *reader) channelQueues() []redrive.Queue {
	return r.queuesOf(DeliverChannels)
}

// queuesOf reads the queue and dead-letter queue URLs of each channel of
// chans, both or neither.
func (r *reader) queuesOf(chans []notification.Channel) []redrive.Queue {
	var out []redrive.Queue
	for _, c := range chans {
		q := redrive.Queue{Channel: c, URL: strings.TrimSpace(r.getenv(EnvQueueURL(c))), DeadLetterURL: strings.TrimSpace(r.getenv(EnvChannelDeadLetterQueueURL(c)))}
		switch {
		case q.URL == "" && q.DeadLetterURL == "":
			continue
		case q.URL == "":
			r.problem(EnvQueueURL(c), "required with "+EnvChannelDeadLetterQueueURL(c))
		case q.DeadLetterURL == "":
			r.problem(EnvChannelDeadLetterQueueURL(c), "required with "+EnvQueueURL(c))
		default:
			out = append(out, q)
		}
	}
	return out
}

// DeadLetterQueueURLs returns every dead-letter queue of d: each channel
// queue's, then the queue of every channel's.
func (d Deliver) DeadLetterQueueURLs() []string {
	var out []string
	for _, q := range d.AllQueues() {
		out = append(out, q.DeadLetterURL)
	}
	return out
}

// AllQueues returns d's queues: each channel's, then the queue of every
// channel (QueueURL) when set.
func (d Deliver) AllQueues() []redrive.Queue {
	out := append([]redrive.Queue(nil), d.Queues...)
	if d.QueueURL != "" {
		out = append(out, redrive.Queue{URL: d.QueueURL, DeadLetterURL: d.DeadLetterQueueURL})
	}
	return out
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
// outbound.ParseAllowCIDR (which holds the rules); empty entries are skipped.
func (r *reader) prefixes(name string) []netip.Prefix {
	var out []netip.Prefix
	for _, s := range strings.Split(r.getenv(name), ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		p, err := outbound.ParseAllowCIDR(s)
		if err != nil {
			r.problem(name, fmt.Sprintf("%q: %v; comma-separated", s, err))
			continue
		}
		out = append(out, p)
	}
	return out
}

// hosts reads a comma-separated list of host names (chat.CheckAllowHost);
// empty entries are skipped.
func (r *reader) hosts(name string) []string {
	var out []string
	for _, s := range strings.Split(r.getenv(name), ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		if err := chat.CheckAllowHost(s); err != nil {
			r.problem(name, err.Error()+"; comma-separated")
			continue
		}
		out = append(out, s)
	}
	return out
}

// channels reads a comma-separated list of channel names
// (DeliverChannels), each at most once; empty or unset is def.
func (r *reader) channels(name string, def []notification.Channel) []notification.Channel {
	var out []notification.Channel
	for _, s := range strings.Split(r.getenv(name), ",") {
		c := notification.Channel(strings.ToLower(strings.TrimSpace(s)))
		switch {
		case c == "":
			continue
		case !slices.Contains(DeliverChannels, c):
			r.problem(name, fmt.Sprintf("%q: want channel names (%s), comma-separated", s, channelNames()))
			continue
		case slices.Contains(out, c):
			r.problem(name, fmt.Sprintf("%q named twice", c))
			continue
		}
		out = append(out, c)
	}
	if len(out) == 0 {
		return slices.Clone(def)
	}
	return out
}

// channelNames is DeliverChannels, comma-separated.
func channelNames() string {
	names := make([]string, len(DeliverChannels))
	for i, c := range DeliverChannels {
		names[i] = string(c)
	}
	return strings.Join(names, ", ")
}

// statuses reads a comma-separated list of HTTP status codes, each from lo
// to hi; empty entries are skipped.
func (r *reader) statuses(name string, lo, hi int) []int {
	var out []int
	for _, s := range strings.Split(r.getenv(name), ",") {
		s = strings.TrimSpace(s)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < lo || n > hi {
			r.problem(name, fmt.Sprintf("%q: want HTTP status codes from %d to %d, comma-separated (such as 404,301)", s, lo, hi))
			continue
		}
		out = append(out, n)
	}
	return out
}

// oneOf reads one of the allowed values, case-insensitively.
func (r *reader) oneOf(name, def string, allowed ...string) string {
	s := strings.ToLower(strings.TrimSpace(r.getenv(name)))
	if s == "" {
		return def
	}
	for _, a := range allowed {
		if s == a {
			return s
		}
	}
	r.problem(name, fmt.Sprintf("%q: want %s", s, strings.Join(allowed, " or ")))
	return def
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
