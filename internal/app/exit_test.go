package app_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
)

// TestExitStartFailed: the test binary runs itself with
// HERALD_TEST_EXIT_START_FAILED set, and that child calls ExitStartFailed:
// one line on standard error naming the function and the error, nothing on
// standard output, exit status 1.
func TestExitStartFailed(t *testing.T) {
	if os.Getenv("HERALD_TEST_EXIT_START_FAILED") == "1" {
		app.ExitStartFailed("deliver", errors.New("configuration: HERALD_QUEUE_URL: required"))
		return // not reached: ExitStartFailed exits
	}
	t.Parallel()
	cmd := exec.Command(os.Args[0], "-test.run=^TestExitStartFailed$")
	cmd.Env = append(os.Environ(), "HERALD_TEST_EXIT_START_FAILED=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	require.Equal(t, 1, exit.ExitCode())
	require.Equal(t, "herald deliver: configuration: HERALD_QUEUE_URL: required\n", stderr.String())
	require.Empty(t, stdout.String())
}
