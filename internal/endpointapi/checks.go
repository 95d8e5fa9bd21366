package endpointapi

import (
	"errors"
	"regexp"
)

// tenantPattern is a tenant id: 1–128 characters of the notification id's
// alphabet (internal/endpoint's rule for an endpoint's tenant, which it does
// not export for a lone tenant).
var tenantPattern = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

func validateTenant(s string) error {
	if !tenantPattern.MatchString(s) {
		return errors.New("must be 1–128 characters of A-Z a-z 0-9 . _ : -")
	}
	return nil
}
