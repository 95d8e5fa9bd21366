package webhook

import (
	"encoding/base64"
	"net/url"
	"strings"
)

// sentCredentials returns what a request to u with the producer's headers
// and the webhook-signature value signature carries that may be a
// credential, for scrubbing echoes of it: the URL's userinfo and the
// "Authorization: Basic" value net/http makes of it, every producer header
// value (an API key, a bearer token), and the signatures.
func sentCredentials(u *url.URL, headers map[string]string, signature string) []string {
	var out []string
	if u.User != nil {
		user := u.User.Username()
		pass, _ := u.User.Password()
		basic := base64.StdEncoding.EncodeToString([]byte(user + ":" + pass))
		out = append(out, user, pass, user+":"+pass, basic, "Basic "+basic)
	}
	for _, v := range headers {
		out = append(out, v)
		// "Bearer <token>", "Token token=<t>": the credential without its scheme.
		if _, cred, ok := strings.Cut(v, " "); ok {
			out = append(out, cred)
		}
	}
	out = append(out, signature)
	for _, sig := range strings.Fields(signature) {
		_, b64, _ := strings.Cut(sig, ",")
		out = append(out, sig, b64)
	}
	return out
}
