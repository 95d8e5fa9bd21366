package feedback

import (
	"fmt"
	"strconv"
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
func EventsQuery(id string) string {
	return fmt.Sprintf(`fields @timestamp, msg, outcome, event_type, bounce_type, bounce_sub_type, recipient_domains.0, template, error
| filter id = %s
| sort @timestamp asc`, strconv.Quote(id))
}
