package app

import (
	"fmt"
	"os"
)

// ExitStartFailed ends a function's cold start that cannot serve: it
// writes "herald FUNCTION: ERR" (function such as "deliver") as one line to
// standard error, which Lambda sends to the function's log, and exits with
// status 1, which Lambda reports as the initialization error
// Runtime.ExitError. It does not return.
func ExitStartFailed(function string, err error) {
	fmt.Fprintln(os.Stderr, "herald "+function+": "+err.Error())
	os.Exit(1)
}
