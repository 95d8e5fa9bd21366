package endpoint

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
)

// ContextKey is the KMS encryption context key an endpoint's data key is
// bound to, with the endpoint's id as its value: {"herald:endpoint":
// "ep_…"}. A data key only decrypts with it, and the deliver function's
// kms:Decrypt permission requires it (template.yaml, condition
// kms:EncryptionContextKeys), so a sealed blob copied onto another
// endpoint's item does not open (AWS KMS Developer Guide, "Encryption
// context").
const ContextKey = "herald:endpoint"

// gcmNonceBytes is AES-GCM's standard nonce length (NIST SP 800-38D §8.2).
const gcmNonceBytes = 12

// sealedData is the plaintext of an endpoint's sealed attribute: what only
// the store and the deliver function may read.
type sealedData struct {
	Secrets []sealedSecret    `json:"secrets"`
	Headers map[string]string `json:"headers,omitempty"`
	// URL is a chat endpoint's URL (a credential); a webhook's is plain.
	URL string `json:"url,omitempty"`
}

type sealedSecret struct {
	Version   int    `json:"version"`
	Key       []byte `json:"key"`
	CreatedAt int64  `json:"created_at"`      // Unix ms
	Until     int64  `json:"until,omitempty"` // Unix ms; 0 for the current secret
}

func sealedOf(e Endpoint) sealedData {
	d := sealedData{Headers: e.Headers}
	if e.Kind != KindWebhook {
		d.URL = e.URL
	}
	for _, s := range e.Secrets {
		ss := sealedSecret{Version: s.Version, Key: s.Key, CreatedAt: s.CreatedAt.UnixMilli()}
		if !s.Until.IsZero() {
			ss.Until = s.Until.UnixMilli()
		}
		d.Secrets = append(d.Secrets, ss)
	}
	return d
}

func (d sealedData) apply(e *Endpoint) {
	e.Headers = d.Headers
	if e.Kind != KindWebhook {
		e.URL = d.URL
	}
	e.Secrets = nil
	for _, s := range d.Secrets {
		sec := Secret{Version: s.Version, Key: s.Key, CreatedAt: time.UnixMilli(s.CreatedAt).UTC()}
		if s.Until != 0 {
			sec.Until = time.UnixMilli(s.Until).UTC()
		}
		e.Secrets = append(e.Secrets, sec)
	}
}

// seal encrypts d for endpoint id: a new AES-256 data key from KMS
// (GenerateDataKey on the endpoint key, encryption context
// {ContextKey: id}), AES-256-GCM with a random nonce and id as additional
// data. It returns nonce‖ciphertext and the KMS-encrypted data key.
func (t *Table) seal(ctx context.Context, id string, d sealedData) (sealed, dataKey []byte, err error) {
	if t.cfg.KeyID == "" {
		return nil, nil, errors.New("endpoint table: KeyID is required to write secrets")
	}
	plain, err := json.Marshal(d)
	if err != nil {
		return nil, nil, fmt.Errorf("seal endpoint %s: %w", id, err)
	}
	defer clear(plain)
	out, err := t.cfg.KMS.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{
		KeyId:             aws.String(t.cfg.KeyID),
		KeySpec:           types.DataKeySpecAes256,
		EncryptionContext: map[string]string{ContextKey: id},
	})
	if err != nil {
		return nil, nil, fmt.Errorf("seal endpoint %s: generate a data key: %w", id, err)
	}
	defer clear(out.Plaintext)
	gcm, err := newGCM(out.Plaintext)
	if err != nil {
		return nil, nil, fmt.Errorf("seal endpoint %s: %w", id, err)
	}
	nonce := make([]byte, gcmNonceBytes, gcmNonceBytes+len(plain)+gcm.Overhead())
	_, _ = rand.Read(nonce) // crypto/rand.Read never fails (Go 1.24)
	return gcm.Seal(nonce, nonce, plain, []byte(id)), out.CiphertextBlob, nil
}

// unseal decrypts what seal made for endpoint id. Its errors never quote
// the plaintext.
func (t *Table) unseal(ctx context.Context, id string, sealed, dataKey []byte) (sealedData, error) {
	out, err := t.cfg.KMS.Decrypt(ctx, &kms.DecryptInput{
		CiphertextBlob:    dataKey,
		EncryptionContext: map[string]string{ContextKey: id},
	})
	if err != nil {
		return sealedData{}, fmt.Errorf("unseal endpoint %s: decrypt the data key: %w", id, err)
	}
	defer clear(out.Plaintext)
	gcm, err := newGCM(out.Plaintext)
	if err != nil {
		return sealedData{}, fmt.Errorf("unseal endpoint %s: %w", id, err)
	}
	if len(sealed) < gcmNonceBytes+gcm.Overhead() {
		return sealedData{}, fmt.Errorf("unseal endpoint %s: the sealed attribute is too short", id)
	}
	plain, err := gcm.Open(nil, sealed[:gcmNonceBytes], sealed[gcmNonceBytes:], []byte(id))
	if err != nil {
		return sealedData{}, fmt.Errorf("unseal endpoint %s: the sealed attribute does not authenticate (not this endpoint's)", id)
	}
	defer clear(plain)
	var d sealedData
	if json.Unmarshal(plain, &d) != nil {
		return sealedData{}, fmt.Errorf("unseal endpoint %s: the sealed attribute does not parse", id)
	}
	return d, nil
}

func newGCM(key []byte) (cipher.AEAD, error) {
	if len(key) != 32 {
		return nil, fmt.Errorf("the data key is %d bytes, not AES-256's 32", len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	return cipher.NewGCM(block)
}
