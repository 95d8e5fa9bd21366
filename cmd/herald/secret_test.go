package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/testkit/awstest"
	"github.com/heraldhq/herald/internal/testkit/dynamotest"
	"github.com/heraldhq/herald/internal/webhook"
	"github.com/heraldhq/herald/notification"
)

const (
	deploySecretOld = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	deploySecretNew = "whsec_c2Vjb25kLXNpZ25pbmcta2V5LWZvci1yb3RhdGlvbg=="
)

// heraldWith runs the command in-process with the environment vars.
func heraldWith(t *testing.T, vars map[string]string, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	e := &env{stdin: strings.NewReader(""), stdout: &out, stderr: &errOut, getenv: func(k string) string { return vars[k] }, now: time.Now}
	code := execute(context.Background(), e, args)
	return result{code, out.String(), errOut.String()}
}

// signedRequest is one webhook the real sender signed with secrets and
// posted to a TLS receiver; it returns the receiver's URL and the request.
func signedRequest(t *testing.T, secrets []string, path string) (string, []byte, http.Header) {
	t.Helper()
	type got struct {
		body   []byte
		header http.Header
	}
	ch := make(chan got, 1)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		ch <- got{b, r.Header.Clone()}
	}))
	t.Cleanup(srv.Close)
	s, err := webhook.NewSender(webhook.Config{
		Secrets: secrets, Timeout: 5 * time.Second, AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
		TLSClientConfig: srv.Client().Transport.(*http.Transport).TLSClientConfig,
	})
	require.NoError(t, err)
	require.NoError(t, s.Send(context.Background(), &notification.Message{
		Version: notification.Version, ID: "evt_derive_1", Channel: notification.ChannelWebhook,
		Webhook: &notification.Webhook{URL: srv.URL + path, EventType: "invoice.paid", Payload: json.RawMessage(`{"n":1}`)},
	}))
	r := <-ch
	return srv.URL, r.body, r.header
}

// TestSecretDeriveVerifiesWithReferenceLibrary: each line `secret derive`
// prints is a secret with which the Standard Webhooks reference library
// accepts a request the deliver function's sender signed during a rotation
// (two active secrets); the deployment secrets themselves are not printed.
func TestSecretDeriveVerifiesWithReferenceLibrary(t *testing.T) {
	t.Parallel()
	base, body, header := signedRequest(t, []string{deploySecretOld, deploySecretNew}, "/hooks/a?token=s3cr3t")

	// Another path of the same origin: the same key.
	r := herald(t, "", "secret", "derive", "--secret", deploySecretOld, "--secret", deploySecretNew, base+"/other")
	require.Equal(t, exitOK, r.code, "%+v", r)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 2, "one line per active secret")
	for i, secret := range lines {
		require.NotEqual(t, deploySecretOld, secret)
		require.NotEqual(t, deploySecretNew, secret)
		wh, err := standardwebhooks.NewWebhook(secret)
		require.NoError(t, err)
		require.NoError(t, wh.Verify(body, header), "line %d", i+1)
	}
	require.NotContains(t, r.stdout+r.stderr, strings.TrimPrefix(deploySecretOld, "whsec_"))
	require.NotContains(t, r.stdout+r.stderr, strings.TrimPrefix(deploySecretNew, "whsec_"))

	// Each line belongs to its own secret, in order: a request signed with
	// the new secret alone verifies with the second line, not the first.
	newBase, newBody, newHeader := signedRequest(t, []string{deploySecretNew}, "/")
	r = herald(t, "", "secret", "derive", "--secret", deploySecretOld, "--secret", deploySecretNew, newBase)
	require.Equal(t, exitOK, r.code, "%+v", r)
	newLines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, newLines, 2)
	wh0, err := standardwebhooks.NewWebhook(newLines[0])
	require.NoError(t, err)
	wh1, err := standardwebhooks.NewWebhook(newLines[1])
	require.NoError(t, err)
	require.Error(t, wh0.Verify(newBody, newHeader), "the old secret's key does not verify the new secret's signature")
	require.NoError(t, wh1.Verify(newBody, newHeader))

	// Only the old secret: its derived key alone still verifies (rotation).
	r = herald(t, "", "secret", "derive", "--secret", deploySecretOld, base)
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Equal(t, lines[0]+"\n", r.stdout)

	// The deployment secret itself does not verify: the receiver needs the derived one.
	wh, err := standardwebhooks.NewWebhook(deploySecretOld)
	require.NoError(t, err)
	require.Error(t, wh.Verify(body, header))

	// Another origin (another port) gets another key, which does not verify.
	other, _, _ := signedRequest(t, []string{deploySecretOld}, "/")
	r = herald(t, "", "secret", "derive", "--secret", deploySecretOld, other)
	require.Equal(t, exitOK, r.code, "%+v", r)
	wh, err = standardwebhooks.NewWebhook(strings.TrimSpace(r.stdout))
	require.NoError(t, err)
	require.Error(t, wh.Verify(body, header))
}

func TestSecretDeriveSourcesAndJSON(t *testing.T) {
	t.Parallel()
	url := "https://u:pw@Hooks.Example.COM:443/p?key=k"
	want, err := webhook.DeriveSecret(deploySecretNew, url)
	require.NoError(t, err)

	// HERALD_WEBHOOK_SECRET, space separated; --json names the origin only.
	r := heraldWith(t, map[string]string{"HERALD_WEBHOOK_SECRET": deploySecretOld + "  " + deploySecretNew}, "secret", "derive", "--json", url)
	require.Equal(t, exitOK, r.code, "%+v", r)
	var out struct {
		Origin  string
		Secrets []string
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	require.Equal(t, "https://hooks.example.com", out.Origin)
	require.Len(t, out.Secrets, 2)
	require.Equal(t, want, out.Secrets[1])
	require.NotContains(t, r.stdout, "pw")
	require.NotContains(t, r.stdout, "key=k")

	// --secret wins over the environment.
	r = heraldWith(t, map[string]string{"HERALD_WEBHOOK_SECRET": deploySecretOld}, "secret", "derive", "--secret", deploySecretNew, url)
	require.Equal(t, want+"\n", r.stdout)
}

func TestSecretDeriveErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		vars map[string]string
		args []string
		code int
		want string
	}{
		{nil, []string{"secret", "derive"}, exitUsage, "needs one URL"},
		{nil, []string{"secret", "derive", "https://h.example"}, exitUsage, "no deployment secret"},
		{nil, []string{"secret", "derive", "--secret", deploySecretOld, "ftp://h.example/x?token=s3cr3t"}, exitUsage, "must be absolute and https"},
		{nil, []string{"secret", "derive", "--secret", "whsec_!!notbase64", "https://h.example"}, exitUsage, "secrets from --secret: secret 1 of 1"},
		{map[string]string{"HERALD_WEBHOOK_SECRET": deploySecretOld + " whsec_!!notbase64"}, []string{"secret", "derive", "https://h.example"}, exitFailed, "secrets from HERALD_WEBHOOK_SECRET: secret 2 of 2"},
	} {
		r := heraldWith(t, tc.vars, tc.args...)
		require.Equal(t, tc.code, r.code, "%v: %+v", tc.args, r)
		require.Contains(t, r.stderr, tc.want, tc.args)
		require.NotContains(t, r.stderr, "s3cr3t")
		require.NotContains(t, r.stderr, "notbase64")
	}
}

// secretsManagerWire answers GetSecretValue in the JSON 1.1 protocol for
// one ARN, and ResourceNotFoundException for any other, as the service does.
func secretsManagerWire(t *testing.T, arn, value string) (aws.Config, *[]string) {
	t.Helper()
	var asked []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		if r.Header.Get("X-Amz-Target") != "secretsmanager.GetSecretValue" {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"__type":"UnknownOperationException"}`)
			return
		}
		var in struct{ SecretId string }
		_ = json.NewDecoder(r.Body).Decode(&in)
		asked = append(asked, in.SecretId)
		if in.SecretId != arn {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"__type":"ResourceNotFoundException","Message":"Secrets Manager can't find the specified secret."}`)
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"ARN": arn, "Name": "herald/webhook-signing", "SecretString": value, "VersionId": "v1"})
	}))
	t.Cleanup(srv.Close)
	return awstest.Config(srv.URL), &asked
}

func TestSecretDeriveReadsSecretsManager(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const arn = "arn:aws:secretsmanager:us-east-1:000000000000:secret:herald/webhook-signing-AbCdEf"
	cfg, asked := secretsManagerWire(t, arn, deploySecretOld+"\n"+deploySecretNew+"\n")
	awsCfg := func() (aws.Config, error) { return cfg, nil }
	noStack := func(context.Context) (map[string]string, error) { t.Fatal("no stack to read"); return nil, nil }

	got, source, err := deriveSource{arn: arn}.read(ctx, &globals{}, func(string) string { return "" }, awsCfg, noStack)
	require.NoError(t, err)
	require.Equal(t, []string{deploySecretOld, deploySecretNew}, got)
	require.Contains(t, source, arn)

	got, _, err = deriveSource{}.read(ctx, &globals{}, getenvOf(map[string]string{"HERALD_WEBHOOK_SECRET_ARN": arn}), awsCfg, noStack)
	require.NoError(t, err)
	require.Len(t, got, 2)

	stack := func(context.Context) (map[string]string, error) { return map[string]string{outputSecretARN: arn}, nil }
	got, _, err = deriveSource{}.read(ctx, &globals{stack: "herald"}, getenvOf(map[string]string{"HERALD_WEBHOOK_SECRET": deploySecretOld}), awsCfg, stack)
	require.NoError(t, err)
	require.Len(t, got, 2, "--stack's secret wins over the environment")
	require.Equal(t, []string{arn, arn, arn}, *asked)

	_, _, err = deriveSource{arn: arn + "x"}.read(ctx, &globals{}, func(string) string { return "" }, awsCfg, noStack)
	require.ErrorContains(t, err, "ResourceNotFoundException")
	require.NotContains(t, err.Error(), strings.TrimPrefix(deploySecretOld, "whsec_"))
}

// getenvOf is getenv over m.
func getenvOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// TestSecretRotateUsage: rotate needs a URL with an origin, a grace that
// is not negative, and a store table; each mistake is a usage error that
// changes nothing.
func TestSecretRotateUsage(t *testing.T) {
	t.Parallel()
	table := map[string]string{"HERALD_STORE_TABLE": "herald-store"}
	for _, tc := range []struct {
		vars map[string]string
		args []string
		want string
	}{
		{table, []string{"secret", "rotate"}, "one URL"},
		{table, []string{"secret", "rotate", "ftp://hooks.example.com/x"}, "https"},
		{table, []string{"secret", "rotate", "--grace", "-1h", "https://hooks.example.com/x"}, "must not be negative"},
		{table, []string{"secret", "rotate", "--grace", "soon", "https://hooks.example.com/x"}, "--grace"},
		{nil, []string{"secret", "rotate", "https://hooks.example.com/x"}, "no store table"},
		// Versions do nothing when herald signs with the deployment secret
		// itself: refused before the store is read, with or without a table.
		{map[string]string{"HERALD_STORE_TABLE": "herald-store", "HERALD_WEBHOOK_SECRET_SCOPE": "shared"}, []string{"secret", "rotate", "https://hooks.example.com/x"}, "HERALD_WEBHOOK_SECRET_SCOPE=shared"},
		{map[string]string{"HERALD_WEBHOOK_SECRET_SCOPE": "shared"}, []string{"--json", "secret", "rotate", "--grace", "0s", "https://hooks.example.com/x"}, "rotate the deployment secret"},
		// Spelled as the deliver function reads it (case and space ignored).
		{map[string]string{"HERALD_STORE_TABLE": "herald-store", "HERALD_WEBHOOK_SECRET_SCOPE": " Shared "}, []string{"secret", "rotate", "https://hooks.example.com/x"}, "rotate the deployment secret"},
		{map[string]string{"HERALD_STORE_TABLE": "herald-store", "HERALD_WEBHOOK_SECRET_SCOPE": "SHARED"}, []string{"secret", "rotate", "https://hooks.example.com/x"}, "rotate the deployment secret"},
		// A value the deliver function refuses to start with is refused here.
		{map[string]string{"HERALD_STORE_TABLE": "herald-store", "HERALD_WEBHOOK_SECRET_SCOPE": "per-url"}, []string{"secret", "rotate", "https://hooks.example.com/x"}, `HERALD_WEBHOOK_SECRET_SCOPE: "per-url": want destination or shared`},
	} {
		r := heraldWith(t, tc.vars, tc.args...)
		require.Equal(t, exitUsage, r.code, "%v: %+v", tc.args, r)
		require.Contains(t, r.stderr, tc.want, tc.args)
	}
}

// TestSecretDeriveJSONVersions: with a store table (here the DynamoDB
// wire fake, through the SDK's endpoint variable) derive --json lists each
// active key version of a rotated origin, newest first, with when the
// previous one stops; rotate --json says the same.
func TestSecretDeriveJSONVersions(t *testing.T) { // t.Setenv: not parallel
	ddb := dynamotest.New(t)
	ddb.AddTable("herald-store", store.AttrPK, store.AttrSK)
	t.Setenv("AWS_ENDPOINT_URL_DYNAMODB", ddb.URL())
	t.Setenv("AWS_REGION", "us-east-1")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	vars := map[string]string{"HERALD_STORE_TABLE": "herald-store", "HERALD_WEBHOOK_SECRET": deploySecretOld}
	const url = "https://hooks.example.com/x"

	r := heraldWith(t, vars, "--json", "secret", "rotate", "--grace", "2h", url)
	require.Equal(t, exitOK, r.code, "%+v", r)
	var rotated struct {
		Origin        string
		Version       int
		PreviousUntil string `json:"previous_until"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rotated), r.stdout)
	require.Equal(t, "https://hooks.example.com", rotated.Origin)
	require.Equal(t, 2, rotated.Version)
	until, err := time.Parse(time.RFC3339, rotated.PreviousUntil)
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(2*time.Hour), until, time.Minute)

	r = heraldWith(t, vars, "--json", "secret", "derive", url)
	require.Equal(t, exitOK, r.code, "%+v", r)
	var out struct {
		Secrets  []string
		Versions []struct {
			Version int
			Secrets []string
			Until   string
		}
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &out), r.stdout)
	v2, err := webhook.DeriveSecretVersion(deploySecretOld, url, 2)
	require.NoError(t, err)
	v1, err := webhook.DeriveSecret(deploySecretOld, url)
	require.NoError(t, err)
	require.Equal(t, []string{v2, v1}, out.Secrets)
	require.Len(t, out.Versions, 2)
	require.Equal(t, 2, out.Versions[0].Version)
	require.Empty(t, out.Versions[0].Until)
	require.Equal(t, 1, out.Versions[1].Version)
	require.Equal(t, rotated.PreviousUntil, out.Versions[1].Until)
	require.Contains(t, r.stderr, "version 1 also signs until "+rotated.PreviousUntil)

	// Another origin is untouched.
	r = heraldWith(t, vars, "secret", "derive", "https://other.example.com/")
	require.Equal(t, exitOK, r.code, "%+v", r)
	other, err := webhook.DeriveSecret(deploySecretOld, "https://other.example.com/")
	require.NoError(t, err)
	require.Equal(t, other+"\n", r.stdout)
	require.Empty(t, r.stderr, "no note: one key version, and the scope is the default")
	for _, spelled := range []string{string(webhook.ScopeShared), "Shared "} {
		vars["HERALD_WEBHOOK_SECRET_SCOPE"] = spelled
		r = heraldWith(t, vars, "secret", "derive", "https://other.example.com/")
		require.Equal(t, exitOK, r.code, "%+v", r)
		require.Contains(t, r.stderr, "HERALD_WEBHOOK_SECRET_SCOPE=shared here", spelled)
	}
	delete(vars, "HERALD_WEBHOOK_SECRET_SCOPE")

	// rotate's grace: a day by default; 0 is allowed (the previous version
	// stops signing at once).
	for _, tt := range []struct {
		args  []string
		grace time.Duration
	}{
		{[]string{"--json", "secret", "rotate", "https://default-grace.example.com/"}, 24 * time.Hour},
		{[]string{"--json", "secret", "rotate", "--grace", "0s", "https://no-grace.example.com/"}, 0},
	} {
		r = heraldWith(t, vars, tt.args...)
		require.Equal(t, exitOK, r.code, "%+v", r)
		require.NoError(t, json.Unmarshal([]byte(r.stdout), &rotated), r.stdout)
		until, err := time.Parse(time.RFC3339, rotated.PreviousUntil)
		require.NoError(t, err)
		require.WithinDuration(t, time.Now().Add(tt.grace), until, time.Minute, "%v", tt.args)
	}

	// Two tenants on one host share the origin's key: rotating for one
	// rotates the other's too, and rotate says so.
	r = heraldWith(t, vars, "secret", "rotate", "https://tenants.example.com/tenant-a")
	require.Equal(t, exitOK, r.code, "%+v", r)
	require.Contains(t, r.stdout, "every receiver at https://tenants.example.com (any path)")
	a := heraldWith(t, vars, "secret", "derive", "https://tenants.example.com/tenant-a")
	b := heraldWith(t, vars, "secret", "derive", "https://tenants.example.com/tenant-b")
	require.Equal(t, a.stdout, b.stdout)
	require.Len(t, strings.Fields(b.stdout), 2, "tenant-b is at version 2 too, version 1 in its grace period")
}
