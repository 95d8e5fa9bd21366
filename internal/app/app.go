// Package app wires herald's functions from their configuration: the same
// wiring serves the Lambda entry points in functions/, the local runner and
// the demo.
package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/heraldhq/herald/internal/announce"
	"github.com/heraldhq/herald/internal/chat"
	"github.com/heraldhq/herald/internal/circuit"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/email"
	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/endpointsend"
	"github.com/heraldhq/herald/internal/fanout"
	"github.com/heraldhq/herald/internal/once"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/internal/retention"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/tracing"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/notification"
)

// AWSConfig loads the SDK's default configuration chain: credentials,
// region, and the standard endpoint variables (AWS_ENDPOINT_URL,
// AWS_ENDPOINT_URL_SQS, AWS_ENDPOINT_URL_SESV2,
// AWS_ENDPOINT_URL_SECRETS_MANAGER, AWS_ENDPOINT_URL_DYNAMODB) that point
// herald at LocalStack or another emulator.
func AWSConfig(ctx context.Context) (aws.Config, error) {
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS config: %w", err)
	}
	return cfg, nil
}

// StoreClient is the DynamoDB client of the deliver function's store
// (package store): awsCfg's, keeping up to conns idle connections to the
// table's endpoint (at least the SDK's 10), conns being how many records a
// batch delivers at once (HERALD_CONCURRENCY). A batch claims each record's
// lease at the same moment; with the SDK's 10 idle connections per host, a
// batch of 100 would open 90 new TLS connections to DynamoDB each time,
// and their handshakes would cost more CPU than the calls.
func StoreClient(awsCfg aws.Config, conns int) *dynamodb.Client {
	return dynamodb.NewFromConfig(awsCfg, func(o *dynamodb.Options) {
		bc, ok := o.HTTPClient.(*awshttp.BuildableClient)
		switch {
		case o.HTTPClient == nil:
			bc = awshttp.NewBuildableClient()
		case !ok:
			return // a client of the caller's own: left as it is
		}
		o.HTTPClient = bc.WithTransportOptions(func(t *http.Transport) {
			t.MaxIdleConnsPerHost = max(t.MaxIdleConnsPerHost, conns)
			t.MaxIdleConns = max(t.MaxIdleConns, conns)
		})
	})
}

// Logger returns the JSON logger the functions write to standard output:
// LoggerTo(os.Stdout, level).
func Logger(level slog.Level) *slog.Logger { return LoggerTo(os.Stdout, level) }

// LoggerTo returns a JSON logger of lines at level and above to w, shaped
// for CloudWatch Logs, where every byte is billed: no "time" member, since
// Lambda stamps every log event (@timestamp) and adds a timestamp itself to
// a JSON line without one; and no "level" on INFO lines, the level Lambda
// gives a JSON line without one
// (https://docs.aws.amazon.com/lambda/latest/dg/monitoring-cloudwatchlogs-log-level.html),
// so Lambda's log-level filtering reads every line as before. Together some
// 60 bytes of every line.
func LoggerTo(w io.Writer, level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: level, ReplaceAttr: lambdaAttr}))
}

// lambdaAttr drops the record's time, and its level when INFO.
func lambdaAttr(groups []string, a slog.Attr) slog.Attr {
	if len(groups) > 0 {
		return a
	}
	switch a.Key {
	case slog.TimeKey:
		return slog.Attr{}
	case slog.LevelKey:
		if l, ok := a.Value.Any().(slog.Level); ok && l == slog.LevelInfo {
			return slog.Attr{}
		}
	}
	return a
}

// DeliverOptions adjust the deliver function's wiring for local use.
type DeliverOptions struct {
	// WebhookTLS, when set, replaces the system roots for webhook requests:
	// the demo and tests use it to trust their local receivers.
	WebhookTLS *tls.Config
	// Logger replaces the JSON logger on standard output.
	Logger *slog.Logger
	// Pauser pauses a channel's queue whose transport refuses every send
	// (processor.Config.Pauser); the deliver function gives package
	// pause's. Nil: such failures are retried on their schedule.
	Pauser processor.Pauser
	// Tracing, when set, traces each record, send and AWS call (package
	// tracing). Nil: nothing is traced.
	Tracing *tracing.Tracing
}

// NewDeliver builds the deliver function's processor: NewDeliverContext
// with context.Background().
func NewDeliver(cfg config.Deliver, awsCfg aws.Config, opts DeliverOptions) (*processor.Processor, error) {
	return NewDeliverContext(context.Background(), cfg, awsCfg, opts)
}

// NewDeliverContext builds the deliver function's processor. When
// cfg.WebhookSecretARN is set it reads the signing secrets from AWS Secrets
// Manager (secretsmanager:GetSecretValue) once, here, within ctx and at most
// 5 s; the processor keeps them for its lifetime. Errors name the variable
// and the ARN, never a secret. A channel whose setup fails fails the whole
// build here; [NewDeliverChannels] starts the others.
func NewDeliverContext(ctx context.Context, cfg config.Deliver, awsCfg aws.Config, opts DeliverOptions) (*processor.Processor, error) {
	p, down, err := NewDeliverChannels(ctx, cfg, awsCfg, opts)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, c := range notification.Channels {
		if down[c] != nil {
			errs = append(errs, down[c])
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return p, nil
}

// NewDeliverChannels builds the deliver function's processor with a sender
// for each channel whose setup succeeds, and returns the setup error of each
// other channel (email: "email sender: …"; webhook: "webhook signing
// secret: …" or "webhook sender …"; chat: "chat sender: …"): the function pauses those channels'
// queues alone (package pause, Gate). It returns an error when the
// processor itself cannot be built.
func NewDeliverChannels(ctx context.Context, cfg config.Deliver, awsCfg aws.Config, opts DeliverOptions) (*processor.Processor, map[notification.Channel]error, error) {
	logger := opts.Logger
	if logger == nil {
		logger = Logger(cfg.LogLevel)
	}
	if opts.Tracing != nil {
		// Every client built below traces its calls.
		awsCfg = awsCfg.Copy()
		awsCfg.APIOptions = append(awsCfg.APIOptions, opts.Tracing.AWSMiddleware)
	}
	senders := map[notification.Channel]processor.Sender{}
	down := map[notification.Channel]error{}
	if mail, err := email.NewSender(sesv2.NewFromConfig(awsCfg), email.Config{
		DefaultFrom:      cfg.EmailDefaultFrom,
		ConfigurationSet: cfg.EmailConfigurationSet,
	}); err != nil {
		down[notification.ChannelEmail] = fmt.Errorf("email sender: %w", err)
	} else {
		senders[notification.ChannelEmail] = mail
	}
	// The store, when configured, keeps each webhook origin's key versions
	// and, with a window, the delivered-once records.
	var st *store.Store
	db := StoreClient(awsCfg, cfg.Concurrency)
	if cfg.StoreTable != "" {
		var err error
		if st, err = store.New(db, store.Config{Table: cfg.StoreTable, Window: cfg.DeliveredOnceWindow}); err != nil {
			return nil, nil, fmt.Errorf("store: %w", err)
		}
	}
	// Deliveries that name a registered endpoint are resolved around each
	// channel's sender (package endpointsend).
	endpoints, err := endpointConfig(awsCfg, cfg.StoreTable, db, st)
	if err != nil {
		return nil, nil, err
	}
	if hook, err := newWebhookSender(ctx, cfg, awsCfg, opts, st); err != nil {
		down[notification.ChannelWebhook] = err
	} else {
		senders[notification.ChannelWebhook] = endpointsend.ForWebhook(hook, endpoints)
	}
	chatCfg := chat.Config{
		Timeout:         cfg.WebhookTimeout,
		TLSClientConfig: opts.WebhookTLS,
		AllowCIDRs:      cfg.WebhookAllowCIDRs,
		AllowHTTP:       cfg.WebhookAllowHTTP,
		AllowHosts:      cfg.ChatAllowHosts,
	}
	if st != nil {
		// Each chat webhook's pace is shared by every environment: one
		// conditional write per post (docs/delivery.md, "Rate limits").
		chatCfg.Pace = st
	}
	if chatSender, err := chat.NewSender(chatCfg); err != nil {
		down[notification.ChannelChat] = fmt.Errorf("chat sender: %w", err)
	} else {
		senders[notification.ChannelChat] = endpointsend.ForChat(chatSender, endpoints)
	}
	// The middlewares around every send, the circuit outermost: a record
	// its destination's circuit holds back takes no lease.
	var mw []processor.Middleware
	if st != nil && cfg.Circuit() {
		ccfg := circuit.Config{
			Rules:  circuit.Rules{Threshold: cfg.CircuitThreshold, ProbeInterval: cfg.CircuitProbeInterval, DisableAfter: cfg.DestinationDisableAfter},
			Health: st, Logger: logger,
		}
		if cfg.EventBus != "" {
			pub, err := announce.New(eventbridge.NewFromConfig(awsCfg), cfg.EventBus)
			if err != nil {
				return nil, nil, err
			}
			ccfg.Announcer = pub
		}
		b, err := circuit.New(ccfg)
		if err != nil {
			return nil, nil, err
		}
		mw = append(mw, processor.Middleware{Wrap: func(next processor.Sender) processor.Sender { return b.Wrap(next) }})
	}
	if st != nil && cfg.DeliveredOnce() {
		o, err := once.New(once.Config{Store: st, Channels: cfg.DeliveredOnceChannels, SendOnStoreError: cfg.SendOnStoreError})
		if err != nil {
			return nil, nil, err
		}
		mw = append(mw, processor.Middleware{Wrap: func(next processor.Sender) processor.Sender { return o.Wrap(next) }, StartBatch: o.StartBatch})
	}
	var tracer processor.Tracer // nil unless traced: a nil *Tracing would not be nil
	if opts.Tracing != nil {
		tracer = opts.Tracing
		for c, s := range senders {
			senders[c] = opts.Tracing.Sender(s)
		}
	}
	p, err := processor.New(sqs.NewFromConfig(awsCfg), processor.Config{
		QueueURL:           cfg.QueueURL,
		DeadLetterQueueURL: cfg.DeadLetterQueueURL,
		Queues:             cfg.Queues,
		MaxReceiveCount:    cfg.MaxReceiveCount,
		Backoff:            cfg.Backoff(),
		Concurrency:        cfg.Concurrency,
		Senders:            senders,
		Pauser:             opts.Pauser,
		Middleware:         mw,
		Tracer:             tracer,
		Logger:             logger,
	})
	if err != nil {
		return nil, nil, err
	}
	return p, down, nil
}

func newWebhookSender(ctx context.Context, cfg config.Deliver, awsCfg aws.Config, opts DeliverOptions, st *store.Store) (*webhook.Sender, error) {
	secrets, source, err := WebhookSecrets(ctx, cfg, awsCfg)
	if err != nil {
		return nil, fmt.Errorf("webhook signing secret: %w", err)
	}
	wcfg := webhook.Config{
		Secrets:                   secrets,
		Timeout:                   cfg.WebhookTimeout,
		TLSClientConfig:           opts.WebhookTLS,
		AllowCIDRs:                cfg.WebhookAllowCIDRs,
		AllowHTTP:                 cfg.WebhookAllowHTTP,
		SecretScope:               cfg.WebhookSecretScope,
		StopStatuses:              cfg.WebhookStopStatuses,
		MaxInFlightPerDestination: cfg.WebhookMaxInFlightPerDestination,
	}
	if st != nil { // a nil *store.Store in the interface would not be nil
		wcfg.KeyVersions = st
	}
	hook, err := webhook.NewSender(wcfg)
	if err != nil {
		return nil, fmt.Errorf("webhook sender (secrets from %s): %w", source, err)
	}
	return hook, nil
}

// NewRetention builds the retention function's sweepers, one per
// dead-letter queue, in cfg's order.
func NewRetention(cfg config.Retention, awsCfg aws.Config, logger *slog.Logger) ([]*retention.Sweeper, error) {
	if logger == nil {
		logger = Logger(cfg.LogLevel)
	}
	client := sqs.NewFromConfig(awsCfg)
	out := make([]*retention.Sweeper, 0, len(cfg.DeadLetterQueueURLs))
	for _, u := range cfg.DeadLetterQueueURLs {
		s, err := retention.New(client, retention.Config{QueueURL: u, MaxAge: cfg.MaxAge, Logger: logger})
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// NewFanout builds the fan-out function's processor: the event queue's
// records, parsed, expired ones dropped, invalid ones dead-lettered with
// their reason and failures retried with the deliver function's backoff,
// each event fanned out by package fanout to the webhook and chat queues,
// with its progress and the endpoints in the stack's table (the endpoint
// an event names is read with its sealed attributes: kms:Decrypt).
func NewFanout(cfg config.Fanout, awsCfg aws.Config, logger *slog.Logger) (*processor.Processor, error) {
	if logger == nil {
		logger = Logger(cfg.LogLevel)
	}
	db := StoreClient(awsCfg, cfg.Concurrency)
	endpoints, err := endpoint.NewTable(endpoint.TableConfig{Table: cfg.StoreTable, DB: db, KMS: kms.NewFromConfig(awsCfg)})
	if err != nil {
		return nil, err
	}
	q := sqs.NewFromConfig(awsCfg)
	f, err := fanout.New(fanout.Config{
		Subscribers:     endpoints,
		Endpoints:       endpoints,
		DB:              db,
		Table:           cfg.StoreTable,
		SQS:             q,
		WebhookQueueURL: cfg.WebhookQueueURL,
		ChatQueueURL:    cfg.ChatQueueURL,
		EventQueueURL:   cfg.EventQueue.URL,
		Window:          cfg.Window,
		Logger:          logger,
	})
	if err != nil {
		return nil, err
	}
	return processor.New(q, processor.Config{
		Queues:          []redrive.Queue{cfg.EventQueue},
		MaxReceiveCount: cfg.MaxReceiveCount,
		Backoff:         cfg.Backoff(),
		Concurrency:     cfg.Concurrency,
		Senders:         map[notification.Channel]processor.Sender{notification.ChannelEvent: f},
		Logger:          logger,
	})
}
