package endpoint

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/heraldhq/herald/internal/store"
)

// The table's endpoint and failure items (docs/endpoints.md "Item
// shapes"; the table's key attributes are package store's).
const (
	// TypeEndpoint and TypeFailure are the items' AttrType.
	TypeEndpoint = "endpoint"
	TypeFailure  = "endpoint_failure"
	// TenantIndex is the table's global secondary index of endpoints by
	// tenant: AttrGSI1PK "tenant#<tenant>" HASH, AttrGSI1SK
	// "endpoint#<id>" RANGE, projecting the keys and AttrEventTypes,
	// AttrDisabledAt, AttrKind (template.yaml, StoreTable).
	TenantIndex = "tenant-index"
	AttrGSI1PK  = "gsi1pk"
	AttrGSI1SK  = "gsi1sk"

	AttrTenant         = "tenant"
	AttrKind           = "kind"
	AttrURL            = "url"
	AttrURLHost        = "url_host"
	AttrDescription    = "description"
	AttrEventTypes     = "event_types"
	AttrRateLimit      = "rate_limit"
	AttrMetadata       = "metadata"
	AttrDisabledAt     = "disabled_at"
	AttrDisabledReason = "disabled_reason"
	AttrDisabledBy     = "disabled_by"
	AttrSealed         = "sealed"
	AttrDataKey        = "data_key"
	AttrCreatedAt      = "created_at"

	AttrClass     = "class"
	AttrReason    = "reason"
	AttrMessageID = "message_id"
	AttrEventID   = "event_id"
	AttrAttempt   = "attempt"

	// FailureRetention is how long a failure item is kept (its
	// expires_at).
	FailureRetention = 7 * 24 * time.Hour
)

// Key prefixes.
const (
	pkPrefix      = "endpoint#"
	skEndpoint    = "endpoint"
	skFailure     = "failure#"
	gsiPKPrefix   = "tenant#"
	gsiSKPrefix   = "endpoint#"
	failureMSFmt  = "%013d"
	maxReasonRune = 1024
)

func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }
func n(v int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(v, 10)}
}

func endpointKey(id string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{store.AttrPK: s(pkPrefix + id), store.AttrSK: s(skEndpoint)}
}

// itemOf is e's endpoint item, with its sealed attributes.
func itemOf(e Endpoint, sealed, dataKey []byte) map[string]types.AttributeValue {
	item := endpointKey(e.ID)
	item[store.AttrType] = s(TypeEndpoint)
	item[AttrTenant] = s(e.Tenant)
	item[AttrKind] = s(string(e.Kind))
	if e.Kind == KindWebhook {
		item[AttrURL] = s(e.URL)
	}
	if u, err := url.Parse(e.URL); err == nil {
		item[AttrURLHost] = s(strings.ToLower(u.Hostname()))
	}
	if e.Description != "" {
		item[AttrDescription] = s(e.Description)
	}
	if len(e.EventTypes) > 0 {
		l := make([]types.AttributeValue, len(e.EventTypes))
		for i, t := range e.EventTypes {
			l[i] = s(t)
		}
		item[AttrEventTypes] = &types.AttributeValueMemberL{Value: l}
	}
	if e.RateLimit > 0 {
		item[AttrRateLimit] = &types.AttributeValueMemberN{Value: strconv.FormatFloat(e.RateLimit, 'f', -1, 64)}
	}
	if len(e.Metadata) > 0 {
		m := make(map[string]types.AttributeValue, len(e.Metadata))
		for k, v := range e.Metadata {
			m[k] = s(v)
		}
		item[AttrMetadata] = &types.AttributeValueMemberM{Value: m}
	}
	if d := e.Disabled; d != nil {
		item[AttrDisabledAt] = n(d.At.UnixMilli())
		item[AttrDisabledReason] = s(d.Reason)
		item[AttrDisabledBy] = s(d.By)
	}
	item[AttrSealed] = &types.AttributeValueMemberB{Value: sealed}
	item[AttrDataKey] = &types.AttributeValueMemberB{Value: dataKey}
	item[store.AttrVersion] = n(e.Version)
	item[AttrCreatedAt] = n(e.CreatedAt.UnixMilli())
	item[store.AttrUpdatedAt] = n(e.UpdatedAt.UnixMilli())
	item[AttrGSI1PK] = s(gsiPKPrefix + e.Tenant)
	item[AttrGSI1SK] = s(gsiSKPrefix + e.ID)
	return item
}

// endpointOf reads an endpoint item without its sealed attributes (no
// secrets, no headers, no chat URL); ok is false when item is not one.
func endpointOf(item map[string]types.AttributeValue) (e Endpoint, ok bool) {
	pk := str(item, store.AttrPK)
	id, ok := strings.CutPrefix(pk, pkPrefix)
	if !ok || str(item, store.AttrType) != TypeEndpoint {
		return Endpoint{}, false
	}
	e = Endpoint{
		ID:          id,
		Tenant:      str(item, AttrTenant),
		Kind:        Kind(str(item, AttrKind)),
		URL:         str(item, AttrURL),
		Description: str(item, AttrDescription),
		EventTypes:  list(item, AttrEventTypes),
		Version:     num(item, store.AttrVersion),
		CreatedAt:   time.UnixMilli(num(item, AttrCreatedAt)).UTC(),
		UpdatedAt:   time.UnixMilli(num(item, store.AttrUpdatedAt)).UTC(),
	}
	if r, ok := item[AttrRateLimit].(*types.AttributeValueMemberN); ok {
		e.RateLimit, _ = strconv.ParseFloat(r.Value, 64)
	}
	if m, ok := item[AttrMetadata].(*types.AttributeValueMemberM); ok {
		e.Metadata = make(map[string]string, len(m.Value))
		for k, v := range m.Value {
			if sv, ok := v.(*types.AttributeValueMemberS); ok {
				e.Metadata[k] = sv.Value
			}
		}
	}
	if _, ok := item[AttrDisabledAt]; ok {
		e.Disabled = &Disabled{At: time.UnixMilli(num(item, AttrDisabledAt)).UTC(), Reason: str(item, AttrDisabledReason), By: str(item, AttrDisabledBy)}
	}
	return e, true
}

func sealedAttrs(item map[string]types.AttributeValue) (sealed, dataKey []byte) {
	if b, ok := item[AttrSealed].(*types.AttributeValueMemberB); ok {
		sealed = b.Value
	}
	if b, ok := item[AttrDataKey].(*types.AttributeValueMemberB); ok {
		dataKey = b.Value
	}
	return sealed, dataKey
}

func str(item map[string]types.AttributeValue, name string) string {
	if v, ok := item[name].(*types.AttributeValueMemberS); ok {
		return v.Value
	}
	return ""
}

func num(item map[string]types.AttributeValue, name string) int64 {
	if v, ok := item[name].(*types.AttributeValueMemberN); ok {
		i, _ := strconv.ParseInt(v.Value, 10, 64)
		return i
	}
	return 0
}

func list(item map[string]types.AttributeValue, name string) []string {
	l, ok := item[name].(*types.AttributeValueMemberL)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(l.Value))
	for _, v := range l.Value {
		if sv, ok := v.(*types.AttributeValueMemberS); ok {
			out = append(out, sv.Value)
		}
	}
	return out
}

// cursor is the opaque form of a page's last key: base64url of a JSON
// object of its string key attributes.
func encodeCursor(key map[string]types.AttributeValue) string {
	if len(key) == 0 {
		return ""
	}
	m := make(map[string]string, len(key))
	for k, v := range key {
		if sv, ok := v.(*types.AttributeValueMemberS); ok {
			m[k] = sv.Value
		}
	}
	b, _ := json.Marshal(m) // a map of strings always marshals
	return base64.RawURLEncoding.EncodeToString(b)
}

// decodeCursor reads a cursor of a listing whose keys are names, each
// value starting with its prefix in prefixes; ok is false for anything
// else (a cursor of another listing, or made up).
func decodeCursor(c string, prefixes map[string]string) (map[string]types.AttributeValue, bool) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return nil, false
	}
	var m map[string]string
	if json.Unmarshal(b, &m) != nil || len(m) != len(prefixes) {
		return nil, false
	}
	key := make(map[string]types.AttributeValue, len(m))
	for k, p := range prefixes {
		v, ok := m[k]
		if !ok || !strings.HasPrefix(v, p) {
			return nil, false
		}
		key[k] = s(v)
	}
	return key, true
}
