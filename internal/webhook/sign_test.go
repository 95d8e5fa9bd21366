package webhook_test

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/webhook"
)

// vector is one entry of testdata/webhook/vectors.json.
type vector struct {
	Name      string `json:"name"`
	Secret    string `json:"secret"`
	MsgID     string `json:"msg_id"`
	Timestamp int64  `json:"timestamp"`
	EventType string `json:"event_type"`
	Payload   string `json:"payload"`
	Body      string `json:"body"`
	Signature string `json:"signature"`
}

func loadVectors(t *testing.T) []vector {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/webhook/vectors.json")
	require.NoError(t, err)
	var file struct {
		Vectors []vector `json:"vectors"`
	}
	require.NoError(t, json.Unmarshal(raw, &file))
	require.Len(t, file.Vectors, 2)
	return file.Vectors
}

func TestSignVectors(t *testing.T) {
	t.Parallel()

	for _, v := range loadVectors(t) {
		t.Run(v.Name, func(t *testing.T) {
			t.Parallel()

			key, err := webhook.DecodeSecret(v.Secret)
			require.NoError(t, err)
			got := webhook.Sign(key, v.MsgID, time.Unix(v.Timestamp, 0), []byte(v.Body))
			require.Equal(t, v.Signature, got)
		})
	}
}

// TestSignSpecVector pins the Standard Webhooks reference vector in code too,
// so that an edit of the vectors file cannot hide a regression.
func TestSignSpecVector(t *testing.T) {
	t.Parallel()

	key, err := webhook.DecodeSecret("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	require.NoError(t, err)
	got := webhook.Sign(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	require.Equal(t, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", got)

	// Only the whole second counts, in any zone.
	at := time.Unix(1614265330, 999_999_999).In(time.FixedZone("X", -7*3600))
	require.Equal(t, got, webhook.Sign(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", at, []byte(`{"test": 2432232314}`)))
}

func TestDecodeSecret(t *testing.T) {
	t.Parallel()

	key := []byte("0123456789abcdef01234567")
	tests := []struct {
		name    string
		secret  string
		want    []byte
		wantErr string
	}{
		{name: "valid", secret: "whsec_" + base64.StdEncoding.EncodeToString(key), want: key},
		{name: "empty", secret: "", wantErr: "webhook secret: required"},
		{name: "no prefix", secret: base64.StdEncoding.EncodeToString(key), wantErr: "webhook secret: must start with whsec_"},
		{name: "wrong prefix", secret: "whsk_" + base64.StdEncoding.EncodeToString(key), wantErr: "must start with whsec_"},
		{name: "not base64", secret: "whsec_not*base64!", wantErr: "not standard base64 after whsec_ (at byte 9)"},
		{name: "URL alphabet", secret: "whsec_" + base64.URLEncoding.EncodeToString([]byte{0xfb, 0xff, 0xfe}), wantErr: "not standard base64"},
		{name: "unpadded", secret: "whsec_" + base64.RawStdEncoding.EncodeToString([]byte("ab")), wantErr: "not standard base64"},
		{name: "empty key", secret: "whsec_", wantErr: "webhook secret: empty key"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			got, err := webhook.DecodeSecret(tt.secret)
			if tt.wantErr != "" {
				require.ErrorContains(t, err, tt.wantErr)
				if rest := strings.TrimPrefix(tt.secret, "whsec_"); rest != "" {
					require.NotContains(t, err.Error(), rest)
				}
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}
