package feedback

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// EventsQuery returns the CloudWatch Logs Insights query that lists the SES
// events of notification id, oldest first, when run on the feedback
// function's log group (output FeedbackFunctionLogGroupName); run on the
// deliver function's log group as well, it shows the delivery attempts
// beside them, as both write the notification id as "id". id is quoted as
// a Logs Insights string literal, so any text is safe to pass.
//
// It is the lookup behind `herald email events ID` (cmd/herald/email.go:
// cloudwatchlogs StartQuery with this string, then GetQueryResults).
//
// On the deliver function's log group a notification delivered on its
// first receive has no line of its own: its batch line ("batch", outcome
// delivered) lists its id (internal/processor/log.go, MemberDelivered),
// found by the text "id":"ID" (a valid notification id has no character
// that needs escaping there; one that has finds nothing more).
func EventsQuery(id string) string {
	return fmt.Sprintf(`fields @timestamp, msg, outcome, event_type, bounce_type, bounce_sub_type, recipient_domains.0, template, error
| filter id = %s or msg = "batch" and @message like /%s/
| sort @timestamp asc`, strconv.Quote(id), strings.ReplaceAll(regexp.QuoteMeta(`"id":`+strconv.Quote(id)), "/", `\/`))
}
