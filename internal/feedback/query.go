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
// It is the lookup behind a future `herald email events ID`
// (cloudwatchlogs StartQuery with this string, then GetQueryResults).
func EventsQuery(id string) string {
	return fmt.Sprintf(`fields @timestamp, msg, event_type, outcome, bounce_type, bounce_sub_type, complaint_feedback_type, delay_type, reject_reason, template, error, ses_message_id
| filter id = %s
| sort @timestamp asc`, strconv.Quote(id))
}
