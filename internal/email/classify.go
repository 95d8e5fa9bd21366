package email

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/heraldhq/herald/internal/delivery"
)

// Classes of the email channel. Permanent unless marked transient.
var (
	// ClassNoSender: the message has no from and Config.DefaultFrom is empty.
	ClassNoSender = delivery.NewClass("email_no_sender")
	// ClassInvalidAddress: a mailbox SES cannot carry (a non-ASCII local
	// part, an invalid internationalized domain).
	ClassInvalidAddress = delivery.NewClass("email_invalid_address")

	// ClassThrottled (transient): TooManyRequestsException, another
	// throttling code, or HTTP 429 — the account's sending rate was exceeded.
	ClassThrottled = delivery.NewClass("ses_throttled")
	// ClassLimitExceeded (transient): LimitExceededException — a quota, such
	// as the daily sending quota, was reached.
	ClassLimitExceeded = delivery.NewClass("ses_limit_exceeded")
	// ClassServerError (transient): InternalServiceErrorException or any
	// HTTP 5xx.
	ClassServerError = delivery.NewClass("ses_5xx")
	// ClassNetwork (transient): no HTTP response — DNS, refused, reset, TLS,
	// or a transport timeout that was not the caller's ctx.
	ClassNetwork = delivery.NewClass("ses_network")
	// ClassSendingPaused (transient, with RetryAfter =
	// Config.SendingPausedDelay): SendingPausedException — sending is
	// disabled for the account or the configuration set.
	ClassSendingPaused = delivery.NewClass("ses_sending_paused")

	// ClassMessageRejected: MessageRejected — the content was refused (for
	// example a virus, or an unverified address in the sandbox).
	ClassMessageRejected = delivery.NewClass("ses_message_rejected")
	// ClassMailFromNotVerified: MailFromDomainNotVerifiedException.
	ClassMailFromNotVerified = delivery.NewClass("ses_mail_from_not_verified")
	// ClassNotFound: NotFoundException — the configuration set (or, when
	// SES's answer does not say which, the template) does not exist.
	ClassNotFound = delivery.NewClass("ses_not_found")
	// ClassTemplateNotFound: the email names a template SES does not have —
	// NotFoundException (or a 404 without an error code, as the local SES
	// emulator answers) to a send with a template, when the request names no
	// configuration set or SES's message names the template.
	ClassTemplateNotFound = delivery.NewClass("ses_template_not_found")
	// ClassBadRequest: BadRequestException — SES found the input invalid —
	// or the SDK refused it before sending (smithy.InvalidParamsError).
	ClassBadRequest = delivery.NewClass("ses_bad_request")
	// ClassAccountSuspended: AccountSuspendedException.
	ClassAccountSuspended = delivery.NewClass("ses_account_suspended")
	// ClassClientError: any other HTTP 4xx, such as AccessDeniedException.
	ClassClientError = delivery.NewClass("ses_4xx")
)

// classify turns the error of SendEmail into the outcome the package doc
// lists. ctx is the ctx Send was called with.
//
// The SDK's error is a *smithy.OperationError around an
// *awshttp.ResponseError (HTTP status, request id) around either the SES
// exception (a modeled *types.X, or a *smithy.GenericAPIError for a code the
// model does not know), a *smithy.DeserializationError (a body that is not
// JSON, such as a load balancer's HTML page), or — with no response, status 0
// — a *smithyhttp.RequestSendError or, when ctx ended, a
// *smithy.CanceledError. Before any request the SDK may refuse the input
// with a smithy.InvalidParamsError.
func (s *Sender) classify(ctx context.Context, id string, in *sesv2.SendEmailInput, err error) error {
	status, requestID := responseOf(err)

	var apiErr smithy.APIError
	if errors.As(err, &apiErr) {
		// SES answered: its answer decides, even if ctx has ended since.
		what := apiErr.ErrorCode()
		if msg := apiErr.ErrorMessage(); msg != "" && msg != what {
			// SES names the identities that failed a check: no address
			// goes into the logs or a dead letter's reason.
			what += ": " + delivery.ScrubAddresses(msg)
		}
		e := newSendError(err, "send email %s: SES %s (HTTP %d%s)", id, what, status, requestID)
		_, throttleCode := retry.DefaultThrottleErrorCodes[apiErr.ErrorCode()]
		switch {
		case is[*types.SendingPausedException](err):
			// Every email of the account (or configuration set) meets it:
			// the email channel's queue is paused (PausesChannel).
			return &delivery.TransientError{Class: ClassSendingPaused, RetryAfter: s.cfg.SendingPausedDelay, Err: e, PausesChannel: true}
		case is[*types.LimitExceededException](err):
			return delivery.Transient(ClassLimitExceeded, e)
		case is[*types.TooManyRequestsException](err), throttleCode:
			return delivery.Transient(ClassThrottled, e)
		case is[*types.InternalServiceErrorException](err):
			return delivery.Transient(ClassServerError, e)
		case is[*types.MessageRejected](err):
			return delivery.Permanent(ClassMessageRejected, e)
		case is[*types.MailFromDomainNotVerifiedException](err):
			return delivery.Permanent(ClassMailFromNotVerified, e)
		case is[*types.NotFoundException](err) && templateMissing(in, apiErr.ErrorMessage()):
			return delivery.Permanent(ClassTemplateNotFound, e)
		case is[*types.NotFoundException](err):
			return delivery.Permanent(ClassNotFound, e)
		case is[*types.BadRequestException](err):
			return delivery.Permanent(ClassBadRequest, e)
		case is[*types.AccountSuspendedException](err):
			return delivery.Permanent(ClassAccountSuspended, e)
		case status == http.StatusNotFound && templateMissing(in, apiErr.ErrorMessage()):
			return delivery.Permanent(ClassTemplateNotFound, e)
		}
		return byStatus(status, e)
	}

	switch {
	case ctx.Err() != nil, is[*smithy.CanceledError](err), is[*aws.RequestCanceledError](err):
		// The caller's deadline (the invocation's, less a margin) ended the
		// call, while waiting for SES or between the SDK's retries. Whether
		// SES got the request is unknown; the notification is retried.
		cause := context.Cause(ctx)
		if cause == nil {
			cause = context.Canceled
		}
		return delivery.Transient(delivery.ClassDeadline,
			newSendError(err, "send email %s: SES SendEmail did not complete before ctx ended: %v", id, cause))
	case status != 0:
		// A response whose body is not an SES error document.
		return byStatus(status, newSendError(err, "send email %s: SES answered HTTP %d%s with an unreadable body", id, status, requestID))
	}

	var sendErr *smithyhttp.RequestSendError
	var netErr net.Error
	switch {
	case is[smithy.InvalidParamsError](err), is[*smithy.InvalidParamsError](err):
		// The SDK's own check of the input's required fields, before any
		// request; the text names fields, not values.
		return delivery.Permanent(ClassBadRequest, newSendError(err, "send email %s: SendEmail input refused by the SDK: %v", id, err))
	case errors.As(err, &sendErr):
		return delivery.Transient(ClassNetwork, newSendError(err, "send email %s: SES unreachable: %v", id, sendErr.Err))
	case errors.As(err, &netErr):
		return delivery.Transient(ClassNetwork, newSendError(err, "send email %s: SES unreachable: %v", id, netErr))
	}
	return delivery.Transient(delivery.ClassUnknown, fmt.Errorf("send email %s: %w", id, err))
}

// templateMissing reports whether SES's not-found answer to in, with
// message msg, is about in's template: in names one, and either names no
// configuration set (the only other resource SendEmail looks up) or msg
// names the template ("Template welcome does not exist").
func templateMissing(in *sesv2.SendEmailInput, msg string) bool {
	if in == nil || in.Content == nil || in.Content.Template == nil {
		return false
	}
	return in.ConfigurationSetName == nil || strings.Contains(strings.ToLower(msg), "template")
}

// byStatus classifies an SES answer by its HTTP status alone. A 2xx is an
// email SES accepted but whose answer could not be read: nil, because a retry
// would send it twice.
func byStatus(status int, e *sendError) error {
	switch {
	case status >= 200 && status < 300:
		return nil
	case status == 429:
		return delivery.Transient(ClassThrottled, e)
	case status == 408: // RequestTimeout: the SDK's retryer retries it too
		return delivery.Transient(ClassServerError, e)
	case status >= 500:
		return delivery.Transient(ClassServerError, e)
	case status >= 400:
		return delivery.Permanent(ClassClientError, e)
	}
	return delivery.Transient(delivery.ClassUnknown, e)
}

// responseOf returns the HTTP status (0 when no response came) and, as a
// ", request id X" suffix, the SES request id of err.
func responseOf(err error) (status int, requestID string) {
	var respErr *smithyhttp.ResponseError
	if errors.As(err, &respErr) && respErr.Response != nil {
		status = respErr.HTTPStatusCode()
	}
	var withID interface{ ServiceRequestID() string }
	if errors.As(err, &withID) && withID.ServiceRequestID() != "" {
		requestID = ", request id " + withID.ServiceRequestID()
	}
	return status, requestID
}

// is reports whether err's chain holds a T.
func is[T error](err error) bool {
	var target T
	return errors.As(err, &target)
}
