package notification_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/notification"
)

// TestMessageSizeArithmetic pins the sizes of docs/delivery.md ("Message
// size"): a message herald accepts leaves room for its dead letter's reason
// within SQS's 1 MiB, and one body field fits in a message.
func TestMessageSizeArithmetic(t *testing.T) {
	t.Parallel()
	require.Equal(t, 1_048_576, notification.SQSMaxMessageBytes)
	require.Equal(t, notification.SQSMaxMessageBytes, notification.MaxMessageBytes+notification.DeadLetterReserveBytes)
	require.Equal(t, 1_032_192, notification.MaxMessageBytes)
	require.Less(t, notification.MaxBodyBytes, notification.MaxMessageBytes)
}

// TestSchemaBodyLimitsAreGos: the JSON Schema's text and html maxLength is
// MaxBodyBytes.
func TestSchemaBodyLimitsAreGos(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("notification.v1.schema.json")
	require.NoError(t, err)
	var schema struct {
		Defs struct {
			Email struct {
				Properties map[string]struct {
					MaxLength int `json:"maxLength"`
				} `json:"properties"`
			} `json:"email"`
		} `json:"$defs"`
	}
	require.NoError(t, json.Unmarshal(raw, &schema))
	for _, field := range []string{"text", "html"} {
		require.Equal(t, notification.MaxBodyBytes, schema.Defs.Email.Properties[field].MaxLength, field)
	}
}
