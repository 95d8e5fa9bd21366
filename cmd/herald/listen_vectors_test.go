package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/webhook"
)

// specVector is the Standard Webhooks reference vector of
// testdata/webhook/vectors.json (its first entry).
type specVector struct {
	Secret    string `json:"secret"`
	MsgID     string `json:"msg_id"`
	Timestamp int64  `json:"timestamp"`
	Body      string `json:"body"`
	Signature string `json:"signature"`
}

func loadSpecVector(t *testing.T) specVector {
	t.Helper()
	raw, err := os.ReadFile("../../testdata/webhook/vectors.json")
	require.NoError(t, err)
	var f struct{ Vectors []specVector }
	require.NoError(t, json.Unmarshal(raw, &f))
	require.Equal(t, "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", f.Vectors[0].Secret, "the specification's vector comes first")
	return f.Vectors[0]
}

// rawRequest writes req as it is on a new connection to l and returns the
// status line of the answer.
func rawRequest(t *testing.T, l *listening, req string) string {
	t.Helper()
	c, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(l.url, "http://"), listenPath))
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.SetDeadline(time.Now().Add(10*time.Second)))
	_, err = c.Write([]byte(req))
	require.NoError(t, err)
	status, err := bufio.NewReader(c).ReadString('\n')
	require.NoError(t, err)
	return strings.TrimSpace(status)
}

// TestListenSpecVector: the Standard Webhooks reference vector verifies
// with --secret (its timestamp, of 2021, within a --tolerance that wide),
// whatever the requests look like on the wire: HTTP/1.0 without a Host
// (--secret needs no origin), header names in any case, a chunked body,
// the signature among others (a rotation) or after a v1a entry; and not
// with a v1a entry alone, a signature of another id, or a body changed.
func TestListenSpecVector(t *testing.T) {
	t.Parallel()
	v := loadSpecVector(t)
	l := startListen(t, nil, "--secret", v.Secret, "--tolerance", "200000h")
	ts := strconv.FormatInt(v.Timestamp, 10)
	post := func(proto, host, id, sig, body string, chunked bool) {
		t.Helper()
		head := "POST " + listenPath + " " + proto + "\r\n"
		if host != "" {
			head += "Host: " + host + "\r\n"
		}
		head += "WEBHOOK-ID: " + id + "\r\nwebhook-Timestamp: " + ts + "\r\nWebhook-Signature: " + sig + "\r\n"
		if chunked {
			head += fmt.Sprintf("Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", len(body), body)
		} else {
			head += "Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
		}
		require.Contains(t, rawRequest(t, l, head), " 200 ", id)
	}
	other := "v1,bm90LXRoZS1zaWduYXR1cmUtb2YtdGhpcy1yZXF1ZXN0LS0tLS0tLS0tLS0="
	post("HTTP/1.0", "", v.MsgID, v.Signature, v.Body, false)
	post("HTTP/1.1", "127.0.0.1", "msg_chunked", v.Signature, v.Body, true) // another id: not this signature
	post("HTTP/1.1", "127.0.0.1", v.MsgID, other+" "+v.Signature, v.Body, true)
	post("HTTP/1.1", "127.0.0.1", v.MsgID, "v1a,"+v.Signature[3:]+" "+v.Signature, v.Body, false)
	post("HTTP/1.0", "", v.MsgID, "v1a,"+v.Signature[3:], v.Body, false)
	post("HTTP/1.1", "127.0.0.1", v.MsgID, v.Signature, strings.Replace(v.Body, "4", "5", 1), false)
	lines := strings.Split(strings.TrimSpace(l.out.String()), "\n")
	require.Len(t, lines, 12, l.out.String())
	verdicts := make([]string, 0, 6)
	for i := 0; i < len(lines); i += 2 {
		_, verdict, _ := strings.Cut(lines[i], "  attempt ")
		verdicts = append(verdicts, verdict)
	}
	require.Equal(t, []string{
		"1  verified (--secret)  answered 200",
		"1  NOT VERIFIED: no webhook-signature matches: 1 signature(s) checked against 1 secret(s)  answered 200",
		"2  verified (--secret)  answered 200",
		"3  verified (--secret)  answered 200",
		"4  NOT VERIFIED: no webhook-signature matches: webhook-signature has no v1,<base64> entry  answered 200",
		"5  NOT VERIFIED: no webhook-signature matches: 1 signature(s) checked against 1 secret(s)  answered 200",
	}, verdicts, l.out.String())
}

// TestListenJSONEscapesControls: with --json, a sender's event type, path
// and body reach the terminal with their control characters escaped, C1
// ones (U+009B, CSI) too, and each line is still the JSON of what came.
func TestListenJSONEscapesControls(t *testing.T) {
	t.Parallel()
	l := startListen(t, nil, "--secret", loadSpecVector(t).Secret, "--json")
	body := `{"type":"evil\u001b]0;owned\u0007` + "\u009b2J\u007f" + `"}`
	req := "POST /p%C2%9Bq HTTP/1.1\r\nHost: 127.0.0.1\r\nwebhook-id: evt_c1\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body
	require.Contains(t, rawRequest(t, l, req), " 200 ")
	requireNoControls(t, l.out.String())
	lines := l.jsonLines(t)
	require.Len(t, lines, 2)
	require.Equal(t, "evil\x1b]0;owned\x07\u009b2J\x7f", lines[1]["event_type"])
	require.Equal(t, "/p\u009bq", lines[1]["path"])
	require.Equal(t, body, lines[1]["body"])
}

// TestListenHostlessRequest: the key herald derives depends on the URL's
// origin, which a request without a Host (HTTP/1.0) does not name: the
// line says to give --url, and with --url it verifies.
func TestListenHostlessRequest(t *testing.T) {
	t.Parallel()
	const url = "https://hooks.example.com/h"
	key, err := webhook.DeriveSecret(deploySecretOld, url)
	require.NoError(t, err)
	raw, err := webhook.DecodeSecret(key)
	require.NoError(t, err)
	body := `{"type":"a.b"}`
	now := time.Now()
	req := "POST /h HTTP/1.0\r\nwebhook-id: evt_hostless\r\nwebhook-timestamp: " + strconv.FormatInt(now.Unix(), 10) +
		"\r\nwebhook-signature: " + webhook.Sign(raw, "evt_hostless", now, []byte(body)) + "\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n" + body

	l := startListen(t, deploymentVars)
	require.Contains(t, rawRequest(t, l, req), " 200 ")
	require.Contains(t, l.lineOf(t, "evt_hostless"), "NOT VERIFIED: no key for this request's Host (webhook URL: the host has an empty label): give --url the URL herald sends to, or --secret")

	withURL := startListen(t, deploymentVars, "--url", url)
	require.Contains(t, rawRequest(t, withURL, req), " 200 ")
	require.Contains(t, withURL.lineOf(t, "evt_hostless"), "attempt 1  verified (key version 1)")
}
