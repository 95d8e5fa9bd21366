package dynamotest

import (
	"fmt"
	"math/big"
	"strings"
)

// A condition expression's syntax tree (Amazon DynamoDB Developer Guide,
// "Comparison operator and function reference"). Only top-level attribute
// names are supported as paths: herald's items have no nested attributes.
type node interface {
	eval(item map[string]value, names map[string]string, values map[string]value) bool
}

type (
	andNode  struct{ l, r node }
	orNode   struct{ l, r node }
	notNode  struct{ n node }
	compNode struct {
		op   string
		l, r operand
	}
	betweenNode struct{ v, lo, hi operand }
	inNode      struct {
		v    operand
		list []operand
	}
	funcNode struct {
		name string
		path operand
		arg  operand // begins_with's prefix
	}
)

// operand is an attribute name (#name or a plain name) or a value (:value).
type operand struct {
	name  string // "#x" or a plain name
	value string // ":x"
}

func (o operand) resolve(item map[string]value, names map[string]string, values map[string]value) (value, bool) {
	if o.value != "" {
		v, ok := values[o.value]
		return v, ok
	}
	n := o.name
	if strings.HasPrefix(n, "#") {
		n = names[n]
	}
	v, ok := item[n]
	return v, ok
}

func (n andNode) eval(i map[string]value, ns map[string]string, vs map[string]value) bool {
	return n.l.eval(i, ns, vs) && n.r.eval(i, ns, vs)
}

func (n orNode) eval(i map[string]value, ns map[string]string, vs map[string]value) bool {
	return n.l.eval(i, ns, vs) || n.r.eval(i, ns, vs)
}

func (n notNode) eval(i map[string]value, ns map[string]string, vs map[string]value) bool {
	return !n.n.eval(i, ns, vs)
}

func (n compNode) eval(i map[string]value, ns map[string]string, vs map[string]value) bool {
	l, okl := n.l.resolve(i, ns, vs)
	r, okr := n.r.resolve(i, ns, vs)
	if !okl || !okr {
		return false
	}
	if n.op == "=" || n.op == "<>" {
		eq := l.equal(r)
		return eq == (n.op == "=")
	}
	c, ok := l.compare(r)
	if !ok {
		return false
	}
	switch n.op {
	case "<":
		return c < 0
	case "<=":
		return c <= 0
	case ">":
		return c > 0
	default: // ">="
		return c >= 0
	}
}

func (n betweenNode) eval(i map[string]value, ns map[string]string, vs map[string]value) bool {
	return compNode{">=", n.v, n.lo}.eval(i, ns, vs) && compNode{"<=", n.v, n.hi}.eval(i, ns, vs)
}

func (n inNode) eval(i map[string]value, ns map[string]string, vs map[string]value) bool {
	for _, o := range n.list {
		if (compNode{"=", n.v, o}).eval(i, ns, vs) {
			return true
		}
	}
	return false
}

func (n funcNode) eval(i map[string]value, ns map[string]string, vs map[string]value) bool {
	v, ok := n.path.resolve(i, ns, vs)
	switch n.name {
	case "attribute_exists":
		return ok
	case "attribute_not_exists":
		return !ok
	default: // begins_with
		p, okp := n.arg.resolve(i, ns, vs)
		if !ok || !okp || v.kind() != "S" || p.kind() != "S" {
			return false
		}
		return strings.HasPrefix(v.str(), p.str())
	}
}

// parser reads a condition expression and records every #name and :value
// it uses, so that undefined and unused ones are refused as DynamoDB
// refuses them.
type parser struct {
	toks      []string
	pos       int
	usedNames map[string]bool
	usedVals  map[string]bool
}

// parseCondition parses expr; the error is DynamoDB's ValidationException
// message.
func parseCondition(expr string) (node, *parser, error) {
	toks, err := tokenize(expr)
	if err != nil {
		return nil, nil, err
	}
	p := &parser{toks: toks, usedNames: map[string]bool{}, usedVals: map[string]bool{}}
	n, err := p.or()
	if err != nil {
		return nil, nil, err
	}
	if p.pos < len(p.toks) {
		return nil, nil, syntaxError(p.toks[p.pos])
	}
	return n, p, nil
}

func syntaxError(tok string) error {
	if tok == "" {
		tok = "<EOF>"
	}
	return fmt.Errorf("Invalid ConditionExpression: Syntax error; token: %q", tok)
}

func tokenize(s string) ([]string, error) {
	var out []string
	for i := 0; i < len(s); {
		c, at := s[i], i
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.ContainsRune("(),", rune(c)):
			out = append(out, string(c))
			i++
		case c == '<' || c == '>' || c == '=':
			j := i + 1
			if j < len(s) && (s[j] == '=' || (c == '<' && s[j] == '>')) {
				j++
			}
			out = append(out, s[i:j])
			i = j
		case c == '#' || c == ':' || isIdent(c):
			j := i + 1
			for j < len(s) && isIdent(s[j]) {
				j++
			}
			out = append(out, s[i:j])
			i = j
		default:
			return nil, fmt.Errorf("Invalid ConditionExpression: Syntax error; token: %q", string(c))
		}
		// Every clause consumes a byte at least. Should one not (a slip in
		// an edit, or a mutant), this is an error rather than a loop that
		// holds the server's lock for ever, so that httptest's Close, and
		// the test, would wait for ever too.
		if i <= at {
			return nil, fmt.Errorf("dynamotest: the tokenizer did not advance at byte %d of %q", at, s)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("Invalid ConditionExpression: The expression can not be empty;")
	}
	return out, nil
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func (p *parser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *parser) next() string {
	t := p.peek()
	p.pos++
	return t
}

func (p *parser) keyword(k string) bool {
	if strings.EqualFold(p.peek(), k) {
		p.pos++
		return true
	}
	return false
}

func (p *parser) expect(t string) error {
	if got := p.next(); got != t {
		return syntaxError(got)
	}
	return nil
}

func (p *parser) or() (node, error) {
	l, err := p.and()
	for err == nil && p.keyword("OR") {
		var r node
		if r, err = p.and(); err == nil {
			l = orNode{l, r}
		}
	}
	return l, err
}

func (p *parser) and() (node, error) {
	l, err := p.not()
	for err == nil && p.keyword("AND") {
		var r node
		if r, err = p.not(); err == nil {
			l = andNode{l, r}
		}
	}
	return l, err
}

func (p *parser) not() (node, error) {
	if p.keyword("NOT") {
		n, err := p.not()
		return notNode{n}, err
	}
	return p.primary()
}

func (p *parser) primary() (node, error) {
	if p.peek() == "(" {
		p.pos++
		n, err := p.or()
		if err != nil {
			return nil, err
		}
		return n, p.expect(")")
	}
	if p.pos+1 < len(p.toks) && p.toks[p.pos+1] == "(" && isIdent(p.peek()[0]) {
		return p.function()
	}
	l, err := p.operand()
	if err != nil {
		return nil, err
	}
	switch op := p.peek(); {
	case op == "=" || op == "<>" || op == "<" || op == "<=" || op == ">" || op == ">=":
		p.pos++
		r, err := p.operand()
		return compNode{op, l, r}, err
	case strings.EqualFold(op, "BETWEEN"):
		p.pos++
		lo, err := p.operand()
		if err != nil {
			return nil, err
		}
		if !p.keyword("AND") {
			return nil, syntaxError(p.peek())
		}
		hi, err := p.operand()
		return betweenNode{l, lo, hi}, err
	case strings.EqualFold(op, "IN"):
		p.pos++
		if err := p.expect("("); err != nil {
			return nil, err
		}
		n := inNode{v: l}
		for {
			o, err := p.operand()
			if err != nil {
				return nil, err
			}
			n.list = append(n.list, o)
			if p.peek() != "," {
				break
			}
			p.pos++
		}
		return n, p.expect(")")
	default:
		return nil, syntaxError(op)
	}
}

func (p *parser) function() (node, error) {
	name := p.next()
	p.pos++ // "("
	n := funcNode{name: name}
	switch name {
	case "attribute_exists", "attribute_not_exists", "begins_with":
	default:
		return nil, fmt.Errorf("Invalid ConditionExpression: Invalid function name; function: %s", name)
	}
	path, err := p.operand()
	if err != nil {
		return nil, err
	}
	if path.value != "" {
		return nil, fmt.Errorf("Invalid ConditionExpression: Operator or function requires a document path; operator or function: %s", name)
	}
	n.path = path
	if name == "begins_with" {
		if err := p.expect(","); err != nil {
			return nil, err
		}
		if n.arg, err = p.operand(); err != nil {
			return nil, err
		}
	}
	return n, p.expect(")")
}

func (p *parser) operand() (operand, error) {
	t := p.next()
	switch {
	case t == "":
		return operand{}, syntaxError(t)
	case strings.HasPrefix(t, ":"):
		p.usedVals[t] = true
		return operand{value: t}, nil
	case strings.HasPrefix(t, "#"):
		p.usedNames[t] = true
		return operand{name: t}, nil
	case !isIdent(t[0]):
		return operand{}, syntaxError(t)
	case reserved[strings.ToUpper(t)]:
		return operand{}, fmt.Errorf("Invalid ConditionExpression: Attribute name is a reserved keyword; reserved keyword: %s", t)
	}
	return operand{name: t}, nil
}

// compare orders two values of the same scalar type (N numerically, S and
// B by bytes); ok is false for other pairs, which DynamoDB's comparisons
// treat as false.
func (v value) compare(o value) (int, bool) {
	if v.kind() != o.kind() {
		return 0, false
	}
	switch v.kind() {
	case "N":
		a, _, err1 := big.ParseFloat(v.str(), 10, 200, big.ToNearestEven)
		b, _, err2 := big.ParseFloat(o.str(), 10, 200, big.ToNearestEven)
		if err1 != nil || err2 != nil {
			return 0, false
		}
		return a.Cmp(b), true
	case "S", "B":
		return strings.Compare(v.str(), o.str()), true
	}
	return 0, false
}

func (v value) equal(o value) bool {
	if c, ok := v.compare(o); ok {
		return c == 0
	}
	return v.kind() == o.kind() && string(v[v.kind()]) == string(o[o.kind()])
}
