package webhook_test

import (
	"crypto/rand"
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/webhook"
)

func secretOf(n int) string {
	return "whsec_" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat("k", n)))
}

func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()

	c := webhook.Config{Secret: testSecret}.WithDefaults()
	require.Equal(t, 15*time.Second, c.Timeout)
	require.EqualValues(t, 64<<10, c.MaxResponseBytes)
	require.Equal(t, "herald/1", c.UserAgent)
	require.Equal(t, 100, c.MaxInFlightPerDestination)
	require.NotNil(t, c.Now)
	require.NoError(t, c.Validate())

	set := webhook.Config{Secret: testSecret, Timeout: time.Second, MaxResponseBytes: 10, UserAgent: "x"}.WithDefaults()
	require.Equal(t, time.Second, set.Timeout)
	require.EqualValues(t, 10, set.MaxResponseBytes)
	require.Equal(t, "x", set.UserAgent)
}

func TestNewSenderValidation(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name    string
		cfg     webhook.Config
		wantErr []string // empty: valid
	}{
		{name: "minimal", cfg: webhook.Config{Secret: testSecret}},
		{name: "64-byte key", cfg: webhook.Config{Secret: secretOf(64)}},
		{name: "bounds", cfg: webhook.Config{Secret: testSecret, Timeout: 15 * time.Minute, MaxResponseBytes: 16 << 20}},
		{name: "no secret", cfg: webhook.Config{}, wantErr: []string{"webhook secret: required"}},
		{name: "no prefix", cfg: webhook.Config{Secret: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}, wantErr: []string{"webhook secret: must start with whsec_"}},
		{name: "short key", cfg: webhook.Config{Secret: secretOf(16)}, wantErr: []string{"webhook secret: key is 16 bytes, want 24–64"}},
		{name: "long key", cfg: webhook.Config{Secret: secretOf(65)}, wantErr: []string{"webhook secret: key is 65 bytes, want 24–64"}},
		{name: "negative timeout", cfg: webhook.Config{Secret: testSecret, Timeout: -time.Second}, wantErr: []string{"webhook timeout: -1s, want 1ms–15m0s"}},
		{name: "long timeout", cfg: webhook.Config{Secret: testSecret, Timeout: time.Hour}, wantErr: []string{"webhook timeout: 1h0m0s"}},
		{name: "negative max response", cfg: webhook.Config{Secret: testSecret, MaxResponseBytes: -1}, wantErr: []string{"webhook max response bytes: -1, want 1–16777216"}},
		{name: "huge max response", cfg: webhook.Config{Secret: testSecret, MaxResponseBytes: 1 << 30}, wantErr: []string{"webhook max response bytes: 1073741824"}},
		{name: "in flight bounds", cfg: webhook.Config{Secret: testSecret, MaxInFlightPerDestination: 1000}},
		{name: "negative in flight", cfg: webhook.Config{Secret: testSecret, MaxInFlightPerDestination: -1}, wantErr: []string{"webhook max in flight per destination: -1, want 1–1000"}},
		{name: "huge in flight", cfg: webhook.Config{Secret: testSecret, MaxInFlightPerDestination: 1001}, wantErr: []string{"webhook max in flight per destination: 1001, want 1–1000"}},
		{name: "user agent", cfg: webhook.Config{Secret: testSecret, UserAgent: "a\r\nb"}, wantErr: []string{"webhook user agent"}},
		{
			name:    "all at once",
			cfg:     webhook.Config{Secret: "nope", Timeout: -1, MaxResponseBytes: -1},
			wantErr: []string{"webhook secret", "webhook timeout", "webhook max response bytes"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			s, err := webhook.NewSender(tt.cfg)
			if len(tt.wantErr) == 0 {
				require.NoError(t, err)
				require.NotNil(t, s)
				return
			}
			require.Nil(t, s)
			for _, want := range tt.wantErr {
				require.ErrorContains(t, err, want)
			}
			if tt.cfg.Secret != "" {
				require.NotContains(t, err.Error(), strings.TrimPrefix(tt.cfg.Secret, "whsec_"))
			}
		})
	}
}

func TestNewSenderRandomSecret(t *testing.T) {
	t.Parallel()

	_, err := webhook.NewSender(webhook.Config{Secret: "whsec_" + base64.StdEncoding.EncodeToString([]byte(rand.Text()))})
	require.NoError(t, err)
}

func TestNewSenderSecretsValidation(t *testing.T) {
	t.Parallel()

	second := secretOf(32)
	tests := []struct {
		name    string
		cfg     webhook.Config
		wantErr []string // empty: valid
	}{
		{name: "secrets only", cfg: webhook.Config{Secrets: []string{testSecret, second}}},
		{name: "secret and secrets", cfg: webhook.Config{Secret: testSecret, Secrets: []string{second}}},
		{name: "empty list", cfg: webhook.Config{Secrets: []string{}}, wantErr: []string{"webhook secret: required"}},
		{name: "repeat", cfg: webhook.Config{Secret: testSecret, Secrets: []string{second, testSecret}}, wantErr: []string{"secret 3 of 3: webhook secret: repeats secret 1"}},
		{name: "bad second", cfg: webhook.Config{Secrets: []string{testSecret, "whsec_" + "bm9wZQ"}}, wantErr: []string{"secret 2 of 2: webhook secret: not standard base64"}},
		{name: "short second", cfg: webhook.Config{Secrets: []string{testSecret, secretOf(16)}}, wantErr: []string{"secret 2 of 2: webhook secret: key is 16 bytes"}},
		{name: "exactly MaxSecrets", cfg: webhook.Config{Secret: secretOf(24), Secrets: []string{secretOf(25), secretOf(26), secretOf(27), secretOf(28)}}},
		{name: "too many", cfg: webhook.Config{Secrets: []string{secretOf(24), secretOf(25), secretOf(26), secretOf(27), secretOf(28), secretOf(29)}}, wantErr: []string{"webhook secrets: 6, want at most 5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()

			s, err := webhook.NewSender(tt.cfg)
			if len(tt.wantErr) == 0 {
				require.NoError(t, err)
				require.NotNil(t, s)
				return
			}
			require.Nil(t, s)
			for _, want := range tt.wantErr {
				require.ErrorContains(t, err, want)
			}
			for _, secret := range append([]string{tt.cfg.Secret}, tt.cfg.Secrets...) {
				if rest := strings.TrimPrefix(secret, "whsec_"); rest != "" {
					require.NotContains(t, err.Error(), rest)
				}
			}
		})
	}
}

func TestSplitSecrets(t *testing.T) {
	t.Parallel()

	require.Empty(t, webhook.SplitSecrets(""))
	require.Empty(t, webhook.SplitSecrets(" \n\t "))
	require.Equal(t, []string{"whsec_a"}, webhook.SplitSecrets("whsec_a"))
	require.Equal(t, []string{"whsec_a", "whsec_b", "whsec_c"}, webhook.SplitSecrets(" whsec_a whsec_b\n\twhsec_c\r\n"))
}
