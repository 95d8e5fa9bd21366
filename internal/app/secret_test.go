package app_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
)

const (
	secretA = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	secretB = "whsec_c2Vjb25kLXNpZ25pbmcta2V5LWZvci1yb3RhdGlvbg=="
	arn     = "arn:aws:secretsmanager:us-east-1:000000000000:secret:herald/webhook-signing-AbCdEf"
)

// secretsManager answers GetSecretValue (JSON 1.1 protocol) with status and
// body, and records the SecretId asked for.
func secretsManager(t *testing.T, status int, body string) (aws.Config, *[]string) {
	t.Helper()
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Amz-Target") != "secretsmanager.GetSecretValue" {
			http.Error(w, "unexpected call", http.StatusBadRequest)
			return
		}
		var in struct{ SecretId string }
		b, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(b, &in)
		asked = append(asked, in.SecretId)
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}))
	t.Cleanup(srv.Close)
	return aws.Config{
		Region:           "us-east-1",
		Credentials:      aws.AnonymousCredentials{},
		BaseEndpoint:     aws.String(srv.URL),
		RetryMaxAttempts: 1,
	}, &asked
}

func deliverConfig(secret, secretARN string) config.Deliver {
	return config.Deliver{
		QueueURL: "http://127.0.0.1:1/000000000000/q", DeadLetterQueueURL: "http://127.0.0.1:1/000000000000/dlq",
		MaxReceiveCount: 3, Concurrency: 1, WebhookSecret: secret, WebhookSecretARN: secretARN,
	}
}

func secretValue(t *testing.T, s string) string {
	t.Helper()
	b, err := json.Marshal(map[string]string{"ARN": arn, "Name": "herald/webhook-signing", "SecretString": s})
	require.NoError(t, err)
	return string(b)
}

func TestNewDeliverReadsSecretsManagerOnce(t *testing.T) {
	t.Parallel()
	awsCfg, asked := secretsManager(t, 200, secretValue(t, secretA+"\n"+secretB+"\n"))
	p, err := app.NewDeliverContext(t.Context(), deliverConfig("", arn), awsCfg, app.DeliverOptions{})
	require.NoError(t, err)
	require.NotNil(t, p)
	require.Equal(t, []string{arn}, *asked)
}

func TestNewDeliverPlainSecretNeedsNoSecretsManager(t *testing.T) {
	t.Parallel()
	awsCfg, asked := secretsManager(t, 500, "{}")
	_, err := app.NewDeliverContext(t.Context(), deliverConfig(secretA+" "+secretB, ""), awsCfg, app.DeliverOptions{})
	require.NoError(t, err)
	require.Empty(t, *asked)
}

func TestNewDeliverSecretErrorsNeverQuoteTheSecret(t *testing.T) {
	t.Parallel()
	const planted = "whsec_PLANTEDc2VjcmV0"
	tests := []struct {
		name    string
		status  int
		body    string
		wantErr string
		// wantAs, when set, is the SDK error type the chain must hold.
		wantAs any
	}{
		{name: "bad entry", status: 200, body: secretValue(t, secretA+" "+planted), wantErr: "webhook sender (secrets from HERALD_WEBHOOK_SECRET_ARN " + arn + "): secret 2 of 2: webhook secret"},
		{name: "short entry", status: 200, body: secretValue(t, "whsec_UExBTlRFRHNob3J0"), wantErr: "webhook secret: key is 12 bytes"},
		{name: "empty", status: 200, body: secretValue(t, " \n"), wantErr: "webhook signing secret: read HERALD_WEBHOOK_SECRET_ARN " + arn + ": the SecretString is empty"},
		{name: "binary", status: 200, body: `{"ARN":"` + arn + `","SecretBinary":"UExBTlRFRA=="}`, wantErr: "the secret has no SecretString"},
		{name: "not found", status: 400, body: `{"__type":"ResourceNotFoundException","message":"Secrets Manager can't find the specified secret."}`, wantErr: "read HERALD_WEBHOOK_SECRET_ARN " + arn + ": ", wantAs: new(*smtypes.ResourceNotFoundException)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			awsCfg, _ := secretsManager(t, tt.status, tt.body)
			_, err := app.NewDeliverContext(t.Context(), deliverConfig("", arn), awsCfg, app.DeliverOptions{})
			require.ErrorContains(t, err, tt.wantErr)
			if tt.wantAs != nil {
				require.ErrorAs(t, err, tt.wantAs)
			}
			require.NotContains(t, err.Error(), "PLANTED")
			require.NotContains(t, err.Error(), "UExBTlRFR")
			require.NotContains(t, err.Error(), secretA[len("whsec_"):])
		})
	}
}
