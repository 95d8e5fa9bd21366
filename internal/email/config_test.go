package email

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestConfigWithDefaults(t *testing.T) {
	t.Parallel()
	require.Equal(t, Config{SendingPausedDelay: time.Hour}, Config{}.WithDefaults())
	require.Equal(t, 5*time.Minute, Config{SendingPausedDelay: 5 * time.Minute}.WithDefaults().SendingPausedDelay)
}

func TestConfigValidate(t *testing.T) {
	t.Parallel()

	tests := []struct {
		name    string
		cfg     Config
		wantErr []string // each in the error; none for a valid config
	}{
		{name: "defaults", cfg: Config{}},
		{name: "all set", cfg: Config{DefaultFrom: "Müller <noreply@bücher.example>", ConfigurationSet: "tx_1-a", SendingPausedDelay: 12 * time.Hour}},
		{name: "DefaultFrom not a mailbox", cfg: Config{DefaultFrom: "nobody"}, wantErr: []string{"email config: DefaultFrom: not an RFC 5322 mailbox"}},
		{name: "DefaultFrom non-ASCII local part", cfg: Config{DefaultFrom: "jörg@example.com"}, wantErr: []string{"email config: DefaultFrom: the local part"}},
		{name: "ConfigurationSet", cfg: Config{ConfigurationSet: "has space"}, wantErr: []string{"email config: ConfigurationSet: must be 1–64 characters"}},
		{name: "negative delay", cfg: Config{SendingPausedDelay: -time.Second}, wantErr: []string{"email config: SendingPausedDelay: -1s is out of range (0, 12h0m0s]"}},
		{name: "delay above 12 h", cfg: Config{SendingPausedDelay: 13 * time.Hour}, wantErr: []string{"SendingPausedDelay: 13h0m0s is out of range"}},
		{
			name:    "every problem at once",
			cfg:     Config{DefaultFrom: "nobody", ConfigurationSet: "x.y", SendingPausedDelay: -1},
			wantErr: []string{"DefaultFrom", "ConfigurationSet", "SendingPausedDelay"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := tt.cfg.WithDefaults().Validate()
			if len(tt.wantErr) == 0 {
				require.NoError(t, err)
				return
			}
			for _, want := range tt.wantErr {
				require.ErrorContains(t, err, want)
			}
		})
	}
}

func TestNewSender(t *testing.T) {
	t.Parallel()

	_, err := NewSender(nil, Config{})
	require.ErrorContains(t, err, "nil SES API")

	_, err = NewSender(nopAPI{}, Config{DefaultFrom: "nobody"})
	require.ErrorContains(t, err, "DefaultFrom")

	s, err := NewSender(nopAPI{}, Config{DefaultFrom: "Jana <jana@bücher.example>"})
	require.NoError(t, err)
	require.Equal(t, `"Jana" <jana@xn--bcher-kva.example>`, s.defaultFrom)
	require.Equal(t, DefaultSendingPausedDelay, s.cfg.SendingPausedDelay)
}
