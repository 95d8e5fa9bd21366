package delivery

import "context"

// attemptKey is the context key of a send's attempt number.
type attemptKey struct{}

// WithAttempt returns ctx carrying the attempt number n of the send it
// bounds (the SQS receive count: 1 for the first attempt), for a sender
// or a middleware around it that records attempts.
func WithAttempt(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, attemptKey{}, n)
}

// AttemptOf is the attempt number WithAttempt put on ctx, 0 when none.
func AttemptOf(ctx context.Context) int {
	n, _ := ctx.Value(attemptKey{}).(int)
	return n
}
