package tracing

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// sigV4Transport signs each request with SigV4 for service in region, the
// authentication X-Ray's OTLP endpoint takes
// (https://docs.aws.amazon.com/AmazonCloudWatch/latest/monitoring/CloudWatch-OTLPEndpoint.html).
// The signing time is the real clock's: a signature is valid for minutes
// around it.
type sigV4Transport struct {
	next    http.RoundTripper
	creds   aws.CredentialsProvider
	region  string
	service string
	signer  *v4.Signer
}

// newSigV4Transport signs for X-Ray in region what next sends.
func newSigV4Transport(next http.RoundTripper, creds aws.CredentialsProvider, region string) *sigV4Transport {
	return &sigV4Transport{next: next, creds: creds, region: region, service: "xray", signer: v4.NewSigner()}
}

func (t *sigV4Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(req.Body)
		_ = req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("sign OTLP export: read body: %w", err)
		}
	}
	creds, err := t.creds.Retrieve(req.Context())
	if err != nil {
		return nil, fmt.Errorf("sign OTLP export: credentials: %w", err)
	}
	signed := req.Clone(req.Context())
	signed.Body = io.NopCloser(bytes.NewReader(body))
	signed.ContentLength = int64(len(body))
	sum := sha256.Sum256(body)
	if err := t.signer.SignHTTP(req.Context(), creds, signed, hex.EncodeToString(sum[:]), t.service, t.region, time.Now()); err != nil {
		return nil, fmt.Errorf("sign OTLP export: %w", err)
	}
	return t.next.RoundTrip(signed)
}
