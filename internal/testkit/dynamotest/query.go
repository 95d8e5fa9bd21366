package dynamotest

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
)

// MaxBatchGetKeys is the most keys one BatchGetItem may ask for (Amazon
// DynamoDB API Reference, BatchGetItem: "up to 100 items").
const MaxBatchGetKeys = 100

// index is a global secondary index: string key attributes hash and rng,
// and the attributes it projects besides the table's and its own keys
// (nil: every attribute, ProjectionType ALL).
type index struct {
	hash, rng string
	include   []string
}

// AddIndex adds to table tableName a global secondary index name keyed by
// the string attributes hash and rng (rng required here), projecting the
// keys and include (ProjectionType INCLUDE; an empty include is
// KEYS_ONLY, nil is ALL). Like DynamoDB's, the index is sparse: an item
// without both attributes is not in it.
func (s *Server) AddIndex(tableName, name, hash, rng string, include []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tables[tableName].indexes[name] = &index{hash: hash, rng: rng, include: include}
}

// LeaveUnprocessed makes the next BatchGetItem call answer the last n of
// its keys as UnprocessedKeys instead of reading them, as DynamoDB does
// when a call exceeds its response size or the table's throughput.
func (s *Server) LeaveUnprocessed(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.unprocessed = n
}

// exprs are a request's parsed expressions.
type exprs struct {
	condition, filter, keyCondition node
}

// expressions parses the request's condition, filter and key condition
// expressions and checks their expression attribute names and values as
// DynamoDB does: each used one defined, each defined one used by one of
// them, none given without an expression.
func expressions(action string, req request) (exprs, *apiError) {
	var out exprs
	given := []struct {
		expr *string
		to   *node
	}{{req.ConditionExpression, &out.condition}, {req.FilterExpression, &out.filter}, {req.KeyConditionExpression, &out.keyCondition}}
	usedNames, usedVals := map[string]bool{}, map[string]bool{}
	any := false
	for _, g := range given {
		if g.expr == nil {
			continue
		}
		any = true
		n, p, err := parseCondition(*g.expr)
		if err != nil {
			return exprs{}, validation("%v", err)
		}
		*g.to = n
		for k := range p.usedNames {
			usedNames[k] = true
		}
		for k := range p.usedVals {
			usedVals[k] = true
		}
	}
	if !any {
		if req.ExpressionAttributeNames != nil {
			return exprs{}, validation("ExpressionAttributeNames can only be specified when using expressions")
		}
		if req.ExpressionAttributeValues != nil {
			return exprs{}, validation("ExpressionAttributeValues can only be specified when using expressions")
		}
		return out, nil
	}
	for name := range usedNames {
		if _, ok := req.ExpressionAttributeNames[name]; !ok {
			return exprs{}, validation("Value provided in ExpressionAttributeNames unused in expressions: An expression attribute name used in the document path is not defined; attribute name: %s", name)
		}
	}
	for v := range usedVals {
		if _, ok := req.ExpressionAttributeValues[v]; !ok {
			return exprs{}, validation("Invalid %s: An expression attribute value used in expression is not defined; attribute value: %s", action, v)
		}
	}
	if unused := unusedKeys(req.ExpressionAttributeNames, usedNames); unused != "" {
		return exprs{}, validation("Value provided in ExpressionAttributeNames unused in expressions: keys: {%s}", unused)
	}
	if unused := unusedKeys(req.ExpressionAttributeValues, usedVals); unused != "" {
		return exprs{}, validation("Value provided in ExpressionAttributeValues unused in expressions: keys: {%s}", unused)
	}
	return out, nil
}

// keep returns the items filter accepts (all when filter is nil).
func keep(items []map[string]value, filter node, req request) []map[string]value {
	if filter == nil {
		return items
	}
	kept := []map[string]value{}
	for _, it := range items {
		if filter.eval(it, req.ExpressionAttributeNames, req.ExpressionAttributeValues) {
			kept = append(kept, it)
		}
	}
	return kept
}

// attrName resolves an operand's attribute name ("" for a value).
func attrName(o operand, names map[string]string) string {
	if strings.HasPrefix(o.name, "#") {
		return names[o.name]
	}
	return o.name
}

// namesIn returns the attribute names n reads.
func namesIn(n node, names map[string]string) []string {
	var out []string
	add := func(os ...operand) {
		for _, o := range os {
			if a := attrName(o, names); a != "" {
				out = append(out, a)
			}
		}
	}
	var walk func(node)
	walk = func(n node) {
		switch n := n.(type) {
		case andNode:
			walk(n.l)
			walk(n.r)
		case orNode:
			walk(n.l)
			walk(n.r)
		case notNode:
			walk(n.n)
		case compNode:
			add(n.l, n.r)
		case betweenNode:
			add(n.v, n.lo, n.hi)
		case inNode:
			add(n.v)
			add(n.list...)
		case funcNode:
			add(n.path, n.arg)
		}
	}
	walk(n)
	return out
}

// keyCondition splits a Query's key condition into the partition key's
// value and the sort key's condition (nil when none), as DynamoDB accepts
// it: "hash = :v", optionally AND one comparison (=, <, <=, >, >=),
// BETWEEN or begins_with of the sort key with values.
func keyCondition(n node, hash, rng string, req request) (value, node, *apiError) {
	names, vals := req.ExpressionAttributeNames, req.ExpressionAttributeValues
	bad := validation("Query key condition not supported")
	isHashEq := func(n node) (value, bool) {
		c, ok := n.(compNode)
		if !ok || c.op != "=" || attrName(c.l, names) != hash || c.r.value == "" {
			return nil, false
		}
		return vals[c.r.value], true
	}
	isRange := func(n node) bool {
		switch n := n.(type) {
		case compNode:
			return n.op != "<>" && attrName(n.l, names) == rng && n.r.value != ""
		case betweenNode:
			return attrName(n.v, names) == rng && n.lo.value != "" && n.hi.value != ""
		case funcNode:
			return n.name == "begins_with" && attrName(n.path, names) == rng && n.arg.value != ""
		}
		return false
	}
	if v, ok := isHashEq(n); ok {
		return v, nil, nil
	}
	a, ok := n.(andNode)
	if !ok {
		return nil, nil, bad
	}
	if v, ok := isHashEq(a.l); ok && isRange(a.r) {
		return v, a.r, nil
	}
	if v, ok := isHashEq(a.r); ok && isRange(a.l) {
		return v, a.l, nil
	}
	return nil, nil, bad
}

// query answers a Query of the table or of one of its indexes: the items
// whose partition key equals the key condition's value and whose sort key
// meets its condition, in sort key order (by bytes; for an index, ties in
// the table's key order), reversed when ScanIndexForward is false; from
// after ExclusiveStartKey, at most Limit or ScanPageItems evaluated, then
// FilterExpression applied. LastEvaluatedKey is returned when Limit was
// reached (even when no item is left, as DynamoDB does) or a page is full
// and more remain; for an index it holds the table's and the index's keys.
// It rejects, as DynamoDB does: no key condition, one on other attributes
// or of another shape, a filter on a key attribute of what is queried, a
// consistent read of a global secondary index, an unknown index, a Limit
// below 1, a starting key of other attributes or of another partition.
func (t *table) query(req request, ex exprs) (any, *apiError) {
	if req.ConditionExpression != nil {
		return nil, validation("ConditionExpression is not a Query parameter")
	}
	if ex.keyCondition == nil {
		return nil, validation("Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.")
	}
	hash, rng := t.hash, t.rng
	var idx *index
	if req.IndexName != nil {
		if idx = t.indexes[*req.IndexName]; idx == nil {
			return nil, validation("The table does not have the specified index: %s", *req.IndexName)
		}
		if req.ConsistentRead {
			return nil, validation("Consistent reads are not supported on global secondary indexes")
		}
		hash, rng = idx.hash, idx.rng
	}
	hv, rangeCond, aerr := keyCondition(ex.keyCondition, hash, rng, req)
	if aerr != nil {
		return nil, aerr
	}
	if hv == nil || hv.kind() != "S" {
		return nil, validation("One or more parameter values were invalid: Condition parameter type does not match schema type")
	}
	for _, a := range namesIn(ex.filter, req.ExpressionAttributeNames) {
		if a == hash || a == rng {
			return nil, validation("Filter Expression can only contain non-primary key attributes: Primary key attribute: %s", a)
		}
	}
	limit, explicit := ScanPageItems, false
	if req.Limit != nil {
		if *req.Limit < 1 {
			return nil, validation("1 validation error detected: Value '%d' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1", *req.Limit)
		}
		limit, explicit = min(*req.Limit, ScanPageItems), *req.Limit <= ScanPageItems
	}

	type row struct {
		sort, key string // sort key value, table storage key
		item      map[string]value
	}
	var rows []row
	for k, it := range t.items {
		h, okh := it[hash]
		r, okr := it[rng]
		if !okh || h.kind() != "S" || h.str() != hv.str() || rng != "" && (!okr || r.kind() != "S") {
			continue
		}
		if rangeCond != nil && !rangeCond.eval(it, req.ExpressionAttributeNames, req.ExpressionAttributeValues) {
			continue
		}
		sortVal := ""
		if rng != "" {
			sortVal = r.str()
		}
		rows = append(rows, row{sort: sortVal, key: k, item: it})
	}
	order := func(a, b row) int { return cmp.Or(strings.Compare(a.sort, b.sort), strings.Compare(a.key, b.key)) }
	slices.SortFunc(rows, order)
	if req.ScanIndexForward != nil && !*req.ScanIndexForward {
		slices.Reverse(rows)
	}

	if req.ExclusiveStartKey != nil {
		want := []string{t.hash}
		if t.rng != "" {
			want = append(want, t.rng)
		}
		if idx != nil {
			want = append(want, idx.hash, idx.rng)
		}
		start := req.ExclusiveStartKey
		for _, n := range want {
			if v, ok := start[n]; !ok || v.kind() != "S" {
				return nil, validation("The provided starting key is invalid: The provided key element does not match the schema")
			}
		}
		if len(start) != len(dedupe(want)) {
			return nil, validation("The provided starting key is invalid: The provided key element does not match the schema")
		}
		if start[hash].str() != hv.str() {
			return nil, validation("The provided starting key is outside query boundaries based on provided conditions")
		}
		key, aerr := t.keyOf(map[string]value{t.hash: start[t.hash], t.rng: start[t.rng]}, false)
		if t.rng == "" {
			key, aerr = t.keyOf(map[string]value{t.hash: start[t.hash]}, false)
		}
		if aerr != nil {
			return nil, validation("The provided starting key is invalid: %s", aerr.msg)
		}
		at := row{key: key}
		if rng != "" {
			at.sort = start[rng].str()
		}
		forward := req.ScanIndexForward == nil || *req.ScanIndexForward
		i := 0
		for i < len(rows) && (forward && order(rows[i], at) <= 0 || !forward && order(rows[i], at) >= 0) {
			i++
		}
		rows = rows[i:]
	}

	out := map[string]any{}
	n := min(limit, len(rows))
	items := make([]map[string]value, 0, n)
	for _, r := range rows[:n] {
		items = append(items, t.project(r.item, idx))
	}
	if n > 0 && (explicit && n == limit || n < len(rows)) {
		last := rows[n-1].item
		lek := map[string]value{t.hash: last[t.hash]}
		if t.rng != "" {
			lek[t.rng] = last[t.rng]
		}
		if idx != nil {
			lek[idx.hash], lek[idx.rng] = last[idx.hash], last[idx.rng]
		}
		out["LastEvaluatedKey"] = lek
	}
	kept := keep(items, ex.filter, req)
	out["Items"], out["Count"], out["ScannedCount"] = kept, len(kept), len(items)
	return out, nil
}

func dedupe(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return slices.Compact(s)
}

// project returns what the index holds of item: every attribute without
// an index or for ALL, else the table's and the index's keys and the
// included attributes.
func (t *table) project(item map[string]value, idx *index) map[string]value {
	if idx == nil || idx.include == nil {
		return item
	}
	out := map[string]value{}
	for _, a := range append([]string{t.hash, t.rng, idx.hash, idx.rng}, idx.include...) {
		if v, ok := item[a]; ok && a != "" {
			out[a] = v
		}
	}
	return out
}

// keysAndAttributes is one table's part of a BatchGetItem request.
type keysAndAttributes struct {
	Keys                     []map[string]value
	ConsistentRead           bool
	ProjectionExpression     *string
	ExpressionAttributeNames map[string]string
}

// batchGet answers a BatchGetItem: each table's items of the keys asked
// for (absent ones left out), in no particular order; the last keys left
// unprocessed when LeaveUnprocessed says so. It rejects, as DynamoDB
// does: no table, a table without keys, more than MaxBatchGetKeys keys in
// all, a key asked for twice, a key that does not match its table's
// schema, an unknown table (ResourceNotFoundException), a projection.
func (s *Server) batchGet(req request) (any, *apiError) {
	if len(req.RequestItems) == 0 {
		return nil, validation("1 validation error detected: Value null at 'requestItems' failed to satisfy constraint: Member must not be null")
	}
	total := 0
	for _, ka := range req.RequestItems {
		total += len(ka.Keys)
	}
	if total > MaxBatchGetKeys {
		return nil, validation("Too many items requested for the BatchGetItem call")
	}
	type want struct {
		table string
		key   map[string]value
	}
	var all []want
	for name, ka := range req.RequestItems {
		t := s.tables[name]
		if t == nil {
			return nil, &apiError{status: http.StatusBadRequest, code: "ResourceNotFoundException", msg: "Requested resource not found"}
		}
		if len(ka.Keys) == 0 {
			return nil, validation("1 validation error detected: Value '[]' at 'requestItems.%s.member.keys' failed to satisfy constraint: Member must have length greater than or equal to 1", name)
		}
		if ka.ProjectionExpression != nil || ka.ExpressionAttributeNames != nil {
			return nil, &apiError{status: http.StatusBadRequest, code: "UnknownOperationException", msg: "dynamotest does not answer ProjectionExpression"}
		}
		seen := map[string]bool{}
		for _, k := range ka.Keys {
			for n, v := range k {
				if err := v.valid(); err != nil {
					return nil, validation("One or more parameter values were invalid: %s: %v", n, err)
				}
			}
			sk, aerr := t.keyOf(k, true)
			if aerr != nil {
				return nil, aerr
			}
			if seen[sk] {
				return nil, validation("Provided list of item keys contains duplicates")
			}
			seen[sk] = true
			all = append(all, want{name, k})
		}
	}
	slices.SortStableFunc(all, func(a, b want) int { return strings.Compare(a.table, b.table) })
	leave := min(s.unprocessed, len(all))
	s.unprocessed = 0
	responses := map[string][]map[string]value{}
	unprocessed := map[string]map[string]any{}
	for i, w := range all {
		t := s.tables[w.table]
		if i >= len(all)-leave {
			u := unprocessed[w.table]
			if u == nil {
				u = map[string]any{"Keys": []map[string]value{}, "ConsistentRead": req.RequestItems[w.table].ConsistentRead}
				unprocessed[w.table] = u
			}
			u["Keys"] = append(u["Keys"].([]map[string]value), w.key)
			continue
		}
		sk, _ := t.keyOf(w.key, true)
		if it, ok := t.items[sk]; ok {
			responses[w.table] = append(responses[w.table], it)
		}
	}
	for name := range req.RequestItems {
		if responses[name] == nil {
			responses[name] = []map[string]value{}
		}
	}
	return map[string]any{"Responses": responses, "UnprocessedKeys": unprocessed}, nil
}
