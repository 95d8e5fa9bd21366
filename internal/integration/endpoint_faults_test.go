//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/delivery"
	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/endpointsend"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/notification"
)

// TestEndpointFaults: the deliver function's endpoint middleware, reading
// through the deliver function's own Cache (30 s, the real clock) over the
// real endpoint store (the local stack's DynamoDB and KMS):
//
//   - the runbook's "enable it, then redrive": an endpoint read as disabled
//     (the delivery refused, endpoint_disabled) and enabled since is
//     delivered to a second later, well within the cache's 30 s;
//   - an endpoint whose sealed attribute is another endpoint's (a copied
//     item, or KMS refusing the data key under this endpoint's encryption
//     context) cannot be unsealed: the delivery is retried as
//     endpoint_unavailable, nothing is sent, and the error quotes no
//     secret, header value or URL path.
func TestEndpointFaults(t *testing.T) {
	s := newEndpointStore(t)
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	tbl, err := endpoint.NewTable(endpoint.TableConfig{Table: s.table, KeyID: readEnvKeyID(t), DB: s.db, KMS: s.kms,
		URLRules: endpoint.URLRules{AllowCIDRs: loopback}})
	require.NoError(t, err)
	st, err := store.New(s.db, store.Config{Table: s.table})
	require.NoError(t, err)
	recv := newEndpointReceiver(t)
	hook, err := webhook.NewSender(webhook.Config{
		Secret: webhook.NewSecret(), Timeout: 10 * time.Second, AllowCIDRs: loopback,
		TLSClientConfig: recv.srv.Client().Transport.(*http.Transport).TLSClientConfig,
	})
	require.NoError(t, err)
	sender := endpointsend.ForWebhook(hook, endpointsend.Config{Endpoints: endpoint.NewCache(tbl, 0, nil), Failures: tbl, Pace: st})
	deliver := func(id, evt string) error {
		m := &notification.Message{Version: notification.Version, ID: endpoint.DeliveryID(evt, id), Channel: notification.ChannelWebhook,
			Tenant: "acme", EventID: evt,
			Webhook: &notification.Webhook{Endpoint: id, EventType: "invoice.paid", Payload: json.RawMessage(`{"invoice":"in_1"}`)}}
		ctx, cancel := context.WithTimeout(s.ctx, 20*time.Second)
		defer cancel()
		return sender.Send(ctx, m)
	}

	// Enable, then redrive.
	ep, err := tbl.Create(s.ctx, endpoint.Endpoint{Tenant: "acme", Kind: endpoint.KindWebhook, URL: recv.srv.URL + "/hooks/acme"})
	require.NoError(t, err)
	_, err = tbl.SetDisabled(s.ctx, ep.ID, &endpoint.Disabled{Reason: "receiver down", At: time.Now(), By: "operator"})
	require.NoError(t, err)
	permanent, class, _ := delivery.Classify(deliver(ep.ID, "evt_1"))
	require.True(t, permanent)
	require.Equal(t, endpointsend.ClassDisabled, class)
	_, err = tbl.SetDisabled(s.ctx, ep.ID, nil)
	require.NoError(t, err)
	// The operator's redrive reaches the deliver function a moment later;
	// the cached copy (read above) is then older than MaxRefusalAge but
	// well within the cache's TTL.
	time.Sleep(endpoint.MaxRefusalAge)
	require.NoError(t, deliver(ep.ID, "evt_1"), "the redriven delivery is sent")
	require.Equal(t, 1, recv.count())

	// A sealed attribute that is not this endpoint's.
	victim, err := tbl.Create(s.ctx, endpoint.Endpoint{Tenant: "acme", Kind: endpoint.KindWebhook, URL: recv.srv.URL + "/hooks/victim-path",
		Headers: map[string]string{"Authorization": "Bearer victim-token-1"}})
	require.NoError(t, err)
	other, err := tbl.Create(s.ctx, endpoint.Endpoint{Tenant: "acme", Kind: endpoint.KindWebhook, URL: recv.srv.URL + "/hooks/other",
		Headers: map[string]string{"Authorization": "Bearer other-token-2"}})
	require.NoError(t, err)
	item := func(id string) map[string]dtypes.AttributeValue {
		out, err := s.db.GetItem(s.ctx, &dynamodb.GetItemInput{TableName: aws.String(s.table), ConsistentRead: aws.Bool(true),
			Key: map[string]dtypes.AttributeValue{
				store.AttrPK: &dtypes.AttributeValueMemberS{Value: "endpoint#" + id},
				store.AttrSK: &dtypes.AttributeValueMemberS{Value: "endpoint"},
			}})
		require.NoError(t, err)
		require.NotEmpty(t, out.Item)
		return out.Item
	}
	copied := item(victim.ID)
	from := item(other.ID)
	for _, name := range []string{"sealed", "data_key"} {
		require.Contains(t, from, name)
		copied[name] = from[name]
	}
	_, err = s.db.PutItem(s.ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: copied})
	require.NoError(t, err)
	err = deliver(victim.ID, "evt_2")
	permanent, class, _ = delivery.Classify(err)
	require.False(t, permanent, "retried: %v", err)
	require.Equal(t, endpointsend.ClassUnavailable, class, "%v", err)
	require.Equal(t, 1, recv.count(), "nothing sent with another endpoint's secrets or headers")
	for _, secret := range []string{"victim-token-1", "other-token-2", "victim-path", string(other.Secrets[0].Key), other.Secrets[0].String()} {
		require.NotContains(t, err.Error(), secret)
	}
	require.True(t, strings.Contains(err.Error(), victim.ID), "the error names the endpoint: %v", err)
}
