//go:build integration

package receiver_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// repoRoot is the module's root, where .venv and localstack/node_modules
// are (make test-integration installs them: scripts/install-verifiers.sh,
// scripts/local-up.sh).
const repoRoot = "../../.."

func init() {
	for name, v := range map[string]func(t *testing.T, secret string, req captured) (string, json.RawMessage, error){
		"python": func(t *testing.T, secret string, req captured) (string, json.RawMessage, error) {
			harness := `import json, sys
sys.path.insert(0, sys.argv[1])
from verify import receive
d = json.load(sys.stdin)
print(json.dumps(receive(d["secret"], d["headers"], d["body"].encode())))
`
			return runSample(t, secret, req, filepath.Join(repoRoot, ".venv", "verify", "bin", "python"), "-c", harness, ".")
		},
		"javascript": func(t *testing.T, secret string, req captured) (string, json.RawMessage, error) {
			// An ES module resolves standardwebhooks from its own folder up:
			// the sample and a harness beside the repository's node_modules.
			dir := t.TempDir()
			abs, err := filepath.Abs(filepath.Join(repoRoot, "localstack", "node_modules"))
			require.NoError(t, err)
			require.NoError(t, os.Symlink(abs, filepath.Join(dir, "node_modules")))
			src, err := os.ReadFile("verify.mjs")
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, "verify.mjs"), src, 0o644))
			harness := `import { receive } from "./verify.mjs";
let s = ""; for await (const c of process.stdin) s += c;
const d = JSON.parse(s);
try { console.log(JSON.stringify(receive(d.secret, d.headers, d.body))); } catch (e) { console.error(e.message); process.exit(1); }
`
			require.NoError(t, os.WriteFile(filepath.Join(dir, "harness.mjs"), []byte(harness), 0o644))
			return runSample(t, secret, req, "node", filepath.Join(dir, "harness.mjs"))
		},
	} {
		verifiers[name] = v
	}
}

// runSample runs a sample's harness with {secret, headers (lower-case names,
// as frameworks give them), body} on stdin.
func runSample(t *testing.T, secret string, req captured, name string, args ...string) (string, json.RawMessage, error) {
	t.Helper()
	headers := map[string]string{}
	for k := range req.header {
		headers[strings.ToLower(k)] = req.header.Get(k)
	}
	in, err := json.Marshal(map[string]any{"secret": secret, "headers": headers, "body": string(req.body)})
	require.NoError(t, err)
	cmd := exec.Command(name, args...)
	cmd.Stdin = bytes.NewReader(in)
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	if err := cmd.Run(); err != nil {
		var exit *exec.ExitError
		require.True(t, errors.As(err, &exit), "%s did not run: %v: %s", name, err, stderr.String())
		return "", nil, errors.New(stderr.String())
	}
	var e struct {
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &e), out.String())
	return e.Type, e.Data, nil
}
