package endpoint

import (
	"context"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/heraldhq/herald/internal/store"
)

// writeTries is how many times SetDisabled and RotateSecret read and write
// again when another writer changed the endpoint between their read and
// their write.
const writeTries = 3

// Create validates e (*FieldError), gives it a new id, version 1, its
// creation time and, when it has none, a first signing secret
// ([NewSecret]), seals its secrets, headers and (chat) URL with a new data
// key, and writes its item with one PutItem conditional on no item
// existing. A Disabled without At is disabled now (By "operator" when
// empty). It returns the endpoint WITH its secrets, for the caller to show
// once.
func (t *Table) Create(ctx context.Context, e Endpoint) (Endpoint, error) {
	if err := t.cfg.URLRules.Validate(e); err != nil {
		return Endpoint{}, err
	}
	now := t.now()
	e.ID, e.Version, e.CreatedAt, e.UpdatedAt = newID(now), 1, now, now
	if err := checkSecrets(e.Secrets); err != nil {
		return Endpoint{}, err
	}
	if len(e.Secrets) == 0 {
		e.Secrets = []Secret{NewSecret(now)}
	}
	if d := e.Disabled; d != nil {
		d2 := *d
		if d2.At.IsZero() {
			d2.At = now
		}
		if d2.By == "" {
			d2.By = "operator"
		}
		e.Disabled = &d2
	}
	item, err := t.item(ctx, e)
	if err != nil {
		return Endpoint{}, err
	}
	_, err = t.cfg.DB.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                aws.String(t.cfg.Table),
		Item:                     item,
		ConditionExpression:      aws.String("attribute_not_exists(#pk)"),
		ExpressionAttributeNames: map[string]string{"#pk": store.AttrPK},
	})
	if err != nil {
		return Endpoint{}, fmt.Errorf("create endpoint %s: %w", e.ID, err)
	}
	return e, nil
}

// checkSecrets checks secrets given to Create: at most MaxSecretVersions,
// keys of 24–64 bytes (Standard Webhooks "Signature scheme").
func checkSecrets(secrets []Secret) error {
	if len(secrets) > MaxSecretVersions {
		return &FieldError{Field: "secret", Reason: fmt.Sprintf("%d secrets; at most %d", len(secrets), MaxSecretVersions)}
	}
	for _, sec := range secrets {
		if len(sec.Key) < 24 || len(sec.Key) > 64 {
			return &FieldError{Field: "secret", Reason: "a signing key must be 24 to 64 bytes (Standard Webhooks)"}
		}
	}
	return nil
}

// item seals e and returns its item.
func (t *Table) item(ctx context.Context, e Endpoint) (map[string]types.AttributeValue, error) {
	sealed, dataKey, err := t.seal(ctx, e.ID, sealedOf(e))
	if err != nil {
		return nil, err
	}
	return itemOf(e, sealed, dataKey), nil
}

// now is the clock to the millisecond, as the items keep it.
func (t *Table) now() time.Time { return t.cfg.Now().UTC().Truncate(time.Millisecond) }

// Get reads endpoint id with one strongly consistent GetItem and unseals
// its secrets, headers and (chat) URL with one KMS Decrypt. It returns
// ErrNotFound when there is no such endpoint.
func (t *Table) Get(ctx context.Context, id string) (Endpoint, error) {
	e, _, err := t.read(ctx, id, true)
	return e, err
}

// read reads endpoint id; unseal says whether to decrypt its sealed
// attributes. It also returns the item.
func (t *Table) read(ctx context.Context, id string, unseal bool) (Endpoint, map[string]types.AttributeValue, error) {
	if !ValidID(id) {
		return Endpoint{}, nil, ErrNotFound
	}
	out, err := t.cfg.DB.GetItem(ctx, &dynamodb.GetItemInput{
		TableName:      aws.String(t.cfg.Table),
		Key:            endpointKey(id),
		ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return Endpoint{}, nil, fmt.Errorf("read endpoint %s: %w", id, err)
	}
	e, ok := endpointOf(out.Item)
	if !ok {
		return Endpoint{}, nil, ErrNotFound
	}
	if unseal {
		sealed, dataKey := sealedAttrs(out.Item)
		d, err := t.unseal(ctx, id, sealed, dataKey)
		if err != nil {
			return Endpoint{}, nil, err
		}
		d.apply(&e)
	}
	return e, out.Item, nil
}

// Update applies p to endpoint id if its stored version is version: reads
// it (GetItem, KMS Decrypt), validates the result (*FieldError), seals it
// again with a new data key and writes it with version+1 by one PutItem
// conditional on the version read. It returns the endpoint with its
// secrets, ErrNotFound, or a *ConflictError when the stored version is
// another (before or during the update: nothing was written).
func (t *Table) Update(ctx context.Context, id string, version int64, p Patch) (Endpoint, error) {
	e, _, err := t.read(ctx, id, true)
	if err != nil {
		return Endpoint{}, err
	}
	if e.Version != version {
		return Endpoint{}, &ConflictError{ID: id, Want: version, Current: e.Version}
	}
	if p.URL != nil {
		e.URL = *p.URL
	}
	if p.Description != nil {
		e.Description = *p.Description
	}
	if p.EventTypes != nil {
		e.EventTypes = *p.EventTypes
	}
	if p.Headers != nil {
		e.Headers = *p.Headers
	}
	if p.Metadata != nil {
		e.Metadata = *p.Metadata
	}
	if p.RateLimit != nil {
		e.RateLimit = *p.RateLimit
	}
	if err := t.cfg.URLRules.Validate(e); err != nil {
		return Endpoint{}, err
	}
	return t.write(ctx, e, true)
}

// write writes e at e.Version+1, conditional on the stored version being
// e.Version; reseal says whether its sealed attributes changed (else the
// stored ones are kept, item holding them).
func (t *Table) write(ctx context.Context, e Endpoint, reseal bool, item ...map[string]types.AttributeValue) (Endpoint, error) {
	read := e.Version
	e.Version++
	e.UpdatedAt = t.now()
	var it map[string]types.AttributeValue
	if reseal {
		var err error
		if it, err = t.item(ctx, e); err != nil {
			return Endpoint{}, err
		}
	} else {
		sealed, dataKey := sealedAttrs(item[0])
		it = itemOf(e, sealed, dataKey)
	}
	_, err := t.cfg.DB.PutItem(ctx, &dynamodb.PutItemInput{
		TableName:                           aws.String(t.cfg.Table),
		Item:                                it,
		ConditionExpression:                 aws.String("#version = :version"),
		ExpressionAttributeNames:            map[string]string{"#version": store.AttrVersion},
		ExpressionAttributeValues:           map[string]types.AttributeValue{":version": n(read)},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
	if err != nil {
		return Endpoint{}, t.writeError(ctx, "update", e.ID, read, err)
	}
	return e, nil
}

// writeError turns a failed conditional write of endpoint id at version
// want into ErrNotFound or a *ConflictError (reading the item back when
// the store did not return it), or wraps any other failure.
func (t *Table) writeError(ctx context.Context, op, id string, want int64, err error) error {
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		return fmt.Errorf("%s endpoint %s: %w", op, id, err)
	}
	item := ccf.Item
	if item == nil {
		_, it, rerr := t.read(ctx, id, false)
		if errors.Is(rerr, ErrNotFound) {
			return ErrNotFound
		}
		if rerr != nil {
			return rerr
		}
		item = it
	}
	e, ok := endpointOf(item)
	if !ok {
		return ErrNotFound
	}
	return &ConflictError{ID: id, Want: want, Current: e.Version}
}

// Delete deletes endpoint id with one DeleteItem conditional on the item
// existing and, when version is not 0, on its version. It returns
// ErrNotFound or a *ConflictError. Its failure items expire on their own
// (FailureRetention).
func (t *Table) Delete(ctx context.Context, id string, version int64) error {
	if !ValidID(id) {
		return ErrNotFound
	}
	in := &dynamodb.DeleteItemInput{
		TableName:                           aws.String(t.cfg.Table),
		Key:                                 endpointKey(id),
		ConditionExpression:                 aws.String("attribute_exists(#pk)"),
		ExpressionAttributeNames:            map[string]string{"#pk": store.AttrPK},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	if version != 0 {
		in.ConditionExpression = aws.String("attribute_exists(#pk) AND #version = :version")
		in.ExpressionAttributeNames["#version"] = store.AttrVersion
		in.ExpressionAttributeValues = map[string]types.AttributeValue{":version": n(version)}
	}
	if _, err := t.cfg.DB.DeleteItem(ctx, in); err != nil {
		return t.writeError(ctx, "delete", id, version, err)
	}
	return nil
}

// SetDisabled disables endpoint id with d (At defaults to now, By to
// "operator"), or enables it when d is nil, by a read and a write
// conditional on the version read, tried again up to 3 times when another
// writer came between. Its sealed attributes are kept as stored (no KMS
// call). It returns the endpoint without its secrets, ErrNotFound, or a
// *ConflictError after 3 tries.
func (t *Table) SetDisabled(ctx context.Context, id string, d *Disabled) (Endpoint, error) {
	if d != nil {
		d2 := *d
		if d2.At.IsZero() {
			d2.At = t.now()
		}
		if d2.By == "" {
			d2.By = "operator"
		}
		d = &d2
	}
	return t.retry(ctx, id, false, func(e *Endpoint) error {
		e.Disabled = d
		return nil
	})
}

// retry reads endpoint id (unsealed when unseal), changes it with change
// and writes it, up to writeTries times while other writers come between.
func (t *Table) retry(ctx context.Context, id string, unseal bool, change func(*Endpoint) error) (Endpoint, error) {
	var conflict *ConflictError
	for range writeTries {
		e, item, err := t.read(ctx, id, unseal)
		if err != nil {
			return Endpoint{}, err
		}
		if err := change(&e); err != nil {
			return Endpoint{}, err
		}
		out, err := t.write(ctx, e, unseal, item)
		if !errors.As(err, &conflict) {
			return out, err
		}
	}
	return Endpoint{}, conflict
}

// RotateSecret makes a new current signing secret of endpoint id
// ([NewSecret], version one above the newest): every older secret signs
// beside it until grace from now at the latest (0 to [MaxGrace]; 0 stops
// them all at once, for a secret that leaked), those whose grace period
// ended are dropped, and at most [MaxSecretVersions] are kept (the oldest
// go first). Read, sealed again and written as
// SetDisabled is. It returns the endpoint with its secrets and the new
// secret, a *FieldError for a bad grace, ErrNotFound or a *ConflictError.
func (t *Table) RotateSecret(ctx context.Context, id string, grace time.Duration) (Endpoint, Secret, error) {
	if grace < 0 || grace > MaxGrace {
		return Endpoint{}, Secret{}, &FieldError{Field: "grace", Reason: fmt.Sprintf("must be 0 to %s", MaxGrace)}
	}
	var fresh Secret
	e, err := t.retry(ctx, id, true, func(e *Endpoint) error {
		now := t.now()
		fresh = NewSecret(now)
		kept := []Secret{fresh}
		for _, sec := range e.Secrets {
			fresh.Version = max(fresh.Version, sec.Version+1)
			if end := now.Add(grace); sec.Until.IsZero() || sec.Until.After(end) {
				sec.Until = end
			}
			if sec.Until.After(now) && len(kept) < MaxSecretVersions {
				kept = append(kept, sec)
			}
		}
		kept[0] = fresh
		e.Secrets = kept
		return nil
	})
	if err != nil {
		return Endpoint{}, Secret{}, err
	}
	return e, fresh, nil
}

// List returns one page of endpoints without their secrets, headers or
// chat URLs: a tenant's in id order (creation order) by a Query of
// TenantIndex and a BatchGetItem of the page's items, or every tenant's in
// the table's order by a Scan of the whole table (every item, not only
// endpoints, is read and paid for: list by tenant where you can). EventType keeps those whose filter matches it, State those
// enabled or disabled. It returns a *FieldError for a bad limit, state,
// event type or cursor. A page may hold fewer than Limit endpoints while
// Next is not "".
func (t *Table) List(ctx context.Context, q ListQuery) (Page, error) {
	limit, err := checkLimit(q.Limit)
	if err != nil {
		return Page{}, err
	}
	switch q.State {
	case "", StateEnabled, StateDisabled:
	default:
		return Page{}, &FieldError{Field: "state", Reason: `must be "enabled" or "disabled"`}
	}
	if q.EventType != "" {
		if err := ValidateEventType(q.EventType); err != nil {
			return Page{}, &FieldError{Field: "event_type", Reason: err.(*FieldError).Reason}
		}
	}
	if q.Tenant != "" && !tenantPattern.MatchString(q.Tenant) {
		return Page{}, &FieldError{Field: "tenant", Reason: fmt.Sprintf("must be 1–%d characters of A-Z a-z 0-9 . _ : -", MaxTenantChars)}
	}
	keep := func(e Endpoint) bool {
		return (q.EventType == "" || Matches(e.EventTypes, q.EventType)) &&
			(q.State == "" || (q.State == StateDisabled) == (e.Disabled != nil))
	}
	var page Page
	if q.Tenant != "" {
		rows, next, err := t.queryTenant(ctx, q.Tenant, q.Cursor, limit, func(item map[string]types.AttributeValue) bool {
			e, ok := endpointOf(withPK(item))
			return ok && keep(e)
		})
		if err != nil {
			return Page{}, err
		}
		page.Next = next
		page.Endpoints, err = t.batchGet(ctx, rows)
		return page, err
	}
	start, err := t.cursor(q.Cursor, false, "")
	if err != nil {
		return Page{}, err
	}
	for {
		out, err := t.cfg.DB.Scan(ctx, &dynamodb.ScanInput{
			TableName:                 aws.String(t.cfg.Table),
			FilterExpression:          aws.String("#type = :type"),
			ExpressionAttributeNames:  map[string]string{"#type": store.AttrType},
			ExpressionAttributeValues: map[string]types.AttributeValue{":type": s(TypeEndpoint)},
			// No Limit: the table holds far more other items than
			// endpoints, so each call reads a full page (1 MB).
			ExclusiveStartKey: start,
		})
		if err != nil {
			return Page{}, fmt.Errorf("list endpoints: %w", err)
		}
		for i, item := range out.Items {
			if e, ok := endpointOf(item); ok && keep(e) {
				page.Endpoints = append(page.Endpoints, e)
				if len(page.Endpoints) == limit {
					if i < len(out.Items)-1 || out.LastEvaluatedKey != nil {
						page.Next = encodeCursor(map[string]types.AttributeValue{store.AttrPK: item[store.AttrPK], store.AttrSK: item[store.AttrSK]})
					}
					return page, nil
				}
			}
		}
		if out.LastEvaluatedKey == nil {
			return page, nil
		}
		start = out.LastEvaluatedKey
	}
}

// withPK gives an index row the type its item has, so that endpointOf
// reads its projected attributes.
func withPK(row map[string]types.AttributeValue) map[string]types.AttributeValue {
	if _, ok := row[store.AttrType]; !ok {
		row[store.AttrType] = s(TypeEndpoint)
	}
	return row
}

func checkLimit(limit int) (int, error) {
	switch {
	case limit == 0:
		return DefaultListLimit, nil
	case limit < 1 || limit > MaxListLimit:
		return 0, &FieldError{Field: "limit", Reason: fmt.Sprintf("must be 1 to %d", MaxListLimit)}
	}
	return limit, nil
}

// cursor decodes c, a cursor of a Scan (index false) or of tenant's index
// Query; "" is the first page. A cursor of another listing is a
// *FieldError.
func (t *Table) cursor(c string, index bool, tenant string) (map[string]types.AttributeValue, error) {
	if c == "" {
		return nil, nil
	}
	prefixes := map[string]string{store.AttrPK: pkPrefix, store.AttrSK: skEndpoint}
	if index {
		prefixes[AttrGSI1PK] = gsiPKPrefix + tenant
		prefixes[AttrGSI1SK] = gsiSKPrefix
	}
	key, ok := decodeCursor(c, prefixes)
	if !ok || index && str(key, AttrGSI1PK) != gsiPKPrefix+tenant {
		return nil, &FieldError{Field: "cursor", Reason: "not a cursor of this listing: pass the next cursor of the previous page unchanged"}
	}
	return key, nil
}

// queryTenant reads tenant's rows of TenantIndex after cursor, in id
// order, keeping those keep accepts, until limit are kept or the index
// ends. It returns them and the cursor after the last ("" at the end).
func (t *Table) queryTenant(ctx context.Context, tenant, cursor string, limit int, keep func(map[string]types.AttributeValue) bool) ([]map[string]types.AttributeValue, string, error) {
	start, err := t.cursor(cursor, true, tenant)
	if err != nil {
		return nil, "", err
	}
	var rows []map[string]types.AttributeValue
	for {
		out, err := t.cfg.DB.Query(ctx, &dynamodb.QueryInput{
			TableName:                 aws.String(t.cfg.Table),
			IndexName:                 aws.String(TenantIndex),
			KeyConditionExpression:    aws.String("#gsi1pk = :tenant"),
			ExpressionAttributeNames:  map[string]string{"#gsi1pk": AttrGSI1PK},
			ExpressionAttributeValues: map[string]types.AttributeValue{":tenant": s(gsiPKPrefix + tenant)},
			ExclusiveStartKey:         start,
			Limit:                     aws.Int32(int32(limit)),
		})
		if err != nil {
			return nil, "", fmt.Errorf("list the endpoints of tenant %s: %w", tenant, err)
		}
		for i, row := range out.Items {
			if !keep(row) {
				continue
			}
			rows = append(rows, row)
			if len(rows) == limit {
				next := ""
				if i < len(out.Items)-1 || out.LastEvaluatedKey != nil {
					next = encodeCursor(map[string]types.AttributeValue{
						store.AttrPK: row[store.AttrPK], store.AttrSK: row[store.AttrSK],
						AttrGSI1PK: row[AttrGSI1PK], AttrGSI1SK: row[AttrGSI1SK],
					})
				}
				return rows, next, nil
			}
		}
		if out.LastEvaluatedKey == nil {
			return rows, "", nil
		}
		start = out.LastEvaluatedKey
	}
}

// batchGet reads the items of rows (at most 100: one BatchGetItem, and
// again for keys it leaves unprocessed) and returns their endpoints in
// rows' order, leaving out any deleted since.
func (t *Table) batchGet(ctx context.Context, rows []map[string]types.AttributeValue) ([]Endpoint, error) {
	if len(rows) == 0 {
		return []Endpoint{}, nil
	}
	keys := make([]map[string]types.AttributeValue, len(rows))
	for i, r := range rows {
		keys[i] = map[string]types.AttributeValue{store.AttrPK: r[store.AttrPK], store.AttrSK: r[store.AttrSK]}
	}
	byID := map[string]Endpoint{}
	req := map[string]types.KeysAndAttributes{t.cfg.Table: {Keys: keys, ConsistentRead: aws.Bool(true)}}
	for tries := 0; len(req) > 0; tries++ {
		if tries == 5 {
			return nil, errors.New("list endpoints: the table left keys unprocessed 5 times: try again")
		}
		out, err := t.cfg.DB.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
		if err != nil {
			return nil, fmt.Errorf("list endpoints: %w", err)
		}
		for _, item := range out.Responses[t.cfg.Table] {
			if e, ok := endpointOf(item); ok {
				byID[e.ID] = e
			}
		}
		req = out.UnprocessedKeys
	}
	eps := make([]Endpoint, 0, len(rows))
	for _, r := range rows {
		id := str(r, store.AttrPK)[len(pkPrefix):]
		if e, ok := byID[id]; ok {
			eps = append(eps, e)
		}
	}
	return eps, nil
}

// Subscriber page limits.
const (
	DefaultSubscribersLimit = 100
	MaxSubscribersLimit     = 1000
)

// Subscribers returns up to limit (1–[MaxSubscribersLimit], 0 for
// [DefaultSubscribersLimit]) of tenant's endpoints that are enabled (no
// disabled_at) and whose filter matches eventType, in id order, after
// cursor ("" for the first page), read from TenantIndex only (Query,
// eventually consistent: an endpoint created or changed within about a
// second may be missed or seen as before). It returns them and the next
// cursor, "" at the end. A bad cursor is a *FieldError.
func (t *Table) Subscribers(ctx context.Context, tenant, eventType, cursor string, limit int) ([]Subscriber, string, error) {
	switch {
	case limit == 0:
		limit = DefaultSubscribersLimit
	case limit < 0 || limit > MaxSubscribersLimit:
		return nil, "", &FieldError{Field: "limit", Reason: fmt.Sprintf("must be 1 to %d", MaxSubscribersLimit)}
	}
	rows, next, err := t.queryTenant(ctx, tenant, cursor, limit, func(row map[string]types.AttributeValue) bool {
		_, disabled := row[AttrDisabledAt]
		return !disabled && Matches(list(row, AttrEventTypes), eventType)
	})
	if err != nil {
		return nil, "", err
	}
	subs := make([]Subscriber, len(rows))
	for i, r := range rows {
		subs[i] = Subscriber{ID: str(r, AttrGSI1SK)[len(gsiSKPrefix):], Kind: Kind(str(r, AttrKind))}
	}
	return subs, next, nil
}

// RecordFailure writes failure f of endpoint id (one PutItem): sort key
// failure#<f.At in Unix ms, 13 digits>#<f.MessageID>, kept
// [FailureRetention] after f.At (expires_at). f.Reason must already be
// scrubbed of URLs and secrets; it is cut to 1,024 characters. A zero
// f.At is now.
func (t *Table) RecordFailure(ctx context.Context, id string, f Failure) error {
	if f.At.IsZero() {
		f.At = t.now()
	}
	if r := []rune(f.Reason); len(r) > maxReasonRune {
		f.Reason = string(r[:maxReasonRune])
	}
	if !utf8.ValidString(f.Reason) {
		f.Reason = string([]rune(f.Reason))
	}
	item := map[string]types.AttributeValue{
		store.AttrPK:        s(pkPrefix + id),
		store.AttrSK:        s(skFailure + fmt.Sprintf(failureMSFmt, f.At.UnixMilli()) + "#" + f.MessageID),
		store.AttrType:      s(TypeFailure),
		AttrClass:           s(f.Class),
		AttrReason:          s(f.Reason),
		AttrMessageID:       s(f.MessageID),
		AttrAttempt:         n(int64(f.Attempt)),
		AttrCreatedAt:       n(f.At.UnixMilli()),
		store.AttrExpiresAt: n(f.At.Add(FailureRetention).Unix()),
	}
	if f.EventID != "" {
		item[AttrEventID] = s(f.EventID)
	}
	if _, err := t.cfg.DB.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(t.cfg.Table), Item: item}); err != nil {
		return fmt.Errorf("record a failure of endpoint %s: %w", id, err)
	}
	return nil
}

// Failure listing limits.
const (
	DefaultFailuresLimit = 20
	MaxFailuresLimit     = 100
)

// Failures returns endpoint id's newest failures, newest first, at most
// limit (1–[MaxFailuresLimit], 0 for [DefaultFailuresLimit]): one Query,
// newest first (ScanIndexForward false); failures past their expires_at
// are left out (DynamoDB deletes them within days).
func (t *Table) Failures(ctx context.Context, id string, limit int) ([]Failure, error) {
	switch {
	case limit == 0:
		limit = DefaultFailuresLimit
	case limit < 0 || limit > MaxFailuresLimit:
		return nil, &FieldError{Field: "limit", Reason: fmt.Sprintf("must be 1 to %d", MaxFailuresLimit)}
	}
	now := t.cfg.Now()
	var fs []Failure
	var start map[string]types.AttributeValue
	for len(fs) < limit {
		out, err := t.cfg.DB.Query(ctx, &dynamodb.QueryInput{
			TableName:                 aws.String(t.cfg.Table),
			KeyConditionExpression:    aws.String("#pk = :pk AND begins_with(#sk, :failure)"),
			ExpressionAttributeNames:  map[string]string{"#pk": store.AttrPK, "#sk": store.AttrSK},
			ExpressionAttributeValues: map[string]types.AttributeValue{":pk": s(pkPrefix + id), ":failure": s(skFailure)},
			ScanIndexForward:          aws.Bool(false),
			ExclusiveStartKey:         start,
			Limit:                     aws.Int32(int32(limit - len(fs))),
		})
		if err != nil {
			return nil, fmt.Errorf("read the failures of endpoint %s: %w", id, err)
		}
		for _, item := range out.Items {
			if exp := num(item, store.AttrExpiresAt); exp != 0 && now.Unix() >= exp {
				continue
			}
			fs = append(fs, Failure{
				At:        time.UnixMilli(num(item, AttrCreatedAt)).UTC(),
				MessageID: str(item, AttrMessageID),
				EventID:   str(item, AttrEventID),
				Class:     str(item, AttrClass),
				Reason:    str(item, AttrReason),
				Attempt:   int(num(item, AttrAttempt)),
			})
		}
		if out.LastEvaluatedKey == nil {
			break
		}
		start = out.LastEvaluatedKey
	}
	if fs == nil {
		fs = []Failure{}
	}
	return fs, nil
}
