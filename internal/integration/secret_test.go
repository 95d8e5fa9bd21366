//go:build integration

package integration

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/webhook"
)

// newSigningSecret returns a fresh Standard Webhooks secret: whsec_ and the
// base64 of 32 random bytes.
func newSigningSecret() string {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // never fails (crypto/rand)
	return "whsec_" + base64.StdEncoding.EncodeToString(key)
}

// createSecret stores value in LocalStack's Secrets Manager under a name of
// the test's own and returns its ARN; the secret is deleted at cleanup.
func (e *env) createSecret(value string) string {
	e.t.Helper()
	sm := secretsmanager.NewFromConfig(e.awsCfg)
	out, err := sm.CreateSecret(e.ctx, &secretsmanager.CreateSecretInput{
		Name:         aws.String("herald-it/" + strings.ToLower(sanitize(e.t.Name())) + "-" + randHex(4)),
		SecretString: aws.String(value),
	})
	require.NoError(e.t, err)
	e.t.Cleanup(func() {
		_, _ = sm.DeleteSecret(context.Background(), &secretsmanager.DeleteSecretInput{SecretId: out.ARN, ForceDeleteWithoutRecovery: aws.Bool(true)})
	})
	return aws.ToString(out.ARN)
}

// useSecretARN makes the deliver function read its signing secrets from
// the Secrets Manager secret holding value, as the template configures it.
func useSecretARN(value string) func(*env, *config.Deliver, *app.DeliverOptions) {
	return func(e *env, c *config.Deliver, _ *app.DeliverOptions) {
		c.WebhookSecret, c.WebhookSecretARN = "", e.createSecret(value)
	}
}

// TestWebhookSignedWithEverySecretFromSecretsManager: the deliver wiring
// reads two active secrets from Secrets Manager by ARN; the reference
// library accepts the request with either secret alone and rejects it with
// an unrelated one, with a tampered body, and when the timestamp is older
// than its 5-minute tolerance.
func TestWebhookSignedWithEverySecretFromSecretsManager(t *testing.T) {
	t.Parallel()
	oldSecret, newSecret, unrelated := newSigningSecret(), newSigningSecret(), newSigningSecret()
	e := setup(t, options{deliver: useSecretARN(oldSecret + "\n" + newSecret + "\n")})
	e.send(fmt.Sprintf(`{"version":1,"id":"rotate-1","channel":"webhook","webhook":{"url":"%s/rotate","event_type":"secret.rotated","payload":{"n":1}}}`, e.receiver.URL()))
	e.pollUntil(30*time.Second, func() bool { return len(e.receiver.Requests()) > 0 })

	r := e.receiver.Requests()[0]
	h := map[string]string{
		"webhook-id":        r.Header.Get("webhook-id"),
		"webhook-timestamp": r.Header.Get("webhook-timestamp"),
		"webhook-signature": r.Header.Get("webhook-signature"),
	}
	sigs := strings.Split(h["webhook-signature"], " ")
	require.Len(t, sigs, 2, "one signature per active secret, space-separated")
	for _, s := range sigs {
		require.True(t, strings.HasPrefix(s, "v1,"), s)
	}
	// Each active secret derives the receiver's key (HERALD_WEBHOOK_SECRET_SCOPE=destination).
	oldReceiver, newReceiver := derivedSecret(t, oldSecret, e.receiver.URL()), derivedSecret(t, newSecret, e.receiver.URL())
	require.NoError(t, verifyWithReference(t, oldReceiver, h, r.Body), "a receiver still on the old secret's key accepts it")
	require.NoError(t, verifyWithReference(t, newReceiver, h, r.Body), "a receiver already on the new secret's key accepts it")
	require.Error(t, verifyWithReference(t, derivedSecret(t, unrelated, e.receiver.URL()), h, r.Body), "an unrelated secret does not verify")
	require.Equal(t, []string{"delivered"}, e.logs.outcomes("rotate-1"))

	tampered := []byte(strings.Replace(string(r.Body), `"n":1`, `"n":2`, 1))
	require.NotEqual(t, r.Body, tampered)
	for _, secret := range []string{oldReceiver, newReceiver} {
		require.Error(t, verifyWithReference(t, secret, h, tampered), "a tampered body is rejected")
	}

	// The same request signed by herald's Sign at a chosen time: accepted now,
	// rejected when 6 minutes old (the reference library allows 5).
	key, err := webhook.DecodeSecret(newSecret)
	require.NoError(t, err)
	at := func(ts time.Time) map[string]string {
		return map[string]string{
			"webhook-id":        h["webhook-id"],
			"webhook-timestamp": strconv.FormatInt(ts.Unix(), 10),
			"webhook-signature": webhook.Sign(key, h["webhook-id"], ts, r.Body),
		}
	}
	require.NoError(t, verifyWithReference(t, newSecret, at(time.Now()), r.Body), "control: signed now, accepted")
	err = verifyWithReference(t, newSecret, at(time.Now().Add(-6*time.Minute)), r.Body)
	require.Error(t, err, "signed 6 minutes ago, rejected")
	require.Contains(t, strings.ToLower(err.Error()), "timestamp", "rejected for its timestamp")
}

// TestDeliverFailsToStartOnAMissingSecret: a cold start with an ARN that
// names no secret fails, naming the variable and the ARN.
func TestDeliverFailsToStartOnAMissingSecret(t *testing.T) {
	t.Parallel()
	e := setup(t, options{})
	arn := e.createSecret(newSigningSecret())
	_, err := secretsmanager.NewFromConfig(e.awsCfg).DeleteSecret(e.ctx, &secretsmanager.DeleteSecretInput{SecretId: aws.String(arn), ForceDeleteWithoutRecovery: aws.Bool(true)})
	require.NoError(t, err)
	_, err = app.NewDeliverContext(e.ctx, config.Deliver{
		QueueURL: e.queues.URL, DeadLetterQueueURL: e.queues.DLQURL, MaxReceiveCount: 3, Concurrency: 1,
		WebhookSecretARN: arn, WebhookTimeout: time.Second,
	}, e.awsCfg, app.DeliverOptions{})
	require.ErrorContains(t, err, "webhook signing secret: read HERALD_WEBHOOK_SECRET_ARN "+arn+": ")
}

// TestProvisionedSigningSecret: provision.py stores the demo signing secret
// as herald/webhook-signing, in the form the deliver function reads.
func TestProvisionedSigningSecret(t *testing.T) {
	t.Parallel()
	e := setup(t, options{})
	out, err := secretsmanager.NewFromConfig(e.awsCfg).GetSecretValue(e.ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String("herald/webhook-signing")})
	require.NoError(t, err, "scripts/local-up.sh provisions herald/webhook-signing")
	secrets := webhook.SplitSecrets(aws.ToString(out.SecretString))
	require.NotEmpty(t, secrets)
	_, err = webhook.NewSender(webhook.Config{Secrets: secrets})
	require.NoError(t, err)
}
