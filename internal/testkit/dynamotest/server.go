// Package dynamotest is an httptest server speaking Amazon DynamoDB's AWS
// JSON 1.0 wire protocol (X-Amz-Target "DynamoDB_20120810.<Action>",
// application/x-amz-json-1.0), for unit tests that need the real AWS SDK v2
// client to serialize requests and parse answers, including faults the
// local stack cannot be made to give (throttling, a failing call).
//
// It holds tables with a string partition key and an optional string sort
// key in memory, with global secondary indexes of string keys
// ([Server.AddIndex]), and answers PutItem, GetItem, DeleteItem, Scan
// (paged with Limit, ExclusiveStartKey and LastEvaluatedKey), Query (of
// the table or an index, key conditions on the partition key and one sort
// key comparison, ScanIndexForward, paged likewise) and BatchGetItem,
// with condition and filter expressions (comparisons, BETWEEN, IN, AND,
// OR, NOT, parentheses, attribute_exists, attribute_not_exists,
// begins_with on top-level attributes) and
// ReturnValuesOnConditionCheckFailure; not ProjectionExpression or Select. Like DynamoDB it
// rejects what DynamoDB rejects (Amazon DynamoDB Developer Guide, "Service,
// account, and table quotas" and "Reserved words"), as ValidationException
// unless said otherwise:
//   - an item over 400 KB (names and values, as DynamoDB sizes them);
//   - an item without its key attributes, a key of the wrong type or an
//     empty key value, a Key naming other attributes than the key's;
//   - a partition key value over 2,048 bytes or a sort key value over
//     1,024 (Developer Guide, "Constraints": "Partition key length");
//   - a reserved word used as an attribute name in an expression instead of
//     an expression attribute name;
//   - a #name or :value used but not defined, or defined but not used, and
//     ExpressionAttributeNames or -Values without an expression;
//   - a condition that does not parse, or names an unknown function;
//   - an attribute value that is not one typed member (S, N, B, BOOL, NULL,
//     M, L, SS, NS, BS), or a number that does not parse;
//   - a table it does not hold (ResourceNotFoundException);
//   - a condition that is false (ConditionalCheckFailedException, with the
//     item when ReturnValuesOnConditionCheckFailure is ALL_OLD, unless
//     [Server.OmitConditionItem] makes it answer as the emulators and older
//     DynamoDB-compatible stores do, without it).
//
// Time to live is not applied: like moto, the server never deletes expired
// items, so code under test must ignore them.
package dynamotest

import (
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/heraldhq/herald/internal/testkit/awstest"
)

// MaxItemBytes is DynamoDB's item size limit, 400 KB (Developer Guide,
// "Service, account, and table quotas": "Item size").
const MaxItemBytes = 400 * 1024

// ScanPageItems is how many items one Scan page holds here. DynamoDB ends
// a page at 1 MB of items read (Developer Guide, "Paginating table scan
// results"); a small count makes tests page without megabytes of items.
const ScanPageItems = 100

// targetPrefix is the X-Amz-Target prefix of DynamoDB's actions.
const targetPrefix = "DynamoDB_20120810."

// Server is an in-memory DynamoDB. Its fault methods may be called before
// or between calls.
type Server struct {
	srv *httptest.Server

	mu     sync.Mutex
	tables map[string]*table
	calls  map[string]int
	// consistent counts the calls of each action with ConsistentRead.
	consistent map[string]int
	throttle   map[string]int
	fail       map[string]fault
	omitItem   bool
	hold       map[string]*barrier
	// unprocessed is how many keys the next BatchGetItem leaves unread.
	unprocessed int
}

// barrier holds calls until n have arrived, then lets them all go.
type barrier struct {
	n       int
	mu      sync.Mutex
	waiting int
	release chan struct{}
}

func (b *barrier) wait() {
	b.mu.Lock()
	if b.release == nil {
		b.release = make(chan struct{})
	}
	ch := b.release
	if b.waiting++; b.waiting == b.n {
		close(ch)
		b.release, b.waiting = nil, 0
	}
	b.mu.Unlock()
	<-ch
}

// fault is a run of failing calls of one action: after skip calls, n fail.
type fault struct{ skip, n int }

type table struct {
	hash, rng string // key attribute names; rng is "" without a sort key
	items     map[string]map[string]value
	indexes   map[string]*index // global secondary indexes by name
}

// New starts a server, closed when t ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{tables: map[string]*table{}, calls: map[string]int{}, consistent: map[string]int{}, throttle: map[string]int{}, fail: map[string]fault{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// Client returns a real SDK client for the server, without SDK retries so
// that each fault reaches the code under test once.
func (s *Server) Client() *dynamodb.Client {
	return dynamodb.NewFromConfig(awstest.Config(s.srv.URL))
}

// URL is the server's endpoint, for clients built from the SDK's default
// configuration (AWS_ENDPOINT_URL_DYNAMODB).
func (s *Server) URL() string { return s.srv.URL }

// AddTable creates a table keyed by the string attributes hash and (when
// not empty) rng.
func (s *Server) AddTable(name, hash, rng string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tables[name] = &table{hash: hash, rng: rng, items: map[string]map[string]value{}, indexes: map[string]*index{}}
}

// Calls is the number of calls of action so far, rejected ones included.
func (s *Server) Calls(action string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[action]
}

// ConsistentReads is the number of calls of action so far that asked
// for a strongly consistent read (ConsistentRead true): twice the read
// request units of an eventually consistent one.
func (s *Server) ConsistentReads(action string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.consistent[action]
}

// Items returns a copy of the table's items as JSON attribute maps.
func (s *Server) Items(tableName string) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, it := range s.tables[tableName].items {
		m := map[string]any{}
		for k, v := range it {
			var a any
			_ = json.Unmarshal(v[v.kind()], &a)
			m[k] = map[string]any{v.kind(): a}
		}
		out = append(out, m)
	}
	return out
}

// Throttle makes the next n calls of action answer 400
// ProvisionedThroughputExceededException.
func (s *Server) Throttle(action string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.throttle[action] = n
}

// Fail makes the next n calls of action answer 500 InternalServerError.
func (s *Server) Fail(action string, n int) { s.FailAfter(action, 0, n) }

// FailAfter lets the next skip calls of action through, then makes n
// answer 500 InternalServerError.
func (s *Server) FailAfter(action string, skip, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[action] = fault{skip: skip, n: n}
}

// OmitConditionItem makes a ConditionalCheckFailedException carry no Item
// even when ReturnValuesOnConditionCheckFailure is ALL_OLD (omit true), as
// emulators and older DynamoDB-compatible stores answer (the parameter
// dates from June 2023); false restores DynamoDB's answer.
func (s *Server) OmitConditionItem(omit bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.omitItem = omit
}

// HoldUntil makes each call of action wait until n calls of it have
// arrived, then answers them together, in groups of n from then on: so
// that n clients hold their connections at the same moment. n 0 stops.
func (s *Server) HoldUntil(action string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hold == nil {
		s.hold = map[string]*barrier{}
	}
	if n <= 0 {
		delete(s.hold, action)
		return
	}
	s.hold[action] = &barrier{n: n}
}

// apiError is an error answer: the HTTP status, the code after "#" in
// __type, the message, and extra members (a ConditionalCheckFailedException's
// Item).
type apiError struct {
	status int
	code   string
	msg    string
	item   map[string]value
}

func validation(format string, args ...any) *apiError {
	return &apiError{status: http.StatusBadRequest, code: "ValidationException", msg: fmt.Sprintf(format, args...)}
}

func (s *Server) serve(rw http.ResponseWriter, r *http.Request) {
	action, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), targetPrefix)
	body, _ := io.ReadAll(r.Body)
	rw.Header().Set("Content-Type", "application/x-amz-json-1.0")
	s.mu.Lock()
	b := s.hold[action]
	s.mu.Unlock()
	if b != nil {
		b.wait()
	}
	s.mu.Lock()
	s.calls[action]++
	var out any
	var aerr *apiError
	if !ok || r.Header.Get("Content-Type") != "application/x-amz-json-1.0" {
		aerr = &apiError{status: http.StatusBadRequest, code: "UnknownOperationException", msg: "not a DynamoDB JSON 1.0 request"}
	} else {
		out, aerr = s.do(action, body)
	}
	s.mu.Unlock()
	status := http.StatusOK
	if aerr != nil {
		e := map[string]any{"__type": "com.amazonaws.dynamodb.v20120810#" + aerr.code, "message": aerr.msg}
		if aerr.item != nil {
			e["Item"] = aerr.item
		}
		out, status = e, aerr.status
	}
	raw, err := json.Marshal(out)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusInternalServerError)
		return
	}
	// DynamoDB sends the CRC32 of every response body; the SDK checks it.
	rw.Header().Set("X-Amz-Crc32", strconv.FormatUint(uint64(crc32.ChecksumIEEE(raw)), 10))
	rw.WriteHeader(status)
	_, _ = rw.Write(raw)
}

// request is the union of the members the answered actions read.
type request struct {
	TableName                           string
	Item                                map[string]value
	Key                                 map[string]value
	ConditionExpression                 *string
	ExpressionAttributeNames            map[string]string
	ExpressionAttributeValues           map[string]value
	ReturnValuesOnConditionCheckFailure string
	ReturnValues                        string
	ConsistentRead                      bool
	ExclusiveStartKey                   map[string]value
	Limit                               *int
	// Query and Scan.
	FilterExpression       *string
	KeyConditionExpression *string
	IndexName              *string
	ScanIndexForward       *bool
	ProjectionExpression   *string
	Select                 *string
	// BatchGetItem.
	RequestItems map[string]keysAndAttributes
}

func (s *Server) do(action string, body []byte) (any, *apiError) {
	if f := s.fail[action]; f.skip > 0 {
		f.skip--
		s.fail[action] = f
	} else if f.n > 0 {
		f.n--
		s.fail[action] = f
		return nil, &apiError{status: http.StatusInternalServerError, code: "InternalServerError", msg: "injected"}
	}
	if s.throttle[action] > 0 {
		s.throttle[action]--
		return nil, &apiError{status: http.StatusBadRequest, code: "ProvisionedThroughputExceededException",
			msg: "The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API."}
	}
	if !slices.Contains([]string{"PutItem", "GetItem", "DeleteItem", "Scan", "Query", "BatchGetItem"}, action) {
		return nil, &apiError{status: http.StatusBadRequest, code: "UnknownOperationException", msg: "dynamotest does not answer " + action}
	}
	var req request
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, &apiError{status: http.StatusBadRequest, code: "SerializationException", msg: err.Error()}
	}
	if req.ConsistentRead {
		s.consistent[action]++
	}
	if req.ProjectionExpression != nil || req.Select != nil {
		return nil, &apiError{status: http.StatusBadRequest, code: "UnknownOperationException", msg: "dynamotest does not answer ProjectionExpression or Select"}
	}
	if action == "BatchGetItem" {
		return s.batchGet(req)
	}
	t := s.tables[req.TableName]
	if t == nil {
		return nil, &apiError{status: http.StatusBadRequest, code: "ResourceNotFoundException", msg: "Requested resource not found"}
	}
	for _, m := range []map[string]value{req.Item, req.Key, req.ExpressionAttributeValues} {
		for name, v := range m {
			if err := v.valid(); err != nil {
				return nil, validation("One or more parameter values were invalid: %s: %v", name, err)
			}
		}
	}
	if aerr := checkReturnValues(req); aerr != nil {
		return nil, aerr
	}
	exprs, aerr := expressions(action, req)
	if aerr != nil {
		return nil, aerr
	}
	cond := exprs.condition
	switch action {
	case "Query":
		return t.query(req, exprs)
	case "PutItem":
		return s.omit(t.put(req, cond))
	case "GetItem":
		return t.get(req)
	case "Scan":
		return t.scan(req, exprs.filter)
	default:
		return s.omit(t.delete(req, cond))
	}
}

// omit drops a condition failure's item under OmitConditionItem.
func (s *Server) omit(out any, aerr *apiError) (any, *apiError) {
	if aerr != nil && s.omitItem {
		aerr.item = nil
	}
	return out, aerr
}

func checkReturnValues(req request) *apiError {
	if v := req.ReturnValuesOnConditionCheckFailure; v != "" && v != "ALL_OLD" && v != "NONE" {
		return validation("1 validation error detected: Value '%s' at 'returnValuesOnConditionCheckFailure' failed to satisfy constraint: Member must satisfy enum value set: [ALL_OLD, NONE]", v)
	}
	if v := req.ReturnValues; v != "" && v != "ALL_OLD" && v != "NONE" {
		return validation("ReturnValues can only be ALL_OLD or NONE")
	}
	return nil
}

func unusedKeys[V any](defined map[string]V, used map[string]bool) string {
	var out []string
	for k := range defined {
		if !used[k] {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return strings.Join(out, ", ")
}

// Key value limits (Amazon DynamoDB Developer Guide, "Constraints",
// "Partition keys and sort keys"), in bytes of the UTF-8 string.
const (
	MaxPartitionKeyBytes = 2048
	MaxSortKeyBytes      = 1024
)

// keyOf checks that item holds the table's key attributes as non-empty
// strings (only: when exact) and returns the item's storage key.
func (t *table) keyOf(item map[string]value, exact bool) (string, *apiError) {
	names := []string{t.hash}
	if t.rng != "" {
		names = append(names, t.rng)
	}
	if exact && len(item) != len(names) {
		return "", validation("The provided key element does not match the schema")
	}
	var parts []string
	for _, n := range names {
		v, ok := item[n]
		switch {
		case !ok && exact:
			return "", validation("The provided key element does not match the schema")
		case !ok:
			return "", validation("One or more parameter values were invalid: Missing the key %s in the item", n)
		case v.kind() != "S":
			return "", validation("One or more parameter values were invalid: Type mismatch for key %s expected: S actual: %s", n, v.kind())
		case v.str() == "":
			return "", validation("One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty string value. Key: %s", n)
		case n == t.hash && len(v.str()) > MaxPartitionKeyBytes:
			return "", validation("One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of %d bytes", MaxPartitionKeyBytes)
		case n == t.rng && len(v.str()) > MaxSortKeyBytes:
			return "", validation("One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of %d bytes", MaxSortKeyBytes)
		}
		parts = append(parts, strconv.Quote(v.str()))
	}
	return strings.Join(parts, "/"), nil
}

func (t *table) check(key string, cond node, req request) *apiError {
	if cond == nil {
		return nil
	}
	old := t.items[key]
	if cond.eval(old, req.ExpressionAttributeNames, req.ExpressionAttributeValues) {
		return nil
	}
	e := &apiError{status: http.StatusBadRequest, code: "ConditionalCheckFailedException", msg: "The conditional request failed"}
	if req.ReturnValuesOnConditionCheckFailure == "ALL_OLD" && old != nil {
		e.item = old
	}
	return e
}

func (t *table) put(req request, cond node) (any, *apiError) {
	key, aerr := t.keyOf(req.Item, false)
	if aerr != nil {
		return nil, aerr
	}
	if n := itemSize(req.Item); n > MaxItemBytes {
		return nil, validation("Item size has exceeded the maximum allowed size")
	}
	if aerr := t.check(key, cond, req); aerr != nil {
		return nil, aerr
	}
	old := t.items[key]
	t.items[key] = req.Item
	if req.ReturnValues == "ALL_OLD" && old != nil {
		return map[string]any{"Attributes": old}, nil
	}
	return map[string]any{}, nil
}

func (t *table) get(req request) (any, *apiError) {
	key, aerr := t.keyOf(req.Key, true)
	if aerr != nil {
		return nil, aerr
	}
	if it, ok := t.items[key]; ok {
		return map[string]any{"Item": it}, nil
	}
	return map[string]any{}, nil
}

// scan answers a Scan of the table without projection: items in key
// order, at most Limit (1 to ScanPageItems, else ValidationException) or
// ScanPageItems evaluated per page, with LastEvaluatedKey while more
// remain, then FilterExpression applied to them (Count is what is left,
// ScannedCount what was evaluated); a condition expression is rejected as
// DynamoDB's Scan has none, an IndexName as this fake scans tables only.
func (t *table) scan(req request, filter node) (any, *apiError) {
	if req.ConditionExpression != nil {
		return nil, validation("ConditionExpression is not a Scan parameter")
	}
	if req.IndexName != nil {
		return nil, &apiError{status: http.StatusBadRequest, code: "UnknownOperationException", msg: "dynamotest does not scan an index"}
	}
	limit := ScanPageItems
	if req.Limit != nil {
		if *req.Limit < 1 {
			return nil, validation("1 validation error detected: Value '%d' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1", *req.Limit)
		}
		limit = min(*req.Limit, ScanPageItems)
	}
	after := ""
	if req.ExclusiveStartKey != nil {
		k, aerr := t.keyOf(req.ExclusiveStartKey, true)
		if aerr != nil {
			return nil, validation("The provided starting key is invalid: %s", aerr.msg)
		}
		after = k
	}
	keys := make([]string, 0, len(t.items))
	for k := range t.items {
		if k > after {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	out := map[string]any{}
	items := []map[string]value{}
	for i, k := range keys {
		if i == limit {
			last := map[string]value{t.hash: items[i-1][t.hash]}
			if t.rng != "" {
				last[t.rng] = items[i-1][t.rng]
			}
			out["LastEvaluatedKey"] = last
			break
		}
		items = append(items, t.items[k])
	}
	kept := keep(items, filter, req)
	out["Items"], out["Count"], out["ScannedCount"] = kept, len(kept), len(items)
	return out, nil
}

func (t *table) delete(req request, cond node) (any, *apiError) {
	key, aerr := t.keyOf(req.Key, true)
	if aerr != nil {
		return nil, aerr
	}
	if aerr := t.check(key, cond, req); aerr != nil {
		return nil, aerr
	}
	old := t.items[key]
	delete(t.items, key)
	if req.ReturnValues == "ALL_OLD" && old != nil {
		return map[string]any{"Attributes": old}, nil
	}
	return map[string]any{}, nil
}

// value is an attribute value on the wire: one member named for its type.
type value map[string]json.RawMessage

var kinds = []string{"S", "N", "B", "BOOL", "NULL", "M", "L", "SS", "NS", "BS"}

func (v value) kind() string {
	for k := range v {
		return k
	}
	return ""
}

// str is the value of an S, N or B member.
func (v value) str() string {
	var s string
	_ = json.Unmarshal(v[v.kind()], &s)
	return s
}

func (v value) valid() error {
	if len(v) != 1 || !slices.Contains(kinds, v.kind()) {
		return fmt.Errorf("Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes")
	}
	if v.kind() == "N" {
		if _, err := strconv.ParseFloat(v.str(), 64); err != nil {
			return fmt.Errorf("A value provided cannot be converted into a number")
		}
	}
	return nil
}

// itemSize is an item's size as DynamoDB counts it against MaxItemBytes
// (Developer Guide, "Item sizes and formats"): each name's UTF-8 length
// plus its value's size.
func itemSize(item map[string]value) int {
	n := 0
	for name, v := range item {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v value) int {
	raw := v[v.kind()]
	switch v.kind() {
	case "S":
		return len(v.str())
	case "N":
		return numberSize(v.str())
	case "B":
		var b []byte
		_ = json.Unmarshal(raw, &b)
		return len(b)
	case "BOOL", "NULL":
		return 1
	case "M":
		var m map[string]value
		_ = json.Unmarshal(raw, &m)
		return 3 + itemSize(m) + len(m)
	case "L":
		var l []value
		_ = json.Unmarshal(raw, &l)
		n := 3 + len(l)
		for _, e := range l {
			n += valueSize(e)
		}
		return n
	case "BS":
		var l [][]byte
		_ = json.Unmarshal(raw, &l)
		n := 0
		for _, e := range l {
			n += len(e)
		}
		return n
	default: // SS, NS: each element as its type counts
		var l []string
		_ = json.Unmarshal(raw, &l)
		n := 0
		for _, e := range l {
			if v.kind() == "NS" {
				n += numberSize(e)
			} else {
				n += len(e)
			}
		}
		return n
	}
}

// numberSize is a number's size: up to 38 significant digits, about one
// byte per two digits, plus one.
func numberSize(s string) int {
	return len(strings.TrimLeft(strings.TrimPrefix(s, "-"), "0"))/2 + 1
}
