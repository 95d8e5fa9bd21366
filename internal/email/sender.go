package email

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/sesv2"

	"github.com/heraldhq/herald/notification"
)

// API is the part of the SES v2 client a Sender uses.
type API interface {
	SendEmail(ctx context.Context, in *sesv2.SendEmailInput, optFns ...func(*sesv2.Options)) (*sesv2.SendEmailOutput, error)
}

var _ API = (*sesv2.Client)(nil)

// Sender sends the email of a notification with SES v2 SendEmail. It is safe
// for concurrent use.
type Sender struct {
	api         API
	cfg         Config
	defaultFrom string // cfg.DefaultFrom as formatMailbox writes it
}

// NewSender returns a Sender that calls api, normally an *sesv2.Client built
// once per process with the SDK's standard retryer (see the package doc).
// cfg is completed with [Config.WithDefaults]; NewSender fails when api is
// nil or cfg does not pass [Config.Validate].
func NewSender(api API, cfg Config) (*Sender, error) {
	if api == nil {
		return nil, errors.New("email: NewSender: nil SES API")
	}
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Sender{api: api, cfg: cfg}
	if cfg.DefaultFrom != "" {
		s.defaultFrom, _ = formatMailbox(cfg.DefaultFrom) // Validate checked it
	}
	return s, nil
}

// Send sends the email of m (m.Email; m is a message that
// notification.Parse accepted) as one SES SendEmail request.
//
// It returns nil once SES has accepted the email, a *delivery.PermanentError
// when no retry can succeed, and otherwise a *delivery.TransientError; the
// classes are listed in the package doc. A message that cannot be sent at all
// (no sender, a mailbox SES cannot carry) fails without a request.
//
// ctx bounds the whole call, the SDK's own retries included; when it ends
// first Send returns a transient error of class delivery.ClassDeadline.
func (s *Sender) Send(ctx context.Context, m *notification.Message) error {
	in, err := s.buildInput(m)
	if err != nil {
		return err
	}
	if _, err := s.api.SendEmail(ctx, in); err != nil {
		return s.classify(ctx, m.ID, in, err)
	}
	return nil
}

// sendError is the text of a failed SendEmail call as herald logs it: short,
// with the SES code and message; it wraps the SDK's error so that errors.As
// still finds the SES exception and the HTTP response.
type sendError struct {
	msg string
	err error
}

func (e *sendError) Error() string { return e.msg }
func (e *sendError) Unwrap() error { return e.err }

func newSendError(err error, format string, args ...any) *sendError {
	return &sendError{msg: fmt.Sprintf(format, args...), err: err}
}
