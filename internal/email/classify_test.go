package email

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
)

// requireOutcome checks that err is a *delivery.PermanentError or a
// *delivery.TransientError (as permanent says) of class, with retryAfter.
func requireOutcome(t *testing.T, err error, permanent bool, class delivery.Class, retryAfter time.Duration) {
	t.Helper()
	require.Error(t, err)
	if permanent {
		var p *delivery.PermanentError
		require.ErrorAs(t, err, &p, "want a permanent error, got %v", err)
		require.Equal(t, class, p.Class, "error: %v", err)
		return
	}
	var tr *delivery.TransientError
	require.ErrorAs(t, err, &tr, "want a transient error, got %v", err)
	require.Equal(t, class, tr.Class, "error: %v", err)
	require.Equal(t, retryAfter, tr.RetryAfter)
}

func TestSendClassifiesSESAnswers(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name       string
		handler    http.HandlerFunc
		permanent  bool
		class      delivery.Class
		retryAfter time.Duration
		text       string           // in the error text
		typed      func(error) bool // finds the SES exception in the chain, if set
	}{
		{
			name:    "TooManyRequests",
			handler: sesError(429, "TooManyRequestsException", "Maximum sending rate exceeded."),
			class:   ClassThrottled,
			text:    "ses_throttled: send email n-1: SES TooManyRequestsException: Maximum sending rate exceeded. (HTTP 429, request id req-1)",
			typed:   is[*types.TooManyRequestsException],
		},
		{
			name:    "LimitExceeded",
			handler: sesError(400, "LimitExceededException", "Daily message quota exceeded."),
			class:   ClassLimitExceeded,
			text:    "SES LimitExceededException: Daily message quota exceeded. (HTTP 400",
		},
		{
			name:    "ThrottlingException not in the SES model",
			handler: sesError(400, "ThrottlingException", "Rate exceeded"),
			class:   ClassThrottled,
		},
		{
			name:    "HTTP 429 without a code",
			handler: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(429) },
			class:   ClassThrottled,
		},
		{
			name:    "InternalServiceError",
			handler: sesError(500, "InternalServiceErrorException", "Internal error"),
			class:   ClassServerError,
			text:    "SES InternalServiceErrorException: Internal error (HTTP 500",
		},
		{
			name:    "503 without a body",
			handler: func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) },
			class:   ClassServerError,
			text:    "send email n-1: SES UnknownError (HTTP 503)",
		},
		{
			name: "502 with an HTML page",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.WriteHeader(502)
				fmt.Fprint(w, "<html><body>Bad Gateway</body></html>")
			},
			class: ClassServerError,
			text:  "SES answered HTTP 502 with an unreadable body",
		},
		{
			name:       "SendingPaused",
			handler:    sesError(400, "SendingPausedException", "Email sending is disabled for your entire Amazon SES account."),
			class:      ClassSendingPaused,
			retryAfter: DefaultSendingPausedDelay,
		},
		{
			name:      "MessageRejected",
			handler:   sesError(400, "MessageRejected", "Email address is not verified."),
			permanent: true,
			class:     ClassMessageRejected,
			text:      "ses_message_rejected: send email n-1: SES MessageRejected: Email address is not verified. (HTTP 400, request id req-1)",
			typed:     is[*types.MessageRejected],
		},
		{
			// Coral services append the namespace of the exception; the
			// SDK cuts everything from the colon.
			name:      "MessageRejected with a URI suffix",
			handler:   sesError(400, "MessageRejected:http://internal.amazon.com/coral/com.amazonaws.sesv2/", "Rejected"),
			permanent: true,
			class:     ClassMessageRejected,
		},
		{
			name: "MessageRejected named only in the body",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(400)
				fmt.Fprint(w, `{"__type":"com.amazonaws.sesv2#MessageRejected","message":"Rejected"}`)
			},
			permanent: true,
			class:     ClassMessageRejected,
		},
		{
			name:      "MailFromDomainNotVerified",
			handler:   sesError(400, "MailFromDomainNotVerifiedException", "MAIL FROM domain not verified"),
			permanent: true,
			class:     ClassMailFromNotVerified,
		},
		{
			name:      "NotFound",
			handler:   sesError(404, "NotFoundException", "Template welcome does not exist."),
			permanent: true,
			class:     ClassNotFound,
			text:      "SES NotFoundException: Template welcome does not exist. (HTTP 404",
		},
		{
			name:      "BadRequest",
			handler:   sesError(400, "BadRequestException", "Invalid header"),
			permanent: true,
			class:     ClassBadRequest,
		},
		{
			name:      "AccountSuspended",
			handler:   sesError(400, "AccountSuspendedException", "Your account has been suspended."),
			permanent: true,
			class:     ClassAccountSuspended,
		},
		{
			name:      "unknown 4xx",
			handler:   sesError(403, "AccessDeniedException", "User is not authorized to perform ses:SendEmail"),
			permanent: true,
			class:     ClassClientError,
			text:      "ses_4xx: send email n-1: SES AccessDeniedException: User is not authorized to perform ses:SendEmail (HTTP 403, request id req-1)",
		},
		{
			name:      "RequestTimeout is retried, as the SDK's retryer does",
			handler:   sesError(408, "RequestTimeoutException", "Request timed out"),
			permanent: false,
			class:     ClassServerError,
		},
		{
			name: "unknown 4xx with a text body",
			handler: func(w http.ResponseWriter, _ *http.Request) {
				w.WriteHeader(413)
				fmt.Fprint(w, "Request Entity Too Large")
			},
			permanent: true,
			class:     ClassClientError,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tt.handler, Config{})

			err := b.sender.Send(t.Context(), parse(t, simpleMessage))

			requireOutcome(t, err, tt.permanent, tt.class, tt.retryAfter)
			// Only the account's (or configuration set's) paused sending is
			// met by every email: it alone pauses the email channel.
			require.Equal(t, tt.class == ClassSendingPaused, delivery.PausesChannel(err), "PausesChannel of %v", err)
			require.Contains(t, err.Error(), tt.text)
			require.NotContains(t, err.Error(), "rcpt@example.com")
			require.NotContains(t, err.Error(), "secret")
			if tt.typed != nil {
				require.True(t, tt.typed(err), "the SES exception is not in the chain of %v", err)
			}
			require.Len(t, b.srv.received(), 1)
		})
	}
}

func TestSendSuccess(t *testing.T) {
	t.Parallel()
	b := setup(t, sesOK, Config{})

	require.NoError(t, b.sender.Send(t.Context(), parse(t, simpleMessage)))
	require.Len(t, b.srv.received(), 1)
}

// A 2xx whose body cannot be read means SES accepted the email: retrying
// would send it twice.
func TestSendTreatsUnreadableSuccessAsDelivered(t *testing.T) {
	t.Parallel()
	b := setup(t, func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "not json")
	}, Config{})

	require.NoError(t, b.sender.Send(t.Context(), parse(t, simpleMessage)))
}

func TestSendSendingPausedUsesConfiguredDelay(t *testing.T) {
	t.Parallel()
	b := setup(t, sesError(400, "SendingPausedException", "paused"), Config{SendingPausedDelay: 3 * time.Hour})

	err := b.sender.Send(t.Context(), parse(t, simpleMessage))

	requireOutcome(t, err, false, ClassSendingPaused, 3*time.Hour)
}

func TestSendConnectionRefused(t *testing.T) {
	t.Parallel()
	// A port that was just listened on and closed refuses connections.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	endpoint := "http://" + ln.Addr().String()
	require.NoError(t, ln.Close())
	sender, err := NewSender(newClient(endpoint), Config{})
	require.NoError(t, err)

	err = sender.Send(t.Context(), parse(t, simpleMessage))

	requireOutcome(t, err, false, ClassNetwork, 0)
	require.Contains(t, err.Error(), "SES unreachable")
	var opErr *net.OpError
	require.ErrorAs(t, err, &opErr)
}

// hanging returns a handler that answers only when the client goes away or
// the test ends, and registers that end after the server's Close so that
// Close does not wait for it.
func hanging(t *testing.T, b func(http.HandlerFunc) *testBundle) *testBundle {
	release := make(chan struct{})
	bundle := b(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) })
	return bundle
}

// When the caller's ctx ends while SES is silent the class is
// invocation_deadline, not ses_network: SES was reachable, the invocation ran
// out of time, and an operator should look at the function's timeout.
func TestSendCallerDeadline(t *testing.T) {
	t.Parallel()
	b := hanging(t, func(h http.HandlerFunc) *testBundle { return setup(t, h, Config{}) })
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()

	start := time.Now()
	err := b.sender.Send(ctx, parse(t, simpleMessage))

	requireOutcome(t, err, false, delivery.ClassDeadline, 0)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Contains(t, err.Error(), "did not complete before ctx ended: context deadline exceeded")
	require.Less(t, time.Since(start), 5*time.Second)
}

// A transport timeout that is not the caller's (here http.Client.Timeout) is
// a network failure.
func TestSendTransportTimeout(t *testing.T) {
	t.Parallel()
	b := hanging(t, func(h http.HandlerFunc) *testBundle {
		return setup(t, h, Config{}, func(o *sesv2.Options) {
			o.HTTPClient = &http.Client{Timeout: 100 * time.Millisecond}
		})
	})

	err := b.sender.Send(t.Context(), parse(t, simpleMessage))

	requireOutcome(t, err, false, ClassNetwork, 0)
	var netErr net.Error
	require.ErrorAs(t, err, &netErr)
	require.True(t, netErr.Timeout())
}

// The SDK's standard retryer stays in place: a 500 then a success is one
// successful Send.
func TestSendKeepsSDKRetries(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	b := setup(t, func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			sesError(500, "InternalServiceErrorException", "Internal error")(w, r)
			return
		}
		sesOK(w, r)
	}, Config{}, func(o *sesv2.Options) {
		o.RetryMaxAttempts = 0 // the SDK default: 3 attempts
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return 0, nil })
		})
	})

	require.NoError(t, b.sender.Send(t.Context(), parse(t, simpleMessage)))
	require.Len(t, b.srv.received(), 2)
}

// The caller's ctx bounds the SDK's retries, its backoff sleeps included.
func TestSendDeadlineBoundsSDKRetries(t *testing.T) {
	t.Parallel()
	b := setup(t, sesError(503, "ServiceUnavailable", "busy"), Config{}, func(o *sesv2.Options) {
		o.RetryMaxAttempts = 0
		o.Retryer = retry.NewStandard(func(so *retry.StandardOptions) {
			so.Backoff = retry.BackoffDelayerFunc(func(int, error) (time.Duration, error) { return time.Minute, nil })
		})
	})
	ctx, cancel := context.WithTimeout(t.Context(), 100*time.Millisecond)
	defer cancel()

	err := b.sender.Send(ctx, parse(t, simpleMessage))

	requireOutcome(t, err, false, delivery.ClassDeadline, 0)
	require.Len(t, b.srv.received(), 1)
}

// errAPI is an API that fails every call with err.
type errAPI struct{ err error }

func (a errAPI) SendEmail(context.Context, *sesv2.SendEmailInput, ...func(*sesv2.Options)) (*sesv2.SendEmailOutput, error) {
	return nil, a.err
}

// Errors that no SES server can produce: the SDK's input validation, and an
// error nobody foresaw.
func TestSendClassifiesClientSideErrors(t *testing.T) {
	t.Parallel()

	invalid := smithy.InvalidParamsError{Context: "SendEmailInput"}
	invalid.Add(smithy.NewErrParamRequired("Content"))
	tests := []struct {
		name      string
		err       error
		permanent bool
		class     delivery.Class
	}{
		{"SDK input validation", &smithy.OperationError{ServiceID: "SESv2", OperationName: "SendEmail", Err: invalid}, true, ClassBadRequest},
		{"unforeseen", errors.New("something else"), false, delivery.ClassUnknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := NewSender(errAPI{tt.err}, Config{})
			require.NoError(t, err)

			err = s.Send(t.Context(), parse(t, simpleMessage))

			requireOutcome(t, err, tt.permanent, tt.class, 0)
			require.Contains(t, err.Error(), "send email n-1: ")
			require.ErrorIs(t, err, tt.err)
		})
	}
}
