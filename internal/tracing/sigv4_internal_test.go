package tracing

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/stretchr/testify/require"
)

// TestSigV4Transport: each export is signed for service xray in the
// configured Region (what X-Ray's OTLP endpoint checks), its body sent
// whole and hashed into the signature.
func TestSigV4Transport(t *testing.T) {
	t.Parallel()
	var got *http.Request
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r
		body, _ = io.ReadAll(r.Body)
	}))
	t.Cleanup(srv.Close)
	tr := newSigV4Transport(http.DefaultTransport,
		aws.NewCredentialsCache(credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "")), "eu-central-1")
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/v1/traces", bytes.NewReader([]byte("spans")))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-protobuf")
	resp, err := tr.RoundTrip(req)
	require.NoError(t, err)
	_ = resp.Body.Close()

	auth := got.Header.Get("Authorization")
	require.True(t, strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/"), auth)
	require.Contains(t, auth, "/eu-central-1/xray/aws4_request")
	require.Contains(t, auth, "SignedHeaders=")
	require.NotEmpty(t, got.Header.Get("X-Amz-Date"))
	require.Equal(t, []byte("spans"), body)
	require.NotContains(t, auth, "wJalrXUtnFEMI", "the secret key never travels")
}

// TestNewXRayDefaultsToTheRegionsEndpoint: with no HERALD_TRACING_ENDPOINT
// the xray mode exports to X-Ray's OTLP endpoint in the Region.
func TestNewXRayDefaultsToTheRegionsEndpoint(t *testing.T) {
	t.Parallel()
	var got string
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		got = r.URL.String()
		return &http.Response{StatusCode: http.StatusOK, Body: io.NopCloser(strings.NewReader("")), Header: http.Header{"Content-Type": {"application/x-protobuf"}}}, nil
	})}
	tr, err := New(t.Context(), Config{Mode: XRay, SampleRatio: 1}, Options{Credentials: credentials.NewStaticCredentialsProvider("AKIDEXAMPLE", "secret", ""), Region: "ap-southeast-2", HTTPClient: client})
	require.NoError(t, err)
	_, span := tr.Tracer().Start(t.Context(), "x")
	span.End()
	require.NoError(t, tr.Flush(t.Context()))
	require.Equal(t, "https://xray.ap-southeast-2.amazonaws.com/v1/traces", got)
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
