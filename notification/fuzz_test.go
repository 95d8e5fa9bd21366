package notification_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/heraldhq/herald/notification"
)

// FuzzParse checks that Parse never panics, that what it accepts the JSON
// Schema accepts too (the Go validator is the stricter of the two: it also
// parses mailboxes and counts recipients across fields), and that an
// accepted message survives a round trip through Validate.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join(casesDir, "*.json"))
	if err != nil || len(files) == 0 {
		f.Fatalf("no seed samples in %s: %v", casesDir, err)
	}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(validEmail))
	f.Add([]byte(validWebhook))
	f.Add([]byte(`{"version":1,"id":"d","channel":"webhook","webhook":{"url":"https://a.example.com","event_type":"x","payload":{"a":1,"\u0061":2},"headers":{"X-A":"1","x-a":"2"}}}`))
	f.Add([]byte(benchEmail1KiB))
	schema := compileSchema(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := notification.Parse(body)
		if err != nil {
			if m != nil {
				t.Fatalf("Parse returned a message with an error: %v", err)
			}
			return
		}
		if !schemaValid(t, schema, body) {
			t.Fatalf("Parse accepts a body the schema rejects: %q", body)
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("accepted message fails Validate after a round trip: %v", err)
		}
	})
}
