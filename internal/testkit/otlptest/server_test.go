package otlptest_test

import (
	"bytes"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/testkit/otlptest"
)

// TestRefusesWhatAReceiverRefuses: OTLP/HTTP
// (https://opentelemetry.io/docs/specs/otlp/#otlphttp): POST only, a
// protobuf body that decodes; JSON encoding is not served here.
func TestRefusesWhatAReceiverRefuses(t *testing.T) {
	t.Parallel()
	s := otlptest.New(t)
	for _, tc := range []struct {
		method, ctype string
		body          []byte
		want          int
	}{
		{http.MethodGet, "application/x-protobuf", nil, http.StatusMethodNotAllowed},
		{http.MethodPost, "application/json", []byte("{}"), http.StatusUnsupportedMediaType},
		{http.MethodPost, "application/x-protobuf", []byte{0xff, 0xff, 0xff}, http.StatusBadRequest},
		{http.MethodPost, "application/x-protobuf", nil, http.StatusOK}, // an empty request is a valid one
	} {
		req, err := http.NewRequestWithContext(t.Context(), tc.method, s.Endpoint(), bytes.NewReader(tc.body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", tc.ctype)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		require.Equal(t, tc.want, resp.StatusCode, "%s %s", tc.method, tc.ctype)
	}
	require.Empty(t, s.Spans())
}
