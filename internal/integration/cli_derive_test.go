//go:build integration

package integration

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/webhook"
)

// TestCLISecretDeriveFromSecretsManager runs `herald secret derive` as
// users run it, reading two active signing secrets from LocalStack's
// Secrets Manager (--secret-arn, then HERALD_WEBHOOK_SECRET_ARN): it prints
// each secret's key for the URL's origin, in order, and neither secret.
func TestCLISecretDeriveFromSecretsManager(t *testing.T) {
	t.Parallel()
	e := setup(t, options{})
	oldSecret, newSecret := newSigningSecret(), newSigningSecret()
	arn := e.createSecret(oldSecret + "\n" + newSecret)
	const url = "https://hooks.example.com/herald?token=t"
	var want []string
	for _, s := range []string{oldSecret, newSecret} {
		d, err := webhook.DeriveSecret(s, url)
		require.NoError(t, err)
		want = append(want, d)
	}

	c := &cliEnv{t: t, ctx: e.ctx}
	r := c.herald("", "secret", "derive", "--secret-arn", arn, url)
	require.Equal(t, 0, r.code, "%+v", r)
	require.Equal(t, strings.Join(want, "\n")+"\n", r.stdout)
	require.NotContains(t, r.stdout+r.stderr, oldSecret)
	require.NotContains(t, r.stdout+r.stderr, newSecret)

	c.vars = map[string]string{"HERALD_WEBHOOK_SECRET_ARN": arn}
	r = c.herald("", "secret", "derive", url)
	require.Equal(t, 0, r.code, "%+v", r)
	require.Equal(t, strings.Join(want, "\n")+"\n", r.stdout)

	r = c.herald("", "secret", "derive", "--secret-arn", arn+"-missing", url)
	require.Equal(t, 1, r.code, "%+v", r)
	require.Contains(t, r.stderr, "ResourceNotFoundException")
}
