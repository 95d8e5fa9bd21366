package processor_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/once"
	"github.com/heraldhq/herald/notification"
)

// TestOnceSameIDAnotherNotification: a notification whose id was
// delivered but whose destination, type or content differs is not sent
// and not settled a duplicate: it is dead-lettered at once as
// notification_id_reused and counted; a copy that differs only in what a
// producer's copies may (created_at, expires_at, metadata, white space,
// member order of the message) is a duplicate.
func TestOnceSameIDAnotherNotification(t *testing.T) {
	t.Parallel()
	const hook = `{"version":1,"id":"reuse-h","channel":"webhook","webhook":{"url":"https://hooks.example.com/x","event_type":"t","payload":{"a":1,"b":[1,2]}}}`
	const mail = `{"version":1,"id":"reuse-m","channel":"email","email":{"from":"a@example.com","to":["b@example.org"],"subject":"s","text":"t"}}`
	future := time.Now().Add(48 * time.Hour).UTC().Format(time.RFC3339)
	for _, tc := range []struct {
		name, first, second string
		reused              bool
	}{
		{"webhook: another url", hook, strings.Replace(hook, "/x", "/y", 1), true},
		{"webhook: another host", hook, strings.Replace(hook, "hooks.example.com", "other.example.com", 1), true},
		{"webhook: another event type", hook, strings.Replace(hook, `"event_type":"t"`, `"event_type":"u"`, 1), true},
		{"webhook: another payload value", hook, strings.Replace(hook, `"a":1`, `"a":2`, 1), true},
		{"webhook: payload keys in another order", hook, strings.Replace(hook, `{"a":1,"b":[1,2]}`, `{"b":[1,2],"a":1}`, 1), true},
		{"webhook: a header added", hook, strings.Replace(hook, `"payload"`, `"headers":{"x-k":"v"},"payload"`, 1), true},
		{"email: another recipient", mail, strings.Replace(mail, "b@example.org", "c@example.org", 1), true},
		{"email: another subject", mail, strings.Replace(mail, `"subject":"s"`, `"subject":"S"`, 1), true},
		{"email: a cc added", mail, strings.Replace(mail, `"subject"`, `"cc":["d@example.org"],"subject"`, 1), true},
		{"webhook: the same", hook, hook, false},
		{"webhook: white space in the payload", hook, strings.Replace(hook, `{"a":1,"b":[1,2]}`, "{ \"a\" : 1,\n \"b\":[1, 2] }", 1), false},
		{"webhook: created_at added", hook, strings.Replace(hook, `"channel"`, `"created_at":"2026-11-30T10:00:00Z","channel"`, 1), false},
		{"webhook: expires_at added", hook, strings.Replace(hook, `"channel"`, `"expires_at":"`+future+`","channel"`, 1), false},
		{"webhook: metadata added", hook, strings.Replace(hook, `"channel"`, `"metadata":{"attempt":"2"},"channel"`, 1), false},
		{"webhook: members in another order", hook, `{"channel":"webhook","id":"reuse-h","webhook":{"payload":{"a":1,"b":[1,2]},"event_type":"t","url":"https://hooks.example.com/x"},"version":1}`, false},
		{"email: metadata and created_at added", mail, strings.Replace(mail, `"channel"`, `"metadata":{"k":"v"},"created_at":"2026-11-30T10:00:00Z","channel"`, 1), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			a, b, _ := twoEnvironments(t, nil, nil)
			id := notification.IDOf([]byte(tc.first))
			require.Empty(t, failures(handle(t, a, invocation(t), rec("m-1", tc.first, 1))))
			require.Empty(t, failures(handle(t, b, invocation(t), rec("m-2", tc.second, 1))), "settled on its first receive")
			require.Equal(t, int32(1), a.sends(id)+b.sends(id), "sent once")
			line := logLines(t, b)["m-2"]
			letters := b.wire.Messages(b.dlqURL)
			if !tc.reused {
				require.Equal(t, "duplicate", line["outcome"])
				require.Empty(t, letters)
				return
			}
			require.Equal(t, "dead_lettered", line["outcome"])
			require.Equal(t, string(once.ClassIDReused), line["error_class"])
			require.Contains(t, line["error"], "another notification with this id was delivered")
			require.Len(t, letters, 1)
			require.Equal(t, tc.second, letters[0].Body, "the dead letter is the second notification, whole")
			m, err := notification.Parse([]byte(tc.second))
			require.NoError(t, err)
			counted := batchLines(t, b, onceClock())[string(m.Channel)+"/dead_lettered"]
			require.Equal(t, string(once.ClassIDReused), counted["error_class"])
			require.Equal(t, 1.0, counted["DeadLetters"], "counted")
		})
	}
}
