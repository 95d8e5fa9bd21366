package endpoint_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
	"github.com/heraldhq/herald/internal/testkit/kmstest"
	"github.com/heraldhq/herald/internal/testkit/testclock"
)

const tableName = "herald-test"

// fakes is a test's endpoint store on the wire-format fakes: a table made
// as template.yaml's StoreTable with its tenant index, and a KMS key.
type fakes struct {
	db    *dynamotest.Server
	kms   *kmstest.Server
	clock *testclock.Clock
	t     *endpoint.Table
	ctx   context.Context
}

func setupTable(t *testing.T) *fakes {
	t.Helper()
	f := &fakes{db: dynamotest.New(t), kms: kmstest.New(t), clock: testclock.New(time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)), ctx: context.Background()}
	f.db.AddTable(tableName, store.AttrPK, store.AttrSK)
	f.db.AddIndex(tableName, endpoint.TenantIndex, endpoint.AttrGSI1PK, endpoint.AttrGSI1SK, []string{endpoint.AttrEventTypes, endpoint.AttrDisabledAt, endpoint.AttrKind})
	f.kms.CreateKey("alias/herald-endpoints")
	var err error
	f.t, err = endpoint.NewTable(endpoint.TableConfig{Table: tableName, KeyID: "alias/herald-endpoints", DB: f.db.Client(), KMS: f.kms.Client(), Now: f.clock.Now})
	require.NoError(t, err)
	return f
}

func (f *fakes) create(t *testing.T, e endpoint.Endpoint) endpoint.Endpoint {
	t.Helper()
	c, err := f.t.Create(f.ctx, e)
	require.NoError(t, err)
	return c
}

// raw returns the stored endpoint item of id, as JSON attribute values.
func (f *fakes) raw(t *testing.T, id string) map[string]any {
	t.Helper()
	for _, it := range f.db.Items(tableName) {
		if pk, _ := it[store.AttrPK].(map[string]any); pk["S"] == "endpoint#"+id {
			if sk, _ := it[store.AttrSK].(map[string]any); sk["S"] == "endpoint" {
				return it
			}
		}
	}
	t.Fatalf("no item of %s", id)
	return nil
}

// storedBytes is every string and binary value of a raw item, binary ones
// decoded, for searching it for plaintext.
func storedBytes(v any) []byte {
	var b bytes.Buffer
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			switch k {
			case "B":
				raw, _ := base64.StdEncoding.DecodeString(e.(string))
				b.Write(raw)
			default:
				b.WriteString(k)
				b.Write(storedBytes(e))
			}
			b.WriteByte(0)
		}
	case []any:
		for _, e := range v {
			b.Write(storedBytes(e))
		}
	case string:
		b.WriteString(v)
	}
	return b.Bytes()
}

func TestNewTableNamesWhatIsMissing(t *testing.T) {
	t.Parallel()
	f := setupTable(t)
	for field, cfg := range map[string]endpoint.TableConfig{
		"Table": {DB: f.db.Client(), KMS: f.kms.Client()},
		"DB":    {Table: "t", KMS: f.kms.Client()},
		"KMS":   {Table: "t", DB: f.db.Client()},
	} {
		_, err := endpoint.NewTable(cfg)
		require.ErrorContains(t, err, field)
	}
}

// TestTableRoundTripOnTheFakes: create, read, and what the item holds;
// one GetItem and one Decrypt per read.
func TestTableRoundTripOnTheFakes(t *testing.T) {
	t.Parallel()
	f := setupTable(t)
	in := valid()
	in.Disabled = &endpoint.Disabled{Reason: "not yet"}
	e := f.create(t, in)
	require.Equal(t, f.clock.Now(), e.CreatedAt)
	require.Equal(t, &endpoint.Disabled{Reason: "not yet", At: f.clock.Now(), By: "operator"}, e.Disabled)
	require.Equal(t, 1, f.kms.Calls("GenerateDataKey"))

	gets, decrypts := f.db.Calls("GetItem"), f.kms.Calls("Decrypt")
	got, err := f.t.Get(f.ctx, e.ID)
	require.NoError(t, err)
	require.Equal(t, e, got)
	require.Equal(t, gets+1, f.db.Calls("GetItem"))
	require.Equal(t, decrypts+1, f.kms.Calls("Decrypt"))

	raw := f.raw(t, e.ID)
	require.Equal(t, map[string]any{"S": "acme"}, raw[endpoint.AttrTenant])
	require.Equal(t, map[string]any{"S": "tenant#acme"}, raw[endpoint.AttrGSI1PK])
	require.Equal(t, map[string]any{"S": "endpoint#" + e.ID}, raw[endpoint.AttrGSI1SK])
	require.Equal(t, map[string]any{"N": "10"}, raw[endpoint.AttrRateLimit])
	require.Equal(t, map[string]any{"N": fmt.Sprint(f.clock.Now().UnixMilli())}, raw[endpoint.AttrDisabledAt])
	stored := storedBytes(raw)
	for _, leak := range [][]byte{[]byte("s3cr3t"), e.Secrets[0].Key, []byte(e.Secrets[0].String()[len("whsec_"):])} {
		require.False(t, bytes.Contains(stored, leak), "the item holds %q", leak)
	}

	// A given secret is kept (a migration from another platform), checked.
	key := bytes.Repeat([]byte{7}, 32)
	in = valid()
	in.Secrets = []endpoint.Secret{{Key: key}}
	e2 := f.create(t, in)
	require.Equal(t, key, e2.Secrets[0].Key)
	in.Secrets = []endpoint.Secret{{Key: key[:23]}}
	_, err = f.t.Create(f.ctx, in)
	requireField(t, err, "secret")
}

// TestTableErrorsHoldNoSecret: a failing KMS or DynamoDB call is an error
// naming the endpoint, never its secret, URL or header value.
func TestTableErrorsHoldNoSecret(t *testing.T) {
	t.Parallel()
	f := setupTable(t)
	in := valid()
	in.Kind, in.URL = endpoint.KindSlack, "https://hooks.slack.com/services/T1/B1/CHATTOKEN"
	e := f.create(t, in)
	f.kms.Fail("Decrypt", 1)
	_, err := f.t.Get(f.ctx, e.ID)
	require.ErrorContains(t, err, e.ID)
	f.db.Fail("GetItem", 1)
	_, err2 := f.t.Get(f.ctx, e.ID)
	require.Error(t, err2)
	f.kms.Fail("GenerateDataKey", 1)
	_, _, err3 := f.t.RotateSecret(f.ctx, e.ID, time.Hour)
	require.Error(t, err3)
	f.db.Fail("PutItem", 1)
	_, err4 := f.t.Create(f.ctx, in)
	require.Error(t, err4)
	for _, err := range []error{err, err2, err3, err4} {
		for _, leak := range []string{"CHATTOKEN", "T1/B1", "s3cr3t", e.Secrets[0].String()} {
			require.NotContains(t, err.Error(), leak)
		}
	}
	got, err := f.t.Get(f.ctx, e.ID)
	require.NoError(t, err)
	require.Equal(t, e.Secrets, got.Secrets, "the failed rotation wrote nothing")

	// Without a KeyID the store reads but does not write secrets.
	ro, err := endpoint.NewTable(endpoint.TableConfig{Table: tableName, DB: f.db.Client(), KMS: f.kms.Client()})
	require.NoError(t, err)
	_, err = ro.Get(f.ctx, e.ID)
	require.NoError(t, err)
	_, err = ro.Create(f.ctx, valid())
	require.ErrorContains(t, err, "KeyID")
}

// TestTableConflictWithoutTheStoredItem: a store that does not return the
// item of a failed condition (ReturnValuesOnConditionCheckFailure is
// ignored by emulators) is read back for the current version.
func TestTableConflictWithoutTheStoredItem(t *testing.T) {
	t.Parallel()
	f := setupTable(t)
	f.db.OmitConditionItem(true)
	e := f.create(t, valid())
	require.NoError(t, f.t.Delete(f.ctx, e.ID, 1))
	require.ErrorIs(t, f.t.Delete(f.ctx, e.ID, 1), endpoint.ErrNotFound)
	e = f.create(t, valid())
	_, err := f.t.SetDisabled(f.ctx, e.ID, &endpoint.Disabled{Reason: "x"})
	require.NoError(t, err)
	var ce *endpoint.ConflictError
	require.ErrorAs(t, f.t.Delete(f.ctx, e.ID, 1), &ce)
	require.EqualValues(t, 2, ce.Current)
}

// TestListPagesOnTheFakes: pages by tenant cost one Query and one
// BatchGetItem each; keys left unprocessed are asked again; a listing of
// every tenant pages through the table's other items.
func TestListPagesOnTheFakes(t *testing.T) {
	t.Parallel()
	f := setupTable(t)
	var ids []string
	for range 5 {
		ids = append(ids, f.create(t, valid()).ID)
		f.clock.Advance(time.Millisecond) // ids of later milliseconds sort later
	}
	// Other items of the table, more than a Scan page holds.
	for i := range dynamotest.ScanPageItems + 20 {
		_, err := f.db.Client().PutItem(f.ctx, &dynamodb.PutItemInput{TableName: aws.String(tableName), Item: map[string]types.AttributeValue{
			store.AttrPK: &types.AttributeValueMemberS{Value: fmt.Sprintf("notification#webhook#%03d", i)}, store.AttrSK: &types.AttributeValueMemberS{Value: "delivery"},
		}})
		require.NoError(t, err)
	}
	queries, batches := f.db.Calls("Query"), f.db.Calls("BatchGetItem")
	page, err := f.t.List(f.ctx, endpoint.ListQuery{Tenant: "acme", Limit: 2})
	require.NoError(t, err)
	require.Equal(t, ids[:2], []string{page.Endpoints[0].ID, page.Endpoints[1].ID})
	require.Equal(t, queries+1, f.db.Calls("Query"))
	require.Equal(t, batches+1, f.db.Calls("BatchGetItem"))

	f.db.LeaveUnprocessed(1)
	page, err = f.t.List(f.ctx, endpoint.ListQuery{Tenant: "acme", Limit: 2, Cursor: page.Next})
	require.NoError(t, err)
	require.Equal(t, ids[2:4], []string{page.Endpoints[0].ID, page.Endpoints[1].ID}, "the unprocessed key was asked again")
	require.Equal(t, batches+3, f.db.Calls("BatchGetItem"))
	page, err = f.t.List(f.ctx, endpoint.ListQuery{Tenant: "acme", Limit: 2, Cursor: page.Next})
	require.NoError(t, err)
	require.Len(t, page.Endpoints, 1)
	require.Empty(t, page.Next)

	var all []string
	q := endpoint.ListQuery{Limit: 2}
	for {
		page, err := f.t.List(f.ctx, q)
		require.NoError(t, err)
		for _, e := range page.Endpoints {
			all = append(all, e.ID)
		}
		if page.Next == "" {
			break
		}
		q.Cursor = page.Next
	}
	require.ElementsMatch(t, ids, all)

	_, err = f.t.SetDisabled(f.ctx, ids[1], &endpoint.Disabled{Reason: "paused"})
	require.NoError(t, err)
	for _, c := range []struct {
		q    endpoint.ListQuery
		want []string
	}{
		{endpoint.ListQuery{State: endpoint.StateDisabled}, ids[1:2]},
		{endpoint.ListQuery{State: endpoint.StateEnabled, EventType: "customer.deleted"}, []string{ids[0], ids[2], ids[3], ids[4]}},
		{endpoint.ListQuery{EventType: "refund.created"}, nil},
	} {
		page, err := f.t.List(f.ctx, c.q)
		require.NoError(t, err)
		var got []string
		for _, e := range page.Endpoints {
			got = append(got, e.ID)
		}
		require.ElementsMatch(t, c.want, got, "%+v", c.q)
	}
}

// TestSubscribersOfATenantWithManyEndpoints: every matching endpoint
// once, across pages read from the index alone (no GetItem, no Decrypt).
func TestSubscribersOfATenantWithManyEndpoints(t *testing.T) {
	t.Parallel()
	f := setupTable(t)
	want := map[string]bool{}
	for i := range 250 {
		e := valid()
		e.Headers = nil
		if i%5 == 0 {
			e.EventTypes = []string{"customer.*"}
		}
		if i == 3 {
			e.Disabled = &endpoint.Disabled{Reason: "paused"}
		}
		c := f.create(t, e)
		if i%5 != 0 && i != 3 {
			want[c.ID] = true
		}
		if i%50 == 7 {
			f.clock.Advance(time.Millisecond)
		}
	}
	gets, decrypts := f.db.Calls("GetItem"), f.kms.Calls("Decrypt")
	got := map[string]bool{}
	cursor := ""
	for {
		subs, next, err := f.t.Subscribers(f.ctx, "acme", "invoice.paid", cursor, 64)
		require.NoError(t, err)
		for _, s := range subs {
			require.False(t, got[s.ID], "each subscriber once")
			require.Equal(t, endpoint.KindWebhook, s.Kind)
			got[s.ID] = true
		}
		if next == "" {
			break
		}
		cursor = next
	}
	require.Equal(t, want, got)
	require.Equal(t, gets, f.db.Calls("GetItem"), "the index alone")
	require.Equal(t, decrypts, f.kms.Calls("Decrypt"))
	_, _, err := f.t.Subscribers(f.ctx, "acme", "invoice.paid", "", endpoint.MaxSubscribersLimit+1)
	requireField(t, err, "limit")
}

// interleaved is the fake's SDK client with another writer's write of
// the endpoint's version before each of the next n PutItem calls.
type interleaved struct {
	*dynamodb.Client
	f  *fakes
	t  *testing.T
	n  int
	id string
}

func (c *interleaved) PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	if c.n > 0 {
		c.n--
		out, err := c.Client.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(tableName), Key: map[string]types.AttributeValue{
			store.AttrPK: &types.AttributeValueMemberS{Value: "endpoint#" + c.id}, store.AttrSK: &types.AttributeValueMemberS{Value: "endpoint"}}})
		require.NoError(c.t, err)
		v := out.Item[store.AttrVersion].(*types.AttributeValueMemberN).Value
		out.Item[store.AttrVersion] = &types.AttributeValueMemberN{Value: v + "0"}
		_, err = c.Client.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(tableName), Item: out.Item})
		require.NoError(c.t, err)
	}
	return c.Client.PutItem(ctx, in, opts...)
}

func TestTableWriteBetweenReadAndWrite(t *testing.T) {
	t.Parallel()
	f := setupTable(t)
	e := f.create(t, valid())
	other := &interleaved{Client: f.db.Client(), f: f, t: t, id: e.ID}
	tbl, err := endpoint.NewTable(endpoint.TableConfig{Table: tableName, KeyID: "alias/herald-endpoints", DB: other, KMS: f.kms.Client(), Now: f.clock.Now})
	require.NoError(t, err)
	other.n = 1
	rate := 3.0
	_, err = tbl.Update(f.ctx, e.ID, 1, endpoint.Patch{RateLimit: &rate})
	var ce *endpoint.ConflictError
	require.ErrorAs(t, err, &ce)
	require.EqualValues(t, 10, ce.Current)
	other.n = 2
	_, _, err = tbl.RotateSecret(f.ctx, e.ID, time.Hour)
	require.NoError(t, err, "the third try")
	other.n = 3
	_, err = tbl.SetDisabled(f.ctx, e.ID, nil)
	require.ErrorAs(t, err, &ce)
}

// TestFailuresOnTheFakes: newest first across the sort key's digits, and
// the reason cut to 1,024 characters.
func TestFailuresOnTheFakes(t *testing.T) {
	t.Parallel()
	f := setupTable(t)
	e := f.create(t, valid())
	at := time.UnixMilli(999).UTC() // fewer digits than the others: the key pads to 13
	require.NoError(t, f.t.RecordFailure(f.ctx, e.ID, endpoint.Failure{At: at, MessageID: "msg_a", Class: "http_500"}))
	require.NoError(t, f.t.RecordFailure(f.ctx, e.ID, endpoint.Failure{At: at.Add(time.Hour), MessageID: "msg_b", Class: "http_500", Reason: strings.Repeat("é", 2000)}))
	f.clock.Advance(-f.clock.Now().Sub(at)) // the clock at the first failure: none expired
	fs, err := f.t.Failures(f.ctx, e.ID, 10)
	require.NoError(t, err)
	require.Equal(t, []string{"msg_b", "msg_a"}, []string{fs[0].MessageID, fs[1].MessageID})
	require.Equal(t, 1024, len([]rune(fs[0].Reason)))
	require.True(t, slices.IsSortedFunc(fs, func(a, b endpoint.Failure) int { return b.At.Compare(a.At) }))
}
