// Package kmstest is an httptest server speaking AWS KMS's AWS JSON 1.1
// wire protocol (X-Amz-Target "TrentService.<Action>",
// application/x-amz-json-1.1) for GenerateDataKey and Decrypt with
// symmetric keys, for unit tests that need the real AWS SDK v2 client.
//
// Like KMS (AWS KMS API Reference, GenerateDataKey and Decrypt; Developer
// Guide, "Encryption context") it binds a ciphertext to its key and to its
// encryption context, which it authenticates as additional data: Decrypt
// with another context, none, or a ciphertext it did not make is
// InvalidCiphertextException; with a KeyId that is not the ciphertext's
// key, IncorrectKeyException. It rejects, as ValidationException, a
// GenerateDataKey with both or neither of KeySpec and NumberOfBytes, a
// KeySpec other than AES_256 and AES_128, NumberOfBytes outside 1–1024, an
// empty KeyId or ciphertext, a ciphertext over 6,144 bytes; a key it does
// not hold is NotFoundException, a disabled one DisabledException.
// Ciphertexts are this server's own format, not KMS's.
package kmstest

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/heraldhq/herald/internal/testkit/awstest"
)

// Limits of the API (AWS KMS API Reference).
const (
	MaxDataKeyBytes    = 1024 // GenerateDataKey NumberOfBytes
	MaxCiphertextBytes = 6144 // Decrypt CiphertextBlob
)

// AccountID is the account of every key's ARN.
const AccountID = "000000000000"

// magic starts every ciphertext this server makes.
const magic = "kmstest1"

type key struct {
	id       string
	arn      string
	material []byte
	disabled bool
}

// Server holds symmetric keys and their aliases.
type Server struct {
	srv *httptest.Server

	mu      sync.Mutex
	keys    []*key
	aliases map[string]*key
	calls   map[string]int
	fail    map[string]int
}

// New starts a server, closed when t ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{aliases: map[string]*key{}, calls: map[string]int{}, fail: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

// Client returns a real SDK client for the server, without SDK retries.
func (s *Server) Client() *kms.Client { return kms.NewFromConfig(awstest.Config(s.srv.URL)) }

// URL is the server's endpoint (AWS_ENDPOINT_URL_KMS).
func (s *Server) URL() string { return s.srv.URL }

// CreateKey makes a symmetric key and returns its ARN; alias, when not
// empty ("alias/name"), names it too.
func (s *Server) CreateKey(alias string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b [16]byte
	_, _ = rand.Read(b[:])
	id := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
	k := &key{id: id, arn: "arn:aws:kms:" + awstest.Region + ":" + AccountID + ":key/" + id, material: make([]byte, 32)}
	_, _ = rand.Read(k.material)
	s.keys = append(s.keys, k)
	if alias != "" {
		s.aliases[alias] = k
	}
	return k.arn
}

// Disable disables the key of ARN arn: GenerateDataKey and Decrypt with it
// answer DisabledException.
func (s *Server) Disable(arn string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range s.keys {
		if k.arn == arn {
			k.disabled = true
		}
	}
}

// Calls is the number of calls of action so far, rejected ones included.
func (s *Server) Calls(action string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[action]
}

// Fail makes the next n calls of action answer 500 KMSInternalException.
func (s *Server) Fail(action string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail[action] = n
}

type apiError struct {
	status    int
	code, msg string
}

func validation(format string, args ...any) *apiError {
	return &apiError{http.StatusBadRequest, "ValidationException", fmt.Sprintf(format, args...)}
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	action, ok := strings.CutPrefix(r.Header.Get("X-Amz-Target"), "TrentService.")
	body, _ := io.ReadAll(r.Body)
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	s.mu.Lock()
	s.calls[action]++
	var out any
	var aerr *apiError
	switch {
	case !ok || r.Header.Get("Content-Type") != "application/x-amz-json-1.1":
		aerr = &apiError{http.StatusBadRequest, "UnknownOperationException", "not a KMS JSON 1.1 request"}
	case s.fail[action] > 0:
		s.fail[action]--
		aerr = &apiError{http.StatusInternalServerError, "KMSInternalException", "injected"}
	case action == "GenerateDataKey":
		out, aerr = s.generateDataKey(body)
	case action == "Decrypt":
		out, aerr = s.decrypt(body)
	default:
		aerr = &apiError{http.StatusBadRequest, "UnknownOperationException", "kmstest does not answer " + action}
	}
	s.mu.Unlock()
	if aerr != nil {
		w.WriteHeader(aerr.status)
		_ = json.NewEncoder(w).Encode(map[string]string{"__type": aerr.code, "message": aerr.msg})
		return
	}
	_ = json.NewEncoder(w).Encode(out)
}

// find resolves a KeyId: a key id, a key ARN, an alias name or an alias
// ARN.
func (s *Server) find(id string) (*key, *apiError) {
	if id == "" {
		return nil, validation("1 validation error detected: Value at 'keyId' failed to satisfy constraint: Member must have length greater than or equal to 1")
	}
	if name, ok := strings.CutPrefix(id, "arn:aws:kms:"+awstest.Region+":"+AccountID+":"); ok && strings.HasPrefix(name, "alias/") {
		id = name
	}
	if k := s.aliases[id]; k != nil {
		return k, nil
	}
	for _, k := range s.keys {
		if k.id == id || k.arn == id {
			return k, nil
		}
	}
	return nil, &apiError{http.StatusBadRequest, "NotFoundException", "Key '" + id + "' does not exist"}
}

// aad is the additional authenticated data of an encryption context: its
// pairs in key order, so that the same context in any order matches.
func aad(ctx map[string]string) []byte {
	b, _ := json.Marshal(slices.Sorted(maps.Keys(ctx))) // strings always marshal
	v := make([]string, 0, len(ctx))
	for _, k := range slices.Sorted(maps.Keys(ctx)) {
		v = append(v, ctx[k])
	}
	bv, _ := json.Marshal(v)
	return append(b, bv...)
}

func (k *key) gcm() cipher.AEAD {
	block, _ := aes.NewCipher(k.material) // 32 bytes: never fails
	g, _ := cipher.NewGCM(block)
	return g
}

func (s *Server) generateDataKey(body []byte) (any, *apiError) {
	var req struct {
		KeyId             string
		KeySpec           *string
		NumberOfBytes     *int
		EncryptionContext map[string]string
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, &apiError{http.StatusBadRequest, "SerializationException", err.Error()}
	}
	k, aerr := s.find(req.KeyId)
	if aerr != nil {
		return nil, aerr
	}
	n := 0
	switch {
	case (req.KeySpec == nil) == (req.NumberOfBytes == nil):
		return nil, validation("Please specify either number of bytes or key spec.")
	case req.KeySpec != nil && *req.KeySpec == "AES_256":
		n = 32
	case req.KeySpec != nil && *req.KeySpec == "AES_128":
		n = 16
	case req.KeySpec != nil:
		return nil, validation("1 validation error detected: Value '%s' at 'keySpec' failed to satisfy constraint: Member must satisfy enum value set: [AES_256, AES_128]", *req.KeySpec)
	case *req.NumberOfBytes < 1 || *req.NumberOfBytes > MaxDataKeyBytes:
		return nil, validation("1 validation error detected: Value '%d' at 'numberOfBytes' failed to satisfy constraint: Member must have value between 1 and %d", *req.NumberOfBytes, MaxDataKeyBytes)
	default:
		n = *req.NumberOfBytes
	}
	if k.disabled {
		return nil, &apiError{http.StatusBadRequest, "DisabledException", k.arn + " is disabled."}
	}
	plain := make([]byte, n)
	_, _ = rand.Read(plain)
	return map[string]any{"KeyId": k.arn, "Plaintext": plain, "CiphertextBlob": s.seal(k, plain, req.EncryptionContext)}, nil
}

// seal is magic, the key's index (4 bytes), a nonce and AES-256-GCM of
// plain under the key's material with the context as additional data.
func (s *Server) seal(k *key, plain []byte, ctx map[string]string) []byte {
	out := []byte(magic)
	out = binary.BigEndian.AppendUint32(out, uint32(slices.Index(s.keys, k)))
	g := k.gcm()
	nonce := make([]byte, g.NonceSize())
	_, _ = rand.Read(nonce)
	out = append(out, nonce...)
	return g.Seal(out, nonce, plain, aad(ctx))
}

func (s *Server) decrypt(body []byte) (any, *apiError) {
	var req struct {
		CiphertextBlob    []byte
		KeyId             *string
		EncryptionContext map[string]string
	}
	if err := json.Unmarshal(body, &req); err != nil {
		return nil, &apiError{http.StatusBadRequest, "SerializationException", err.Error()}
	}
	switch {
	case len(req.CiphertextBlob) == 0:
		return nil, validation("1 validation error detected: Value at 'ciphertextBlob' failed to satisfy constraint: Member must have length greater than or equal to 1")
	case len(req.CiphertextBlob) > MaxCiphertextBytes:
		return nil, validation("1 validation error detected: Value at 'ciphertextBlob' failed to satisfy constraint: Member must have length less than or equal to %d", MaxCiphertextBytes)
	}
	invalid := &apiError{http.StatusBadRequest, "InvalidCiphertextException", ""}
	c := req.CiphertextBlob
	if len(c) < len(magic)+4 || string(c[:len(magic)]) != magic {
		return nil, invalid
	}
	i := int(binary.BigEndian.Uint32(c[len(magic):]))
	if i >= len(s.keys) {
		return nil, invalid
	}
	k := s.keys[i]
	if req.KeyId != nil {
		named, aerr := s.find(*req.KeyId)
		if aerr != nil {
			return nil, aerr
		}
		if named != k {
			return nil, &apiError{http.StatusBadRequest, "IncorrectKeyException", "The key ID in the request does not identify a KMS key that can perform this operation."}
		}
	}
	if k.disabled {
		return nil, &apiError{http.StatusBadRequest, "DisabledException", k.arn + " is disabled."}
	}
	g := k.gcm()
	rest := c[len(magic)+4:]
	if len(rest) < g.NonceSize() {
		return nil, invalid
	}
	plain, err := g.Open(nil, rest[:g.NonceSize()], rest[g.NonceSize():], aad(req.EncryptionContext))
	if err != nil {
		return nil, invalid
	}
	return map[string]any{"KeyId": k.arn, "Plaintext": plain, "EncryptionAlgorithm": "SYMMETRIC_DEFAULT"}, nil
}
