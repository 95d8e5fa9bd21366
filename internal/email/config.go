package email

import (
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/heraldhq/herald/internal/backoff"
)

// DefaultSendingPausedDelay is the default of Config.SendingPausedDelay.
const DefaultSendingPausedDelay = time.Hour

// configurationSetPattern is the SES rule for a configuration set name
// (SES v2 API reference, CreateConfigurationSet "ConfigurationSetName").
var configurationSetPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Config configures a [Sender]. It knows no environment variables: the
// function that builds it names them.
type Config struct {
	// DefaultFrom is the sender of an email whose message has no from: an
	// RFC 5322 mailbox ("Name <addr@example.com>" or "addr@example.com")
	// whose address is a verified SES identity. Defaults to none: a message
	// without from then fails with ClassNoSender.
	DefaultFrom string
	// ConfigurationSet is the SES configuration set of an email whose message
	// names none: 1–64 characters of A-Z a-z 0-9 _ -. Defaults to none (the
	// identity's default configuration set, if any, applies).
	ConfigurationSet string
	// SendingPausedDelay is the least time before a notification is tried
	// again after SES answered SendingPausedException (sending disabled for
	// the account or the configuration set, which takes a person to undo).
	// At most 12 h, the longest SQS visibility timeout. Defaults to 1 h.
	SendingPausedDelay time.Duration
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.SendingPausedDelay == 0 {
		c.SendingPausedDelay = DefaultSendingPausedDelay
	}
	return c
}

// Validate reports every field of c that is out of its range, each error
// naming the field. Call it on the result of [Config.WithDefaults].
func (c Config) Validate() error {
	var errs []error
	if c.DefaultFrom != "" {
		if _, err := formatMailbox(c.DefaultFrom); err != nil {
			errs = append(errs, fmt.Errorf("email config: DefaultFrom: %w", err))
		}
	}
	if c.ConfigurationSet != "" && !configurationSetPattern.MatchString(c.ConfigurationSet) {
		errs = append(errs, errors.New("email config: ConfigurationSet: must be 1–64 characters of A-Z a-z 0-9 _ -"))
	}
	if c.SendingPausedDelay <= 0 || c.SendingPausedDelay > backoff.MaxVisibilityTimeout {
		errs = append(errs, fmt.Errorf("email config: SendingPausedDelay: %v is out of range (0, %v]", c.SendingPausedDelay, backoff.MaxVisibilityTimeout))
	}
	return errors.Join(errs...)
}
