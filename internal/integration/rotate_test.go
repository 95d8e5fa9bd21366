//go:build integration

package integration

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/webhook"
)

// TestRotateOneReceiversKey: `herald secret rotate` moves one origin to
// key version 2 in the local stack's DynamoDB table, `herald secret
// derive` then prints its new and old keys, and the deliver function signs
// that origin's webhooks with both for the grace period (with the new one
// alone after --grace 0), while another receiver's key stays as it was;
// the Standard Webhooks reference libraries verify each.
func TestRotateOneReceiversKey(t *testing.T) {
	t.Parallel()
	table := storeTable(t)
	e := setup(t, options{deliver: func(_ *env, c *config.Deliver, _ *app.DeliverOptions) {
		c.StoreTable = table // key versions only: delivered once stays off
	}})
	// Three origins: rotated with a grace period, rotated with none, and
	// left alone.
	graced, replaced := localenv.NewReceiver(func(string, int) int { return 200 }), localenv.NewReceiver(func(string, int) int { return 200 })
	t.Cleanup(graced.Close)
	t.Cleanup(replaced.Close)
	ddb := dynamodb.NewFromConfig(e.awsCfg)
	for _, r := range []*localenv.Receiver{graced, replaced} {
		origin, err := webhook.Origin(r.URL())
		require.NoError(t, err)
		// The table outlives the test, and a later receiver may get this port.
		t.Cleanup(func() {
			_, _ = ddb.DeleteItem(context.Background(), &dynamodb.DeleteItemInput{TableName: aws.String(table), Key: map[string]types.AttributeValue{
				store.AttrPK: &types.AttributeValueMemberS{Value: "origin#" + origin}, store.AttrSK: &types.AttributeValueMemberS{Value: "keys"},
			}})
		})
	}

	c := &cliEnv{t: t, ctx: e.ctx, vars: map[string]string{"HERALD_WEBHOOK_SECRET": testSecret, "HERALD_STORE_TABLE": table}}
	derive := func(url string) []string {
		t.Helper()
		r := c.herald("", "secret", "derive", url+"/path?token=t")
		require.Equal(t, 0, r.code, "%+v", r)
		return strings.Fields(r.stdout)
	}
	v1 := func(url string) string { return derivedSecret(t, testSecret, url) }
	for _, url := range []string{graced.URL(), replaced.URL(), e.receiver.URL()} {
		require.Equal(t, []string{v1(url)}, derive(url), "never rotated: version 1, the key receivers have today")
	}

	r := c.herald("", "secret", "rotate", "--grace", "1h", graced.URL()+"/x")
	require.Equal(t, 0, r.code, "%+v", r)
	require.Contains(t, r.stdout, "key version 2")
	r = c.herald("", "secret", "rotate", "--grace", "0", replaced.URL())
	require.Equal(t, 0, r.code, "%+v", r)

	gracedKeys := derive(graced.URL())
	require.Len(t, gracedKeys, 2, "the new version, then the old one")
	require.Equal(t, v1(graced.URL()), gracedKeys[1])
	replacedKeys := derive(replaced.URL())
	require.Len(t, replacedKeys, 1)
	require.NotEqual(t, v1(replaced.URL()), replacedKeys[0])
	require.Equal(t, []string{v1(e.receiver.URL())}, derive(e.receiver.URL()), "the other receiver's key is unchanged")

	for i, rc := range []*localenv.Receiver{graced, replaced, e.receiver} {
		e.send(fmt.Sprintf(`{"version":1,"id":"rotate-%d-%s","channel":"webhook","webhook":{"url":"%s/in","event_type":"key.rotated","payload":{"n":%d}}}`, i, randHex(4), rc.URL(), i))
	}
	e.pollUntil(30*time.Second, func() bool {
		return len(graced.Requests()) > 0 && len(replaced.Requests()) > 0 && len(e.receiver.Requests()) > 0
	})
	verify := func(rc *localenv.Receiver, secret string) error {
		req := rc.Requests()[0]
		return verifyWithReference(t, secret, map[string]string{
			"webhook-id":        req.Header.Get("webhook-id"),
			"webhook-timestamp": req.Header.Get("webhook-timestamp"),
			"webhook-signature": req.Header.Get("webhook-signature"),
		}, req.Body)
	}
	require.NoError(t, verify(graced, gracedKeys[0]), "the rotated receiver verifies with its new key")
	require.NoError(t, verify(graced, gracedKeys[1]), "and, during the grace period, with its old one")
	require.NoError(t, verify(replaced, replacedKeys[0]), "rotated without grace: the new key verifies")
	require.Error(t, verify(replaced, v1(replaced.URL())), "and the old one no longer does")
	require.NoError(t, verify(e.receiver, v1(e.receiver.URL())), "the other receiver verifies with the key it always had")
	require.Error(t, verify(e.receiver, replacedKeys[0]))
	require.Len(t, strings.Fields(e.receiver.Requests()[0].Header.Get("webhook-signature")), 1, "and gets one signature")
}
