package sestest_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/sesv2"
	"github.com/aws/aws-sdk-go-v2/service/sesv2/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/testkit/awstest"
	"github.com/heraldhq/herald/internal/testkit/sestest"
)

func setup(t *testing.T) (*sestest.Server, *sesv2.Client) {
	t.Helper()
	s := sestest.New(t)
	return s, sesv2.NewFromConfig(awstest.Config(s.URL()))
}

func simple(subject, text, html string, to ...string) *sesv2.SendEmailInput {
	in := &sesv2.SendEmailInput{
		FromEmailAddress: aws.String("noreply@example.com"),
		Destination:      &types.Destination{ToAddresses: to},
		Content:          &types.EmailContent{Simple: &types.Message{Body: &types.Body{}}},
	}
	in.Content.Simple.Subject = &types.Content{Data: aws.String(subject)} // the SDK requires one
	if text != "" {
		in.Content.Simple.Body.Text = &types.Content{Data: aws.String(text)}
	}
	if html != "" {
		in.Content.Simple.Body.Html = &types.Content{Data: aws.String(html)}
	}
	return in
}

// refused returns the SES error code and HTTP status of err.
func refused(t *testing.T, err error) (string, int) {
	t.Helper()
	var ae smithy.APIError
	require.True(t, errors.As(err, &ae), "%v", err)
	var re *awshttp.ResponseError
	require.True(t, errors.As(err, &re), "%v", err)
	return ae.ErrorCode(), re.HTTPStatusCode()
}

// TestSendEmailKeepsWhatItAccepts: simple and templated emails are kept in
// order with their parts, recipients and a message id the answer names, and
// GET /store lists them in the emulator's shape.
func TestSendEmailKeepsWhatItAccepts(t *testing.T) {
	t.Parallel()
	s, c := setup(t)
	ctx := context.Background()
	in := simple("Hello", "text part", "<p>html part</p>", "a@example.org")
	in.Destination.CcAddresses = []string{"c@example.org"}
	in.Destination.BccAddresses = []string{"b@example.org"}
	in.ReplyToAddresses = []string{"reply@example.com"}
	out, err := c.SendEmail(ctx, in)
	require.NoError(t, err)
	require.Equal(t, "sestest-1", aws.ToString(out.MessageId))
	_, err = c.SendEmail(ctx, simple("Text only", "t", "", "x@example.org"))
	require.NoError(t, err)
	_, err = c.SendEmail(ctx, simple("HTML only", "", "<b>h</b>", "y@example.org"))
	require.NoError(t, err)

	s.AddTemplate("password-reset")
	_, err = c.SendEmail(ctx, &sesv2.SendEmailInput{
		FromEmailAddress: aws.String("noreply@example.com"),
		Destination:      &types.Destination{ToAddresses: []string{"k@example.jp"}},
		Content:          &types.EmailContent{Template: &types.Template{TemplateName: aws.String("password-reset"), TemplateData: aws.String(`{"name":"k"}`)}},
	})
	require.NoError(t, err)

	got := s.Emails()
	require.Len(t, got, 4)
	first := got[0]
	require.Equal(t, "sestest-1", first.MessageID)
	require.Equal(t, "noreply@example.com", first.From)
	require.Equal(t, []string{"reply@example.com"}, first.ReplyTo)
	require.Equal(t, sestest.Destination{To: []string{"a@example.org"}, Cc: []string{"c@example.org"}, Bcc: []string{"b@example.org"}}, first.Destination)
	require.Equal(t, "Hello", first.Subject)
	require.Equal(t, sestest.Body{Text: "text part", HTML: "<p>html part</p>"}, first.Body)
	require.InDelta(t, float64(time.Now().Unix()), float64(first.At), 5, "Unix seconds")
	require.Equal(t, sestest.Body{Text: "t"}, got[1].Body)
	require.Equal(t, sestest.Body{HTML: "<b>h</b>"}, got[2].Body)
	require.Equal(t, "sestest-4", got[3].MessageID)
	require.Equal(t, "password-reset", got[3].Template)
	require.Equal(t, `{"name":"k"}`, got[3].TemplateData)

	stored, err := localenv.SentEmails(ctx, s.URL())
	require.NoError(t, err)
	require.Len(t, stored, 4)
	require.Equal(t, "sestest-1", stored[0].MessageID)
	require.Equal(t, []string{"a@example.org"}, stored[0].Destination.To)
	require.Equal(t, []string{"b@example.org"}, stored[0].Destination.Bcc)
	require.Equal(t, "Hello", stored[0].Subject)
	require.Equal(t, "<p>html part</p>", stored[0].Body.HTML)
	require.Equal(t, first.At, stored[0].At)
}

// TestSendEmailRejectsWhatSESRejects: each refusal with SES's code and
// status, and nothing kept.
func TestSendEmailRejectsWhatSESRejects(t *testing.T) {
	t.Parallel()
	many := make([]string, sestest.MaxRecipients+1)
	for i := range many {
		many[i] = fmt.Sprintf("r%d@example.org", i)
	}
	noFrom := simple("s", "t", "", "a@example.org")
	noFrom.FromEmailAddress = nil
	tooMany := simple("s", "t", "", many[:30]...)
	tooMany.Destination.CcAddresses = many[30:40]
	tooMany.Destination.BccAddresses = many[40:]
	noContent := simple("s", "t", "", "a@example.org")
	noContent.Content = &types.EmailContent{}
	for name, tc := range map[string]struct {
		in     *sesv2.SendEmailInput
		code   string
		status int
	}{
		"no from":          {noFrom, "BadRequestException", http.StatusBadRequest},
		"no recipient":     {simple("s", "t", ""), "BadRequestException", http.StatusBadRequest},
		"51 recipients":    {tooMany, "BadRequestException", http.StatusBadRequest},
		"no subject":       {simple("", "t", "", "a@example.org"), "BadRequestException", http.StatusBadRequest},
		"no body":          {simple("s", "", "", "a@example.org"), "BadRequestException", http.StatusBadRequest},
		"neither content":  {noContent, "BadRequestException", http.StatusBadRequest},
		"unknown template": {&sesv2.SendEmailInput{FromEmailAddress: aws.String("f@example.com"), Destination: &types.Destination{ToAddresses: []string{"a@example.org"}}, Content: &types.EmailContent{Template: &types.Template{TemplateName: aws.String("nope")}}}, "NotFoundException", http.StatusNotFound},
	} {
		s, c := setup(t)
		s.AddTemplate("other")
		_, err := c.SendEmail(context.Background(), tc.in)
		code, status := refused(t, err)
		require.Equal(t, tc.code, code, name)
		require.Equal(t, tc.status, status, name)
		require.Empty(t, s.Emails(), name)
	}
	_, c := setup(t)
	_, err := c.SendEmail(context.Background(), &sesv2.SendEmailInput{FromEmailAddress: aws.String("f@example.com"), Destination: &types.Destination{ToAddresses: []string{"a@example.org"}}, Content: &types.EmailContent{Template: &types.Template{TemplateName: aws.String("nope")}}})
	var nf *types.NotFoundException
	require.True(t, errors.As(err, &nf), "%v", err)
	require.Equal(t, "Template nope does not exist.", nf.ErrorMessage())

	ok := simple("s", "t", "", many[:sestest.MaxRecipients]...)
	_, err = c.SendEmail(context.Background(), ok)
	require.NoError(t, err, "50 recipients")
}

// TestMalformedRequest: a body that is not JSON is BadRequestException.
func TestMalformedRequest(t *testing.T) {
	t.Parallel()
	s, _ := setup(t)
	resp, err := http.Post(s.URL()+sestest.SendEmailPath, "application/json", strings.NewReader("{"))
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	require.Equal(t, "BadRequestException", resp.Header.Get("X-Amzn-ErrorType"))
	require.Empty(t, s.Emails())
}
