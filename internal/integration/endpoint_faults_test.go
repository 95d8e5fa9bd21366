//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
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

// faultProxy stands between a client and the local stack: while failing
// is set it answers every request as the service answers a throttled one
// (HTTP 400 and the JSON 1.0/1.1 error shape, __type code), counting
// those; otherwise it passes the request on.
type faultProxy struct {
	srv     *httptest.Server
	failing atomic.Bool
	refused atomic.Int64
	passed  atomic.Int64
}

func newFaultProxy(t *testing.T, code string) *faultProxy {
	t.Helper()
	target, err := url.Parse(os.Getenv("AWS_ENDPOINT_URL"))
	require.NoError(t, err)
	require.NotEmpty(t, target.Host, "AWS_ENDPOINT_URL: run under scripts/with-local-stack.sh")
	p := &faultProxy{}
	pass := httputil.NewSingleHostReverseProxy(target)
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.failing.Load() {
			p.refused.Add(1)
			w.Header().Set("Content-Type", "application/x-amz-json-1.1")
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte(`{"__type":"` + code + `","message":"Rate exceeded"}`))
			return
		}
		p.passed.Add(1)
		pass.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// TestEndpointReadThrottled: KMS throttling Decrypt, or DynamoDB throttling
// GetItem, while the deliver function reads an endpoint through its Cache
// (over the real endpoint store, the local stack behind a proxy that
// answers as a throttled service does): the delivery is retried as
// endpoint_unavailable, nothing is sent, the error names no secret; the
// failure is not cached, so the next delivery after the throttling ends
// reads the endpoint (one read) and is sent.
func TestEndpointReadThrottled(t *testing.T) {
	s := newEndpointStore(t)
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	good, err := endpoint.NewTable(endpoint.TableConfig{Table: s.table, KeyID: readEnvKeyID(t), DB: s.db, KMS: s.kms,
		URLRules: endpoint.URLRules{AllowCIDRs: loopback}})
	require.NoError(t, err)
	recv := newEndpointReceiver(t)
	ep, err := good.Create(s.ctx, endpoint.Endpoint{Tenant: "acme", Kind: endpoint.KindWebhook, URL: recv.srv.URL + "/hooks/acme-path",
		Headers: map[string]string{"Authorization": "Bearer acme-token-3"}})
	require.NoError(t, err)
	hook, err := webhook.NewSender(webhook.Config{
		Secret: webhook.NewSecret(), Timeout: 10 * time.Second, AllowCIDRs: loopback,
		TLSClientConfig: recv.srv.Client().Transport.(*http.Transport).TLSClientConfig,
	})
	require.NoError(t, err)
	cfg, err := app.AWSConfig(s.ctx)
	require.NoError(t, err)

	for _, c := range []struct {
		name, code string
		table      func(p *faultProxy) endpoint.TableConfig
	}{
		{"kms", "ThrottlingException", func(p *faultProxy) endpoint.TableConfig {
			return endpoint.TableConfig{Table: s.table, DB: s.db, KMS: kms.NewFromConfig(cfg, func(o *kms.Options) {
				o.BaseEndpoint, o.RetryMaxAttempts = aws.String(p.srv.URL), 1
			})}
		}},
		{"dynamodb", "com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException", func(p *faultProxy) endpoint.TableConfig {
			return endpoint.TableConfig{Table: s.table, KMS: s.kms, DB: dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
				o.BaseEndpoint, o.RetryMaxAttempts = aws.String(p.srv.URL), 1
			})}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := newFaultProxy(t, c.code)
			tbl, err := endpoint.NewTable(c.table(p))
			require.NoError(t, err)
			sender := endpointsend.ForWebhook(hook, endpointsend.Config{Endpoints: endpoint.NewCache(tbl, 0, nil), Failures: good})
			deliver := func() error {
				m := &notification.Message{Version: notification.Version, ID: endpoint.DeliveryID("evt_"+c.name, ep.ID), Channel: notification.ChannelWebhook,
					Tenant: "acme", EventID: "evt_" + c.name,
					Webhook: &notification.Webhook{Endpoint: ep.ID, EventType: "invoice.paid", Payload: json.RawMessage(`{"invoice":"in_1"}`)}}
				ctx, cancel := context.WithTimeout(s.ctx, 20*time.Second)
				defer cancel()
				return sender.Send(ctx, m)
			}
			sent := recv.count()
			p.failing.Store(true)
			err = deliver()
			permanent, class, _ := delivery.Classify(err)
			require.False(t, permanent, "retried: %v", err)
			require.Equal(t, endpointsend.ClassUnavailable, class, "%v", err)
			require.Positive(t, p.refused.Load(), "the throttled service was asked")
			for _, secret := range []string{"acme-token-3", "acme-path", string(ep.Secrets[0].Key), ep.Secrets[0].String()} {
				require.NotContains(t, err.Error(), secret)
			}
			require.Equal(t, sent, recv.count(), "nothing sent")

			p.failing.Store(false)
			require.NoError(t, deliver(), "the failure was not cached")
			require.Equal(t, sent+1, recv.count())
			passed := p.passed.Load()
			require.NoError(t, deliver())
			require.Equal(t, passed, p.passed.Load(), "then cached: no more reads")
		})
	}
}
