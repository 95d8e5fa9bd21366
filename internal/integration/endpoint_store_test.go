//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/store"
)

// endpointStore is a test's endpoint store: a table of its own on the
// local stack's DynamoDB (moto), made as template.yaml's StoreTable with
// its tenant index, and the local stack's endpoint key (LocalStack's KMS,
// provisioned as alias/herald-endpoints).
type endpointStore struct {
	ctx   context.Context
	db    *dynamodb.Client
	kms   *kms.Client
	table string
	t     *endpoint.Table
}

func newEndpointStore(t *testing.T) *endpointStore {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	cfg, err := app.AWSConfig(ctx)
	require.NoError(t, err)
	s := &endpointStore{ctx: ctx, db: dynamodb.NewFromConfig(cfg), kms: kms.NewFromConfig(cfg)}
	s.table = fmt.Sprintf("endpoints-%s-%d", strings.ToLower(strings.ReplaceAll(t.Name(), "/", "-")), time.Now().UnixNano())
	if len(s.table) > 255 {
		s.table = s.table[len(s.table)-255:]
	}
	_, err = s.db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: aws.String(s.table),
		AttributeDefinitions: []dtypes.AttributeDefinition{
			{AttributeName: aws.String(store.AttrPK), AttributeType: dtypes.ScalarAttributeTypeS},
			{AttributeName: aws.String(store.AttrSK), AttributeType: dtypes.ScalarAttributeTypeS},
			{AttributeName: aws.String(endpoint.AttrGSI1PK), AttributeType: dtypes.ScalarAttributeTypeS},
			{AttributeName: aws.String(endpoint.AttrGSI1SK), AttributeType: dtypes.ScalarAttributeTypeS},
		},
		KeySchema: []dtypes.KeySchemaElement{
			{AttributeName: aws.String(store.AttrPK), KeyType: dtypes.KeyTypeHash},
			{AttributeName: aws.String(store.AttrSK), KeyType: dtypes.KeyTypeRange},
		},
		GlobalSecondaryIndexes: []dtypes.GlobalSecondaryIndex{{
			IndexName: aws.String(endpoint.TenantIndex),
			KeySchema: []dtypes.KeySchemaElement{
				{AttributeName: aws.String(endpoint.AttrGSI1PK), KeyType: dtypes.KeyTypeHash},
				{AttributeName: aws.String(endpoint.AttrGSI1SK), KeyType: dtypes.KeyTypeRange},
			},
			Projection: &dtypes.Projection{
				ProjectionType:   dtypes.ProjectionTypeInclude,
				NonKeyAttributes: []string{endpoint.AttrEventTypes, endpoint.AttrDisabledAt, endpoint.AttrKind},
			},
		}},
		BillingMode: dtypes.BillingModePayPerRequest,
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		_, _ = s.db.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(s.table)})
	})
	keyID := readEnvFile(t, filepath.Join(repoRoot, localenv.EnvFile))["HERALD_ENDPOINT_KEY_ID"]
	require.NotEmpty(t, keyID, "%s names no HERALD_ENDPOINT_KEY_ID (localstack/init/ready.d/provision.py)", localenv.EnvFile)
	s.t, err = endpoint.NewTable(endpoint.TableConfig{Table: s.table, KeyID: keyID, DB: s.db, KMS: s.kms})
	require.NoError(t, err)
	return s
}

// raw reads endpoint id's item as stored.
func (s *endpointStore) raw(t *testing.T, id string) map[string]dtypes.AttributeValue {
	t.Helper()
	out, err := s.db.GetItem(s.ctx, &dynamodb.GetItemInput{
		TableName: aws.String(s.table),
		Key:       map[string]dtypes.AttributeValue{store.AttrPK: &dtypes.AttributeValueMemberS{Value: "endpoint#" + id}, store.AttrSK: &dtypes.AttributeValueMemberS{Value: "endpoint"}},
	})
	require.NoError(t, err)
	require.NotNil(t, out.Item)
	return out.Item
}

func (s *endpointStore) put(t *testing.T, item map[string]dtypes.AttributeValue) {
	t.Helper()
	_, err := s.db.PutItem(s.ctx, &dynamodb.PutItemInput{TableName: aws.String(s.table), Item: item})
	require.NoError(t, err)
}

// itemBytes is every byte of item's attribute values, binary ones as
// they are stored, for searching the stored item for plaintext.
func itemBytes(item map[string]dtypes.AttributeValue) []byte {
	var b bytes.Buffer
	var walk func(v dtypes.AttributeValue)
	walk = func(v dtypes.AttributeValue) {
		switch v := v.(type) {
		case *dtypes.AttributeValueMemberS:
			b.WriteString(v.Value)
		case *dtypes.AttributeValueMemberB:
			b.Write(v.Value)
		case *dtypes.AttributeValueMemberN:
			b.WriteString(v.Value)
		case *dtypes.AttributeValueMemberL:
			for _, e := range v.Value {
				walk(e)
			}
		case *dtypes.AttributeValueMemberM:
			for k, e := range v.Value {
				b.WriteString(k)
				walk(e)
			}
		}
		b.WriteByte(0)
	}
	for k, v := range item {
		b.WriteString(k)
		walk(v)
	}
	return b.Bytes()
}

func webhookEndpoint(tenant string) endpoint.Endpoint {
	return endpoint.Endpoint{
		Tenant:     tenant,
		Kind:       endpoint.KindWebhook,
		URL:        "https://hooks.acme.example.com/herald",
		EventTypes: []string{"invoice.*", "customer.created"},
		Headers:    map[string]string{"Authorization": "Bearer header-value-that-is-secret"},
		RateLimit:  2.5,
		Metadata:   map[string]string{"plan": "pro"},
	}
}

// TestEndpointStoreCreateGetSealsSecrets: an endpoint created comes back
// with its secret, headers and chat URL; the stored item holds none of
// them in plain text, and its data key opens only with its own id.
func TestEndpointStoreCreateGetSealsSecrets(t *testing.T) {
	s := newEndpointStore(t)
	created, err := s.t.Create(s.ctx, webhookEndpoint("acme"))
	require.NoError(t, err)
	require.True(t, endpoint.ValidID(created.ID))
	require.EqualValues(t, 1, created.Version)
	require.Len(t, created.Secrets, 1)
	require.Len(t, created.Secrets[0].Key, endpoint.SecretBytes)

	got, err := s.t.Get(s.ctx, created.ID)
	require.NoError(t, err)
	require.Equal(t, created, got, "what was created is what is read")

	chatURL := "https://hooks.slack.com/services/T0001/B0001/chat-url-token-secret"
	chatEp, err := s.t.Create(s.ctx, endpoint.Endpoint{Tenant: "acme", Kind: endpoint.KindSlack, URL: chatURL})
	require.NoError(t, err)
	gotChat, err := s.t.Get(s.ctx, chatEp.ID)
	require.NoError(t, err)
	require.Equal(t, chatURL, gotChat.URL)

	for _, c := range []struct {
		id      string
		secrets [][]byte
	}{
		{created.ID, [][]byte{created.Secrets[0].Key, []byte(created.Secrets[0].String()), []byte(base64.StdEncoding.EncodeToString(created.Secrets[0].Key)), []byte("header-value-that-is-secret")}},
		{chatEp.ID, [][]byte{chatEp.Secrets[0].Key, []byte("chat-url-token-secret"), []byte("T0001/B0001")}},
	} {
		raw := s.raw(t, c.id)
		all := itemBytes(raw)
		for _, secret := range c.secrets {
			require.False(t, bytes.Contains(all, secret), "the stored item holds %q in plain text", secret)
		}
		require.Contains(t, raw, endpoint.AttrSealed)
		require.Contains(t, raw, endpoint.AttrDataKey)
	}
	// The webhook's URL is plain (for listing); the chat URL only its host.
	raw := s.raw(t, chatEp.ID)
	require.NotContains(t, raw, endpoint.AttrURL)
	require.Equal(t, "hooks.slack.com", raw[endpoint.AttrURLHost].(*dtypes.AttributeValueMemberS).Value)

	// The data key decrypts with its own id as encryption context only.
	dataKey := s.raw(t, created.ID)[endpoint.AttrDataKey].(*dtypes.AttributeValueMemberB).Value
	_, err = s.kms.Decrypt(s.ctx, &kms.DecryptInput{CiphertextBlob: dataKey, EncryptionContext: map[string]string{endpoint.ContextKey: created.ID}})
	require.NoError(t, err)
	for _, ctx := range []map[string]string{
		{endpoint.ContextKey: chatEp.ID},
		nil,
		{"herald:other": created.ID},
		{endpoint.ContextKey: created.ID, "extra": "x"},
	} {
		_, err = s.kms.Decrypt(s.ctx, &kms.DecryptInput{CiphertextBlob: dataKey, EncryptionContext: ctx})
		require.Error(t, err, "context %v", ctx)
	}

	// Another endpoint's sealed attributes copied onto this item do not open.
	victim := s.raw(t, chatEp.ID)
	victim[endpoint.AttrSealed] = s.raw(t, created.ID)[endpoint.AttrSealed]
	victim[endpoint.AttrDataKey] = s.raw(t, created.ID)[endpoint.AttrDataKey]
	s.put(t, victim)
	_, err = s.t.Get(s.ctx, chatEp.ID)
	require.Error(t, err)
	require.NotContains(t, err.Error(), "header-value-that-is-secret")
}

// TestEndpointStoreRefusesBadInputAndWritesNothing: Create and Update
// validate; nothing is written on a refusal.
func TestEndpointStoreRefusesBadInputAndWritesNothing(t *testing.T) {
	s := newEndpointStore(t)
	bad := webhookEndpoint("acme")
	bad.Headers = map[string]string{"webhook-signature": "v1,forged"}
	_, err := s.t.Create(s.ctx, bad)
	var fe *endpoint.FieldError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "headers.webhook-signature", fe.Field)
	page, err := s.t.List(s.ctx, endpoint.ListQuery{})
	require.NoError(t, err)
	require.Empty(t, page.Endpoints, "nothing was written")

	e, err := s.t.Create(s.ctx, webhookEndpoint("acme"))
	require.NoError(t, err)
	http := "http://hooks.acme.example.com/x"
	_, err = s.t.Update(s.ctx, e.ID, 1, endpoint.Patch{URL: &http})
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "url", fe.Field)
	got, err := s.t.Get(s.ctx, e.ID)
	require.NoError(t, err)
	require.EqualValues(t, 1, got.Version, "a refused update writes nothing")
	require.Equal(t, e.URL, got.URL)
}

// TestEndpointStoreVersionChecks: Update and Delete name the version they
// read; another version is a *ConflictError naming the current one, and a
// missing endpoint ErrNotFound.
func TestEndpointStoreVersionChecks(t *testing.T) {
	s := newEndpointStore(t)
	e, err := s.t.Create(s.ctx, webhookEndpoint("acme"))
	require.NoError(t, err)
	desc := "billing"
	types := []string{"invoice.paid"}
	headers := map[string]string{"X-Team": "billing"}
	rate := 0.0
	up, err := s.t.Update(s.ctx, e.ID, 1, endpoint.Patch{Description: &desc, EventTypes: &types, Headers: &headers, RateLimit: &rate})
	require.NoError(t, err)
	require.EqualValues(t, 2, up.Version)
	require.Equal(t, e.Secrets, up.Secrets, "an update keeps the secrets")
	got, err := s.t.Get(s.ctx, e.ID)
	require.NoError(t, err)
	require.Equal(t, up, got)
	require.Equal(t, "billing", got.Description)
	require.Equal(t, types, got.EventTypes)
	require.Equal(t, headers, got.Headers)
	require.Zero(t, got.RateLimit)
	require.Equal(t, e.Metadata, got.Metadata, "fields the patch leaves out stay")

	var ce *endpoint.ConflictError
	_, err = s.t.Update(s.ctx, e.ID, 1, endpoint.Patch{Description: &desc})
	require.ErrorAs(t, err, &ce)
	require.EqualValues(t, 1, ce.Want)
	require.EqualValues(t, 2, ce.Current)
	require.ErrorAs(t, s.t.Delete(s.ctx, e.ID, 1), &ce)
	require.EqualValues(t, 2, ce.Current)

	missing := endpoint.NewID()
	_, err = s.t.Update(s.ctx, missing, 1, endpoint.Patch{Description: &desc})
	require.ErrorIs(t, err, endpoint.ErrNotFound)
	require.ErrorIs(t, s.t.Delete(s.ctx, missing, 0), endpoint.ErrNotFound)
	_, err = s.t.Get(s.ctx, missing)
	require.ErrorIs(t, err, endpoint.ErrNotFound)
	_, err = s.t.Get(s.ctx, "not-an-id")
	require.ErrorIs(t, err, endpoint.ErrNotFound)
	_, err = s.t.SetDisabled(s.ctx, missing, nil)
	require.ErrorIs(t, err, endpoint.ErrNotFound)
	_, _, err = s.t.RotateSecret(s.ctx, missing, time.Hour)
	require.ErrorIs(t, err, endpoint.ErrNotFound)

	require.NoError(t, s.t.Delete(s.ctx, e.ID, 2))
	_, err = s.t.Get(s.ctx, e.ID)
	require.ErrorIs(t, err, endpoint.ErrNotFound)
	require.ErrorIs(t, s.t.Delete(s.ctx, e.ID, 0), endpoint.ErrNotFound, "deleted twice")

	// Delete with version 0 deletes whatever the version.
	e2, err := s.t.Create(s.ctx, webhookEndpoint("acme"))
	require.NoError(t, err)
	_, err = s.t.SetDisabled(s.ctx, e2.ID, &endpoint.Disabled{Reason: "maintenance"})
	require.NoError(t, err)
	require.NoError(t, s.t.Delete(s.ctx, e2.ID, 0))
}

// TestEndpointStoreConflictDuringUpdate: a write between Update's read
// and its write makes the update a conflict, not a lost write.
func TestEndpointStoreConflictDuringUpdate(t *testing.T) {
	s := newEndpointStore(t)
	e, err := s.t.Create(s.ctx, webhookEndpoint("acme"))
	require.NoError(t, err)
	// Another writer bumps the stored version behind the store's back.
	raw := s.raw(t, e.ID)
	raw[store.AttrVersion] = &dtypes.AttributeValueMemberN{Value: "5"}
	s.put(t, raw)
	desc := "x"
	_, err = s.t.Update(s.ctx, e.ID, 1, endpoint.Patch{Description: &desc})
	var ce *endpoint.ConflictError
	require.ErrorAs(t, err, &ce)
	require.EqualValues(t, 5, ce.Current)
	up, err := s.t.Update(s.ctx, e.ID, 5, endpoint.Patch{Description: &desc})
	require.NoError(t, err)
	require.EqualValues(t, 6, up.Version)
}

// interleaving is the SDK client with another writer's write of the
// endpoint's version just before each of the store's next n PutItem
// calls: a write between the store's read and its write.
type interleaving struct {
	*dynamodb.Client
	s *endpointStore
	t *testing.T
	n int
	// id is the endpoint the other writer writes.
	id string
}

func (c *interleaving) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if c.n > 0 {
		c.n--
		raw := c.s.raw(c.t, c.id)
		v := raw[store.AttrVersion].(*dtypes.AttributeValueMemberN).Value
		raw[store.AttrVersion] = &dtypes.AttributeValueMemberN{Value: v + "0"} // another version
		c.s.put(c.t, raw)
	}
	return c.Client.PutItem(ctx, in, opts...)
}

// TestEndpointStoreWriteBetweenReadAndWrite: each write is conditional
// on the version read; SetDisabled and RotateSecret read again (3 tries),
// Update does not (its caller named the version).
func TestEndpointStoreWriteBetweenReadAndWrite(t *testing.T) {
	s := newEndpointStore(t)
	e, err := s.t.Create(s.ctx, webhookEndpoint("acme"))
	require.NoError(t, err)
	other := &interleaving{Client: s.db, s: s, t: t, id: e.ID}
	tbl, err := endpoint.NewTable(endpoint.TableConfig{Table: s.table, KeyID: readEnvFile(t, filepath.Join(repoRoot, localenv.EnvFile))["HERALD_ENDPOINT_KEY_ID"], DB: other, KMS: s.kms})
	require.NoError(t, err)

	other.n = 1
	desc := "mine"
	_, err = tbl.Update(s.ctx, e.ID, 1, endpoint.Patch{Description: &desc})
	var ce *endpoint.ConflictError
	require.ErrorAs(t, err, &ce)
	require.EqualValues(t, 1, ce.Want)
	require.EqualValues(t, 10, ce.Current)
	got, err := s.t.Get(s.ctx, e.ID)
	require.NoError(t, err)
	require.Empty(t, got.Description, "the conflicting update wrote nothing")

	other.n = 2
	d, err := tbl.SetDisabled(s.ctx, e.ID, &endpoint.Disabled{Reason: "maintenance"})
	require.NoError(t, err, "read again and written on the third try")
	require.EqualValues(t, 1001, d.Version)

	other.n = 3
	_, _, err = tbl.RotateSecret(s.ctx, e.ID, time.Hour)
	require.ErrorAs(t, err, &ce, "three tries met another writer")
	got, err = s.t.Get(s.ctx, e.ID)
	require.NoError(t, err)
	require.Len(t, got.Secrets, 1, "no rotation was written")

	require.ErrorAs(t, s.t.Delete(s.ctx, e.ID, 1001), &ce)
	require.EqualValues(t, 1001000, ce.Current)
}

// TestEndpointStoreDisableEnableRotate: disabling keeps the secrets;
// rotation keeps the old secret for its grace period, newest first.
func TestEndpointStoreDisableEnableRotate(t *testing.T) {
	s := newEndpointStore(t)
	e, err := s.t.Create(s.ctx, webhookEndpoint("acme"))
	require.NoError(t, err)
	d, err := s.t.SetDisabled(s.ctx, e.ID, &endpoint.Disabled{Reason: "http_410", By: "herald"})
	require.NoError(t, err)
	require.NotNil(t, d.Disabled)
	require.Equal(t, "herald", d.Disabled.By)
	require.False(t, d.Disabled.At.IsZero())
	got, err := s.t.Get(s.ctx, e.ID)
	require.NoError(t, err)
	require.Equal(t, "http_410", got.Disabled.Reason)
	require.Equal(t, e.Secrets, got.Secrets, "disabling keeps the sealed attributes")
	require.EqualValues(t, 2, got.Version)

	en, err := s.t.SetDisabled(s.ctx, e.ID, nil)
	require.NoError(t, err)
	require.Nil(t, en.Disabled)

	_, _, err = s.t.RotateSecret(s.ctx, e.ID, endpoint.MaxGrace+time.Second)
	var fe *endpoint.FieldError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, "grace", fe.Field)

	r1, s2, err := s.t.RotateSecret(s.ctx, e.ID, time.Hour)
	require.NoError(t, err)
	require.Equal(t, 2, s2.Version)
	require.Len(t, r1.Secrets, 2)
	require.Equal(t, s2, r1.Secrets[0])
	require.Equal(t, e.Secrets[0].Key, r1.Secrets[1].Key)
	require.WithinDuration(t, time.Now().Add(time.Hour), r1.Secrets[1].Until, time.Minute)
	got, err = s.t.Get(s.ctx, e.ID)
	require.NoError(t, err)
	require.Equal(t, r1.Secrets, got.Secrets)

	_, s3, err := s.t.RotateSecret(s.ctx, e.ID, time.Hour)
	require.NoError(t, err)
	r3, s4, err := s.t.RotateSecret(s.ctx, e.ID, time.Hour)
	require.NoError(t, err)
	require.Equal(t, 4, s4.Version)
	require.Len(t, r3.Secrets, endpoint.MaxSecretVersions, "the oldest goes")
	require.Equal(t, []int{4, 3, 2}, []int{r3.Secrets[0].Version, r3.Secrets[1].Version, r3.Secrets[2].Version})
	require.Equal(t, s3.Key, r3.Secrets[1].Key)

	// A shorter grace shortens the older secrets' too.
	r4, _, err := s.t.RotateSecret(s.ctx, e.ID, time.Minute)
	require.NoError(t, err)
	for _, sec := range r4.Secrets[1:] {
		require.WithinDuration(t, time.Now().Add(time.Minute), sec.Until, 30*time.Second)
	}
	r5, _, err := s.t.RotateSecret(s.ctx, e.ID, 0)
	require.NoError(t, err)
	require.Len(t, r5.Secrets, 1, "grace 0 stops every older secret at once")
	require.Equal(t, 6, r5.Secrets[0].Version)
	got, err = s.t.Get(s.ctx, e.ID)
	require.NoError(t, err)
	require.Equal(t, r5.Secrets, got.Secrets)
}

// TestEndpointStoreListPagesAndFilters: List by tenant (index) and over
// every tenant (Scan), in pages, with filters.
func TestEndpointStoreListPagesAndFilters(t *testing.T) {
	s := newEndpointStore(t)
	var ids []string
	for i := range 7 {
		e := webhookEndpoint("acme")
		if i%2 == 1 {
			e.EventTypes = []string{"customer.created"}
		}
		c, err := s.t.Create(s.ctx, e)
		require.NoError(t, err)
		ids = append(ids, c.ID)
	}
	other, err := s.t.Create(s.ctx, webhookEndpoint("globex"))
	require.NoError(t, err)
	_, err = s.t.SetDisabled(s.ctx, ids[2], &endpoint.Disabled{Reason: "paused"})
	require.NoError(t, err)

	collect := func(q endpoint.ListQuery) (got []string, pages int) {
		t.Helper()
		for {
			page, err := s.t.List(s.ctx, q)
			require.NoError(t, err)
			pages++
			require.LessOrEqual(t, len(page.Endpoints), max(q.Limit, 1))
			for _, e := range page.Endpoints {
				require.Nil(t, e.Secrets, "a listing carries no secrets")
				require.Nil(t, e.Headers, "a listing carries no header values")
				got = append(got, e.ID)
			}
			if page.Next == "" {
				return got, pages
			}
			q.Cursor = page.Next
		}
	}
	// Ids of one millisecond sort at random: the listing is in id order.
	byID := slices.Sorted(slices.Values(ids))
	got, pages := collect(endpoint.ListQuery{Tenant: "acme", Limit: 3})
	require.Equal(t, byID, got, "a tenant's endpoints in id order")
	require.GreaterOrEqual(t, pages, 3)

	got, _ = collect(endpoint.ListQuery{Tenant: "acme", Limit: 2, EventType: "invoice.paid"})
	require.ElementsMatch(t, []string{ids[0], ids[2], ids[4], ids[6]}, got)
	got, _ = collect(endpoint.ListQuery{Tenant: "acme", Limit: 2, State: endpoint.StateDisabled})
	require.Equal(t, []string{ids[2]}, got)
	got, _ = collect(endpoint.ListQuery{Tenant: "acme", Limit: 2, State: endpoint.StateEnabled, EventType: "invoice.void"})
	require.ElementsMatch(t, []string{ids[0], ids[4], ids[6]}, got)

	got, pages = collect(endpoint.ListQuery{Limit: 3})
	require.ElementsMatch(t, append(append([]string{}, ids...), other.ID), got, "every tenant's")
	require.GreaterOrEqual(t, pages, 3)
	got, _ = collect(endpoint.ListQuery{Tenant: "globex"})
	require.Equal(t, []string{other.ID}, got)
	got, _ = collect(endpoint.ListQuery{Tenant: "nobody"})
	require.Empty(t, got)

	// Failure items of an endpoint are not endpoints.
	require.NoError(t, s.t.RecordFailure(s.ctx, ids[0], endpoint.Failure{MessageID: "msg_1", Class: "http_500", Reason: "500 Internal Server Error", Attempt: 1}))
	got, _ = collect(endpoint.ListQuery{Limit: 100})
	require.Len(t, got, 8)

	var fe *endpoint.FieldError
	for _, q := range []endpoint.ListQuery{
		{Limit: endpoint.MaxListLimit + 1},
		{Limit: -1},
		{State: "paused"},
		{EventType: "invoice.*"},
		{Tenant: "bad tenant"},
		{Tenant: "acme", Cursor: "not-a-cursor"},
		{Tenant: "acme", Cursor: base64.RawURLEncoding.EncodeToString([]byte(`{"pk":"endpoint#x"}`))},
	} {
		_, err := s.t.List(s.ctx, q)
		require.ErrorAs(t, err, &fe, "%+v", q)
	}
	// A cursor of one tenant's listing is refused for another's, also one
	// whose name is a prefix of it.
	page, err := s.t.List(s.ctx, endpoint.ListQuery{Tenant: "acme", Limit: 1})
	require.NoError(t, err)
	for _, tenant := range []string{"globex", "acm"} {
		_, err = s.t.List(s.ctx, endpoint.ListQuery{Tenant: tenant, Cursor: page.Next})
		require.ErrorAs(t, err, &fe, tenant)
		require.Equal(t, "cursor", fe.Field)
	}
	_, err = s.t.List(s.ctx, endpoint.ListQuery{Cursor: page.Next})
	require.ErrorAs(t, err, &fe, "an index cursor is not a Scan's")
}

// TestEndpointStoreSubscribers: a tenant's enabled endpoints whose filter
// matches, in pages, from the index alone.
func TestEndpointStoreSubscribers(t *testing.T) {
	s := newEndpointStore(t)
	want := map[string]endpoint.Kind{}
	for i := range 12 {
		e := webhookEndpoint("acme")
		switch i % 4 {
		case 0:
			e.EventTypes = nil // every type
		case 1:
			e.EventTypes = []string{"invoice.paid"}
		case 2:
			e.EventTypes = []string{"customer.*"} // no match
		case 3:
			e.Kind, e.URL, e.Headers = endpoint.KindDiscord, "https://discord.com/api/webhooks/1/tok", nil
			e.EventTypes = []string{"invoice.*"}
		}
		c, err := s.t.Create(s.ctx, e)
		require.NoError(t, err)
		if i == 5 {
			_, err = s.t.SetDisabled(s.ctx, c.ID, &endpoint.Disabled{Reason: "paused"})
			require.NoError(t, err)
			continue
		}
		if i%4 != 2 {
			want[c.ID] = e.Kind
		}
	}
	_, err := s.t.Create(s.ctx, webhookEndpoint("globex"))
	require.NoError(t, err)

	got := map[string]endpoint.Kind{}
	cursor, pages := "", 0
	for {
		subs, next, err := s.t.Subscribers(s.ctx, "acme", "invoice.paid", cursor, 2)
		require.NoError(t, err)
		pages++
		require.LessOrEqual(t, len(subs), 2)
		for _, sub := range subs {
			_, dup := got[sub.ID]
			require.False(t, dup, "each subscriber once")
			got[sub.ID] = sub.Kind
		}
		if next == "" {
			break
		}
		cursor = next
	}
	require.Equal(t, want, got)
	require.GreaterOrEqual(t, pages, 4)

	subs, next, err := s.t.Subscribers(s.ctx, "nobody", "invoice.paid", "", 0)
	require.NoError(t, err)
	require.Empty(t, subs)
	require.Empty(t, next)
	_, _, err = s.t.Subscribers(s.ctx, "globex", "invoice.paid", cursor, 10)
	var fe *endpoint.FieldError
	require.ErrorAs(t, err, &fe, "another tenant's cursor")
}

// TestEndpointStoreFailures: newest first, bounded, expired ones left out.
func TestEndpointStoreFailures(t *testing.T) {
	s := newEndpointStore(t)
	e, err := s.t.Create(s.ctx, webhookEndpoint("acme"))
	require.NoError(t, err)
	base := time.Now().UTC().Truncate(time.Millisecond)
	for i := range 5 {
		require.NoError(t, s.t.RecordFailure(s.ctx, e.ID, endpoint.Failure{
			At: base.Add(time.Duration(i) * time.Second), MessageID: fmt.Sprintf("msg_%d", i), EventID: "evt_1",
			Class: "http_503", Reason: "503 Service Unavailable", Attempt: i + 1,
		}))
	}
	// One past its retention, not yet deleted by DynamoDB.
	require.NoError(t, s.t.RecordFailure(s.ctx, e.ID, endpoint.Failure{At: base.Add(-endpoint.FailureRetention - time.Hour), MessageID: "msg_old", Class: "http_500"}))
	fs, err := s.t.Failures(s.ctx, e.ID, 3)
	require.NoError(t, err)
	require.Len(t, fs, 3)
	require.Equal(t, []string{"msg_4", "msg_3", "msg_2"}, []string{fs[0].MessageID, fs[1].MessageID, fs[2].MessageID})
	require.Equal(t, endpoint.Failure{At: base.Add(4 * time.Second), MessageID: "msg_4", EventID: "evt_1", Class: "http_503", Reason: "503 Service Unavailable", Attempt: 5}, fs[0])
	fs, err = s.t.Failures(s.ctx, e.ID, 0)
	require.NoError(t, err)
	require.Len(t, fs, 5, "the expired one is left out")
	fs, err = s.t.Failures(s.ctx, endpoint.NewID(), 0)
	require.NoError(t, err)
	require.Empty(t, fs)
	_, err = s.t.Failures(s.ctx, e.ID, endpoint.MaxFailuresLimit+1)
	var fe *endpoint.FieldError
	require.ErrorAs(t, err, &fe)
}

// TestEndpointStoreProvisionedTable: the local stack's provisioned table
// has the tenant index the store queries.
func TestEndpointStoreProvisionedTable(t *testing.T) {
	s := newEndpointStore(t)
	cfg, err := app.AWSConfig(s.ctx)
	require.NoError(t, err)
	tbl, err := endpoint.NewTable(endpoint.TableConfig{Table: storeTable(t), KeyID: readEnvFile(t, filepath.Join(repoRoot, localenv.EnvFile))["HERALD_ENDPOINT_KEY_ID"], DB: dynamodb.NewFromConfig(cfg), KMS: kms.NewFromConfig(cfg)})
	require.NoError(t, err)
	tenant := fmt.Sprintf("provisioned-%d", time.Now().UnixNano())
	e, err := tbl.Create(s.ctx, webhookEndpoint(tenant))
	require.NoError(t, err)
	t.Cleanup(func() { _ = tbl.Delete(context.Background(), e.ID, 0) })
	subs, _, err := tbl.Subscribers(s.ctx, tenant, "invoice.paid", "", 10)
	require.NoError(t, err)
	require.Equal(t, []endpoint.Subscriber{{ID: e.ID, Kind: endpoint.KindWebhook}}, subs)
}
