// Package app wires herald's functions from their configuration: the same
// wiring serves the Lambda entry points in functions/, the local runner and
// the demo.
package app

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/heraldhq/herald/internal/chat"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/email"
	"github.com/heraldhq/herald/internal/processor"
	"github.com/heraldhq/herald/internal/retention"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/notification"
)

// AWSConfig loads the SDK's default configuration chain: credentials,
// region, and the standard endpoint variables (AWS_ENDPOINT_URL,
// AWS_ENDPOINT_URL_SQS, AWS_ENDPOINT_URL_SESV2,
// AWS_ENDPOINT_URL_SECRETS_MANAGER) that point herald at LocalStack or
// another emulator.
func AWSConfig(ctx context.Context) (aws.Config, error) {
	cfg, err := awsconfig.LoadDefaultConfig(ctx)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS config: %w", err)
	}
	return cfg, nil
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
	// WebhookTLS, when set, replaces the system roots for webhook and chat requests:
	// the demo and tests use it to trust their local receivers.
	WebhookTLS *tls.Config
	// Logger replaces the JSON logger on standard output.
	Logger *slog.Logger
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
// and the ARN, never a secret.
func NewDeliverContext(ctx context.Context, cfg config.Deliver, awsCfg aws.Config, opts DeliverOptions) (*processor.Processor, error) {
	logger := opts.Logger
	if logger == nil {
		logger = Logger(cfg.LogLevel)
	}
	mail, err := email.NewSender(sesv2.NewFromConfig(awsCfg), email.Config{
		DefaultFrom:      cfg.EmailDefaultFrom,
		ConfigurationSet: cfg.EmailConfigurationSet,
	})
	if err != nil {
		return nil, fmt.Errorf("email sender: %w", err)
	}
	secrets, source, err := WebhookSecrets(ctx, cfg, awsCfg)
	if err != nil {
		return nil, fmt.Errorf("webhook signing secret: %w", err)
	}
	hook, err := webhook.NewSender(webhook.Config{
		Secrets:                   secrets,
		Timeout:                   cfg.WebhookTimeout,
		TLSClientConfig:           opts.WebhookTLS,
		AllowCIDRs:                cfg.WebhookAllowCIDRs,
		AllowHTTP:                 cfg.WebhookAllowHTTP,
		SecretScope:               cfg.WebhookSecretScope,
		StopStatuses:              cfg.WebhookStopStatuses,
		MaxInFlightPerDestination: cfg.WebhookMaxInFlightPerDestination,
	})
	if err != nil {
		return nil, fmt.Errorf("webhook sender (secrets from %s): %w", source, err)
	}
	chatSender, err := chat.NewSender(chat.Config{
		Timeout:         cfg.WebhookTimeout,
		TLSClientConfig: opts.WebhookTLS,
		AllowCIDRs:      cfg.WebhookAllowCIDRs,
		AllowHTTP:       cfg.WebhookAllowHTTP,
		AllowHosts:      cfg.ChatAllowHosts,
	})
	if err != nil {
		return nil, fmt.Errorf("chat sender: %w", err)
	}
	return processor.New(sqs.NewFromConfig(awsCfg), processor.Config{
		QueueURL:           cfg.QueueURL,
		DeadLetterQueueURL: cfg.DeadLetterQueueURL,
		MaxReceiveCount:    cfg.MaxReceiveCount,
		Backoff:            cfg.Backoff(),
		Concurrency:        cfg.Concurrency,
		Senders: map[notification.Channel]processor.Sender{
			notification.ChannelEmail:   mail,
			notification.ChannelWebhook: hook,
			notification.ChannelChat:    chatSender,
		},
		Logger: logger,
	})
}

// NewRetention builds the retention function's sweeper.
func NewRetention(cfg config.Retention, awsCfg aws.Config, logger *slog.Logger) (*retention.Sweeper, error) {
	if logger == nil {
		logger = Logger(cfg.LogLevel)
	}
	return retention.New(sqs.NewFromConfig(awsCfg), retention.Config{
		QueueURL: cfg.DeadLetterQueueURL,
		MaxAge:   cfg.MaxAge,
		Logger:   logger,
	})
}
