package delivery

import (
	"errors"
	"strings"
	"time"
	"unicode/utf8"
)

// Class is a short, stable, log-friendly name of a failure's cause, such as
// "ses_throttled" or "webhook_http_5xx". Operators filter logs and dead
// letters on it.
type Class string

// Classes that do not belong to one channel.
var (
	ClassInvalidMessage = NewClass("invalid_message")
	ClassDeadline       = NewClass("invocation_deadline")
	ClassUnknown        = NewClass("unknown")
)

// PermanentError is a failure that no retry can fix: the notification is
// dead-lettered with Class and the error text as its reason.
type PermanentError struct {
	Class Class
	Err   error
	// Gone marks a failure that says the destination itself is gone, not
	// that this notification was refused (a chat webhook deleted, its
	// token revoked, its channel archived): the deliver function disables
	// the destination at once, so that later notifications to it are
	// dead-lettered without a request, until an operator enables it
	// (docs/operations.md, "Destination states").
	Gone bool
}

func (e *PermanentError) Error() string { return string(e.Class) + ": " + e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// TransientError is a failure that a later attempt may not meet. RetryAfter,
// when positive, is the least delay before that attempt (from a Retry-After
// header, or a long pause such as SES's SendingPaused).
type TransientError struct {
	Class      Class
	RetryAfter time.Duration
	Err        error
	// PausesChannel marks a failure that every delivery of the channel
	// meets for a long while, whatever the notification (SES: the
	// account's sending is paused): the deliver function pauses that
	// channel's queue instead of spending its receives
	// (docs/reliability.md).
	PausesChannel bool
}

func (e *TransientError) Error() string { return string(e.Class) + ": " + e.Err.Error() }
func (e *TransientError) Unwrap() error { return e.Err }

// Permanent wraps err as a *PermanentError of class c.
func Permanent(c Class, err error) error { return &PermanentError{Class: c, Err: err} }

// Transient wraps err as a *TransientError of class c.
func Transient(c Class, err error) error { return &TransientError{Class: c, Err: err} }

// DestinationGone reports whether err is a *PermanentError with Gone set.
func DestinationGone(err error) bool {
	var p *PermanentError
	return errors.As(err, &p) && p.Gone
}

// PausesChannel reports whether err is a *TransientError with
// PausesChannel set.
func PausesChannel(err error) bool {
	var t *TransientError
	return errors.As(err, &t) && t.PausesChannel
}

// Classify tells whether err is permanent, its class and the least retry
// delay. A nil err is not classified; an error of neither type is transient
// with ClassUnknown, so a failure nobody foresaw is retried, not lost.
func Classify(err error) (permanent bool, class Class, retryAfter time.Duration) {
	var p *PermanentError
	if errors.As(err, &p) {
		return true, p.Class, 0
	}
	var t *TransientError
	if errors.As(err, &t) {
		return false, t.Class, t.RetryAfter
	}
	return false, ClassUnknown, 0
}

// Detail returns err's text without the class prefix that PermanentError and
// TransientError add, for reasons that carry the class beside it.
func Detail(err error) string {
	var p *PermanentError
	if errors.As(err, &p) {
		return p.Err.Error()
	}
	var t *TransientError
	if errors.As(err, &t) {
		return t.Err.Error()
	}
	return err.Error()
}

// Ellipsis marks a text Truncate cut.
const Ellipsis = "…"

// Truncate returns s when it is at most n bytes, else its longest prefix
// that ends on a rune boundary and, with Ellipsis after it, is at most n
// bytes: error texts kept in logs and dead letters stay within n bytes, the
// mark included. When n is below len(Ellipsis) (3) the cut prefix has no
// mark; when n ≤ 0 it is "". Invalid UTF-8 in s (a receiver's answer
// quoted in an error) is first replaced, each run of bad bytes by one
// U+FFFD, as a JSON encoder would write it: so the result is valid UTF-8,
// stays within n bytes once encoded, and a run of stray bytes never makes
// the cut drop the text before it.
func Truncate(s string, n int) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, string(utf8.RuneError))
	}
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	mark := Ellipsis
	if n < len(mark) {
		mark = ""
	}
	cut := n - len(mark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + mark
}
