//go:build integration

package integration

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/localenv"
)

// TestEnvFileNamesTheRunningStack: the env file the README, `make run`,
// `herald --help` and herald's errors name exists and points at the stack
// the tests run against, whatever its ports (make test may use any).
func TestEnvFileNamesTheRunningStack(t *testing.T) {
	t.Parallel()
	c := setupCLI(t, 3)
	vars := readEnvFile(t, filepath.Join(repoRoot, localenv.EnvFile))
	require.Equal(t, os.Getenv("AWS_ENDPOINT_URL"), vars["AWS_ENDPOINT_URL"], "%s names another stack", localenv.EnvFile)
	require.Equal(t, os.Getenv("AWS_ENDPOINT_URL_SESV2"), vars["AWS_ENDPOINT_URL_SESV2"], "%s names another stack", localenv.EnvFile)
	require.NotEmpty(t, vars["HERALD_QUEUE_URL"])
	require.NotEmpty(t, vars["HERALD_DLQ_URL"])

	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	require.NoError(t, err)
	require.Contains(t, string(readme), localenv.SourceEnvFile, "the README names the env file")
	runLocal, err := os.ReadFile(filepath.Join(repoRoot, "scripts", "run-local.sh"))
	require.NoError(t, err)
	require.Contains(t, string(runLocal), `env_file="${ENV_LINK#"$ROOT"/}"`, "make run names the link")

	help := c.herald("", "--help")
	require.Equal(t, 0, help.code)
	require.Contains(t, help.stdout, localenv.SourceEnvFile)
	delete(c.vars, "HERALD_QUEUE_URL")
	noQueue := c.herald("", "run")
	require.Equal(t, 2, noQueue.code, noQueue.stderr)
	require.Contains(t, noQueue.stderr, "no notification queue")
	require.Contains(t, noQueue.stderr, localenv.EnvFile)
}

// readEnvFile parses KEY=value lines (what provision.py writes).
func readEnvFile(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err, "the env file the docs and herald name")
	defer f.Close()
	vars := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), "=")
		if ok && !strings.HasPrefix(k, "#") {
			vars[k] = v
		}
	}
	require.NoError(t, sc.Err())
	return vars
}
