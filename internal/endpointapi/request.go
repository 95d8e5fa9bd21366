package endpointapi

import (
	"encoding/base64"
	"errors"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/heraldhq/herald/endpoints"
)

// MaxRequestBytes bounds a request body (65,536 bytes; more is 413). The
// largest valid endpoint is far smaller; API Gateway's own bound is 10 MB
// (https://docs.aws.amazon.com/apigateway/latest/developerguide/limits.html).
const MaxRequestBytes = 64 << 10

// header returns the value of header name (case-insensitive, as HTTP field
// names are, RFC 9110 §5.1) and whether it was sent.
func header(req *events.APIGatewayProxyRequest, name string) (string, bool) {
	for k, v := range req.Headers {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	for k, v := range req.MultiValueHeaders {
		if strings.EqualFold(k, name) && len(v) > 0 {
			return strings.Join(v, ", "), true
		}
	}
	return "", false
}

// rawBody returns the request's body bytes (API Gateway base64-encodes a
// body that is not UTF-8) after the size and media-type checks.
func rawBody(req *events.APIGatewayProxyRequest) ([]byte, *problem) {
	body := []byte(req.Body)
	if req.IsBase64Encoded {
		b, err := base64.StdEncoding.DecodeString(req.Body)
		if err != nil {
			return nil, newProblem(http.StatusBadRequest, endpoints.CodeInvalidJSON, "", "the body is not valid base64 as API Gateway sent it")
		}
		body = b
	}
	if len(body) > MaxRequestBytes {
		return nil, newProblem(http.StatusRequestEntityTooLarge, endpoints.CodeBodyTooLarge, "",
			"the body is %d bytes; at most %d", len(body), MaxRequestBytes)
	}
	if len(body) == 0 {
		return nil, nil
	}
	ct, _ := header(req, "Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" || (params["charset"] != "" && !strings.EqualFold(params["charset"], "utf-8")) {
		shown := ct
		if shown == "" {
			shown = "none"
		}
		return nil, newProblem(http.StatusUnsupportedMediaType, endpoints.CodeUnsupportedMediaType, "Content-Type",
			"Content-Type %.100q: the body must be application/json (UTF-8)", shown)
	}
	return body, nil
}

// decodeBody reads the body into dst: one JSON object whose members dst
// names, matched exactly (case-sensitive), none twice. required says
// whether a missing body is an error; a missing optional body leaves dst as
// it is.
func decodeBody(req *events.APIGatewayProxyRequest, dst any, required bool) *problem {
	body, p := rawBody(req)
	if p != nil {
		return p
	}
	if body == nil {
		if required {
			return newProblem(http.StatusBadRequest, endpoints.CodeInvalidJSON, "", "a JSON object body is required")
		}
		return nil
	}
	err := json.Unmarshal(body, dst, json.RejectUnknownMembers(true))
	if err == nil {
		return nil
	}
	var se *json.SemanticError
	if errors.As(err, &se) {
		field := fieldPath(se.JSONPointer, reflect.TypeOf(dst))
		switch {
		case errors.Is(se.Err, json.ErrUnknownName):
			return newProblem(http.StatusBadRequest, endpoints.CodeUnknownField, field, "unknown member %.60q: this operation does not take it", lastToken(se.JSONPointer))
		case field == "":
			return newProblem(http.StatusBadRequest, endpoints.CodeInvalidJSON, "", "the body must be a JSON object")
		case se.JSONKind == '0' && len(se.JSONValue) > 0 && len(se.JSONValue) <= 40:
			return invalid(field, "must be %s, not %s", typeName(se.GoType), se.JSONValue)
		case se.JSONKind != 0:
			return invalid(field, "must be %s, not a JSON %s", typeName(se.GoType), kindName(se.JSONKind))
		default:
			return invalid(field, "invalid value")
		}
	}
	var syn *jsontext.SyntacticError
	if errors.As(err, &syn) {
		return newProblem(http.StatusBadRequest, endpoints.CodeInvalidJSON, fieldPath(syn.JSONPointer, reflect.TypeOf(dst)), "not valid JSON at byte %d: %v", syn.ByteOffset, syn.Err)
	}
	return newProblem(http.StatusBadRequest, endpoints.CodeInvalidJSON, "", "not one JSON object")
}

// fieldPath writes a JSON pointer into a value of type t (the type
// decoded into) the way FieldError names fields: "/headers/X-A" as
// "headers.X-A", "/event_types/2" as "event_types[2]", "/headers/1" as
// "headers.1". A token is an index only under a slice or array of t; where
// t does not say (a member it does not have), a token of digits is taken
// for one.
func fieldPath(p jsontext.Pointer, t reflect.Type) string {
	var b strings.Builder
	for tok := range p.Tokens() {
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		_, err := strconv.Atoi(tok)
		switch {
		case b.Len() == 0:
			b.WriteString(tok)
		case t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array), t == nil && err == nil:
			b.WriteString("[" + tok + "]")
		default:
			b.WriteString("." + tok)
		}
		t = memberType(t, tok)
	}
	return b.String()
}

// memberType is the type of t's member tok (a struct field by its JSON
// name, an element of a slice, array or map), nil when t has none.
func memberType(t reflect.Type, tok string) reflect.Type {
	if t == nil {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		return t.Elem()
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" {
				name = f.Name
			}
			if name == tok {
				return f.Type
			}
		}
	}
	return nil
}

func lastToken(p jsontext.Pointer) string { return p.LastToken() }

func kindName(k jsontext.Kind) string {
	switch k {
	case 'n':
		return "null"
	case 't', 'f':
		return "boolean"
	case '"':
		return "string"
	case '0':
		return "number"
	case '{':
		return "object"
	case '[':
		return "array"
	}
	return "value"
}

// typeName says what Go type t holds, in JSON's words.
func typeName(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "another type"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Float64, reflect.Float32:
		return "a number"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Slice:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "another type"
}

// ifMatch reads If-Match: the version an update or delete names, as its
// ETag ("3", W/"3") or bare (3). ok is false when the header is absent.
func ifMatch(req *events.APIGatewayProxyRequest) (version int64, ok bool, p *problem) {
	v, ok := header(req, "If-Match")
	if !ok {
		return 0, false, nil
	}
	s := strings.TrimPrefix(strings.TrimSpace(v), "W/")
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		s = s[1 : len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 1 || s[0] == '+' || s[0] == '0' {
		return 0, true, invalid("If-Match", "%.40q is not an endpoint version: send the ETag you read (\"3\")", v)
	}
	return n, true, nil
}

// etag is the ETag of an endpoint version.
func etag(version int64) string { return `"` + strconv.FormatInt(version, 10) + `"` }
