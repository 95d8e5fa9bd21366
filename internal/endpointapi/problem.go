package endpointapi

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/heraldhq/herald/endpoints"
	"github.com/heraldhq/herald/internal/endpoint"
)

// problem is an error answer: its status and the body's error object.
type problem struct {
	status int
	body   endpoints.Error
}

func (p *problem) Error() string { return fmt.Sprintf("%d %s", p.status, p.body.Error()) }

func newProblem(status int, code, field, format string, args ...any) *problem {
	return &problem{status: status, body: endpoints.Error{Code: code, Field: field, Message: fmt.Sprintf(format, args...)}}
}

// invalid is 400 invalid_field naming field.
func invalid(field, format string, args ...any) *problem {
	return newProblem(http.StatusBadRequest, endpoints.CodeInvalidField, field, format, args...)
}

// storeProblem turns the store's errors into answers: *endpoint.FieldError
// is 400 naming its field, endpoint.ErrNotFound 404, *endpoint.ConflictError
// 412; anything else is nil (a 500, logged by the caller).
func storeProblem(id string, err error) *problem {
	var fe *endpoint.FieldError
	var ce *endpoint.ConflictError
	switch {
	case errors.As(err, &fe):
		return invalid(fe.Field, "%s", fe.Reason)
	case errors.Is(err, endpoint.ErrNotFound):
		return newProblem(http.StatusNotFound, endpoints.CodeNotFound, "", "no endpoint %s", id)
	case errors.As(err, &ce):
		return newProblem(http.StatusPreconditionFailed, endpoints.CodeVersionMismatch, "If-Match",
			"version %d is not the current version %d: read the endpoint again", ce.Want, ce.Current)
	}
	return nil
}
