package kmstest_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/testkit/kmstest"
)

func code(t *testing.T, err error) string {
	t.Helper()
	var ae smithy.APIError
	require.ErrorAs(t, err, &ae)
	return ae.ErrorCode()
}

// TestDataKeyOpensWithItsContextOnly (Developer Guide, "Encryption
// context": "the same encryption context is required to decrypt").
func TestDataKeyOpensWithItsContextOnly(t *testing.T) {
	t.Parallel()
	srv := kmstest.New(t)
	arn := srv.CreateKey("alias/app")
	other := srv.CreateKey("")
	c := srv.Client()
	ctx := context.Background()
	ec := map[string]string{"herald:endpoint": "ep_1", "b": "2"}
	for _, id := range []string{"alias/app", arn, arn[len(arn)-36:], "arn:aws:kms:us-east-1:000000000000:alias/app"} {
		out, err := c.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{KeyId: aws.String(id), KeySpec: types.DataKeySpecAes256, EncryptionContext: ec})
		require.NoError(t, err, id)
		require.Len(t, out.Plaintext, 32)
		require.Equal(t, arn, aws.ToString(out.KeyId))
		dec, err := c.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: out.CiphertextBlob, EncryptionContext: map[string]string{"b": "2", "herald:endpoint": "ep_1"}})
		require.NoError(t, err)
		require.Equal(t, out.Plaintext, dec.Plaintext)
	}
	out, err := c.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{KeyId: aws.String(arn), NumberOfBytes: aws.Int32(16), EncryptionContext: ec})
	require.NoError(t, err)
	require.Len(t, out.Plaintext, 16)
	for name, in := range map[string]*kms.DecryptInput{
		"another value":   {EncryptionContext: map[string]string{"herald:endpoint": "ep_2", "b": "2"}},
		"no context":      {},
		"a missing pair":  {EncryptionContext: map[string]string{"herald:endpoint": "ep_1"}},
		"an extra pair":   {EncryptionContext: map[string]string{"herald:endpoint": "ep_1", "b": "2", "c": "3"}},
		"a key's case":    {EncryptionContext: map[string]string{"Herald:endpoint": "ep_1", "b": "2"}},
		"swapped k and v": {EncryptionContext: map[string]string{"ep_1": "herald:endpoint", "b": "2"}},
	} {
		in.CiphertextBlob = out.CiphertextBlob
		_, err := c.Decrypt(ctx, in)
		require.Equal(t, "InvalidCiphertextException", code(t, err), name)
	}
	tampered := append([]byte(nil), out.CiphertextBlob...)
	tampered[len(tampered)-1] ^= 1
	_, err = c.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: tampered, EncryptionContext: ec})
	require.Equal(t, "InvalidCiphertextException", code(t, err))
	_, err = c.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: []byte("not ours"), EncryptionContext: ec})
	require.Equal(t, "InvalidCiphertextException", code(t, err))
	_, err = c.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: out.CiphertextBlob, EncryptionContext: ec, KeyId: aws.String(other)})
	require.Equal(t, "IncorrectKeyException", code(t, err))
	_, err = c.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: out.CiphertextBlob, EncryptionContext: ec, KeyId: aws.String("alias/app")})
	require.NoError(t, err, "the right KeyId")
}

// TestRejectsWhatKMSRejects (API Reference, GenerateDataKey, Decrypt).
func TestRejectsWhatKMSRejects(t *testing.T) {
	t.Parallel()
	srv := kmstest.New(t)
	arn := srv.CreateKey("")
	c := srv.Client()
	ctx := context.Background()
	for name, in := range map[string]*kms.GenerateDataKeyInput{
		"both spec and bytes": {KeyId: aws.String(arn), KeySpec: types.DataKeySpecAes256, NumberOfBytes: aws.Int32(32)},
		"neither":             {KeyId: aws.String(arn)},
		"0 bytes":             {KeyId: aws.String(arn), NumberOfBytes: aws.Int32(0)},
		"1025 bytes":          {KeyId: aws.String(arn), NumberOfBytes: aws.Int32(kmstest.MaxDataKeyBytes + 1)},
		"another spec":        {KeyId: aws.String(arn), KeySpec: "AES_512"},
	} {
		_, err := c.GenerateDataKey(ctx, in)
		require.Equal(t, "ValidationException", code(t, err), name)
	}
	_, err := c.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{KeyId: aws.String("alias/none"), KeySpec: types.DataKeySpecAes256})
	require.Equal(t, "NotFoundException", code(t, err))
	_, err = c.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: make([]byte, kmstest.MaxCiphertextBytes+1)})
	require.Equal(t, "ValidationException", code(t, err))

	out, err := c.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{KeyId: aws.String(arn), KeySpec: types.DataKeySpecAes256})
	require.NoError(t, err)
	srv.Disable(arn)
	_, err = c.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: out.CiphertextBlob})
	require.Equal(t, "DisabledException", code(t, err))
	_, err = c.GenerateDataKey(ctx, &kms.GenerateDataKeyInput{KeyId: aws.String(arn), KeySpec: types.DataKeySpecAes256})
	require.Equal(t, "DisabledException", code(t, err))

	srv.Fail("Decrypt", 1)
	_, err = c.Decrypt(ctx, &kms.DecryptInput{CiphertextBlob: out.CiphertextBlob})
	require.Equal(t, "KMSInternalException", code(t, err))
	require.Equal(t, 3, srv.Calls("Decrypt"))
}
