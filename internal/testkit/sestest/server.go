// Package sestest is an httptest server speaking SES v2's SendEmail in its
// REST-JSON wire format (POST /v2/email/outbound-emails, the input as a JSON
// body; an error as the X-Amzn-ErrorType header and a JSON "message"), for
// unit tests that run the real AWS SDK v2 client against it. Like the local
// SES v2 emulator (aws-ses-v2-local, which make local-up runs) it keeps the
// mail it accepted and lists it at GET /store in the emulator's shape, which
// internal/localenv reads.
//
// It rejects what SES rejects of a SendEmail (SES v2 API Reference,
// SendEmail; "Service quotas in Amazon SES"):
//   - no FromEmailAddress (BadRequestException, 400);
//   - no recipient, or more than [MaxRecipients] in To, Cc and Bcc together
//     (BadRequestException, 400);
//   - Simple content without a subject or without a text or HTML body
//     (BadRequestException, 400), content neither Simple nor Template;
//   - a template it does not hold ([Server.AddTemplate]): NotFoundException,
//     404, "Template NAME does not exist."
//
// A templated email is kept with the template's name and data, not rendered.
package sestest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"
)

// SendEmailPath is the REST binding of SendEmail.
const SendEmailPath = "/v2/email/outbound-emails"

// MaxRecipients is how many To, Cc and Bcc addresses together one email may
// have ("Service quotas in Amazon SES": 50 recipients per message).
const MaxRecipients = 50

// Email is one email the server accepted, in the shape of the emulator's
// GET /store (At is Unix seconds).
type Email struct {
	MessageID   string      `json:"messageId"`
	From        string      `json:"from"`
	ReplyTo     []string    `json:"replyTo"`
	Destination Destination `json:"destination"`
	Subject     string      `json:"subject"`
	Body        Body        `json:"body"`
	At          int64       `json:"at"`
	// Template and TemplateData are a templated email's name and JSON data.
	Template     string `json:"template,omitempty"`
	TemplateData string `json:"templateData,omitempty"`
}

// Destination is an email's recipients.
type Destination struct {
	To  []string `json:"to"`
	Cc  []string `json:"cc"`
	Bcc []string `json:"bcc"`
}

// Body is a simple email's text and HTML parts.
type Body struct {
	Text string `json:"text,omitempty"`
	HTML string `json:"html,omitempty"`
}

// Server is an in-memory SES v2.
type Server struct {
	srv *httptest.Server
	now func() time.Time

	mu        sync.Mutex
	emails    []Email
	templates map[string]bool
}

// New starts a server on 127.0.0.1, closed when t ends; its clock (each
// email's At) is the wall clock.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{now: time.Now, templates: map[string]bool{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST "+SendEmailPath, s.sendEmail)
	mux.HandleFunc("GET /store", s.store)
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

// URL is the server's endpoint, http://127.0.0.1:port, for an SES v2
// client's BaseEndpoint or AWS_ENDPOINT_URL_SESV2.
func (s *Server) URL() string { return s.srv.URL }

// AddTemplate makes the template name exist.
func (s *Server) AddTemplate(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.templates[name] = true
}

// Emails returns the emails accepted so far, in order.
func (s *Server) Emails() []Email {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.emails)
}

type content struct{ Data string }

type sendEmailInput struct {
	FromEmailAddress string
	ReplyToAddresses []string
	Destination      struct{ ToAddresses, CcAddresses, BccAddresses []string }
	Content          struct {
		Simple *struct {
			Subject *content
			Body    struct{ Text, Html *content }
		}
		Template *struct{ TemplateName, TemplateData string }
	}
}

func (s *Server) sendEmail(w http.ResponseWriter, r *http.Request) {
	var in sendEmailInput
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		refuse(w, http.StatusBadRequest, "BadRequestException", "Malformed request: "+err.Error())
		return
	}
	d := in.Destination
	n := len(d.ToAddresses) + len(d.CcAddresses) + len(d.BccAddresses)
	e := Email{From: in.FromEmailAddress, ReplyTo: in.ReplyToAddresses, Destination: Destination{To: d.ToAddresses, Cc: d.CcAddresses, Bcc: d.BccAddresses}}
	simple, tmpl := in.Content.Simple, in.Content.Template
	switch {
	case in.FromEmailAddress == "":
		refuse(w, http.StatusBadRequest, "BadRequestException", "Missing required field FromEmailAddress.")
		return
	case n == 0 || n > MaxRecipients:
		refuse(w, http.StatusBadRequest, "BadRequestException", fmt.Sprintf("Recipient count %d is not between 1 and %d.", n, MaxRecipients))
		return
	case simple != nil:
		if simple.Subject == nil || simple.Subject.Data == "" || simple.Body.Text == nil && simple.Body.Html == nil {
			refuse(w, http.StatusBadRequest, "BadRequestException", "Simple content needs a subject and a text or HTML body.")
			return
		}
		e.Subject = simple.Subject.Data
		if simple.Body.Text != nil {
			e.Body.Text = simple.Body.Text.Data
		}
		if simple.Body.Html != nil {
			e.Body.HTML = simple.Body.Html.Data
		}
	case tmpl != nil:
		s.mu.Lock()
		known := s.templates[tmpl.TemplateName]
		s.mu.Unlock()
		if !known {
			refuse(w, http.StatusNotFound, "NotFoundException", "Template "+tmpl.TemplateName+" does not exist.")
			return
		}
		e.Template, e.TemplateData = tmpl.TemplateName, tmpl.TemplateData
	default:
		refuse(w, http.StatusBadRequest, "BadRequestException", "Content must be Simple or Template.")
		return
	}
	s.mu.Lock()
	e.MessageID = fmt.Sprintf("sestest-%d", len(s.emails)+1)
	e.At = s.now().Unix()
	s.emails = append(s.emails, e)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"MessageId": e.MessageID})
}

// refuse answers an SES error: its code in X-Amzn-ErrorType, its message in
// the JSON body.
func refuse(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-ErrorType", code)
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

// store answers GET /store as the emulator does: {"emails": [...]}.
func (s *Server) store(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{"emails": s.Emails()})
}
