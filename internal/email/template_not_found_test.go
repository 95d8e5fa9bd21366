package email

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/heraldhq/herald/internal/delivery"
)

const templateMessage = `{"version":1,"id":"n-2","channel":"email","email":{
	"from":"shop@example.com","to":["rcpt@example.com"],"template":{"name":"welcome","data":{"name":"Jana"}}}}`

// TestSendTemplateNotFound: a missing template is ses_template_not_found
// when SES's not-found answer can only be about it — the request names no
// configuration set, or SES's message names the template — whether SES names
// NotFoundException (AWS) or answers a bare 404 (the local SES v2 emulator,
// aws-ses-v2-local, puts the code where the SDK does not read it); otherwise
// the class says no more than SES did.
func TestSendTemplateNotFound(t *testing.T) {
	t.Parallel()
	// aws-ses-v2-local 2.10.2, sendEmail.js: 404 with the code in "type",
	// which the SDK does not read (it reads X-Amzn-ErrorType, "code", "__type").
	emulator := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(404)
		fmt.Fprint(w, `{"type":"NotFoundException","message":"The resource you attempted to access doesn't exist."}`)
	}
	tests := []struct {
		name      string
		handler   http.HandlerFunc
		configSet string
		body      string
		class     string
	}{
		{"AWS, no configuration set", sesError(404, "NotFoundException", "The resource you attempted to access doesn't exist."), "", templateMessage, "ses_template_not_found"},
		{"AWS names the template", sesError(404, "NotFoundException", "Template welcome does not exist."), "herald", templateMessage, "ses_template_not_found"},
		{"AWS names the configuration set", sesError(404, "NotFoundException", "Configuration set herald does not exist."), "herald", templateMessage, "ses_not_found"},
		{"AWS, no template in the email", sesError(404, "NotFoundException", "Configuration set herald does not exist."), "herald", simpleMessage, "ses_not_found"},
		{"AWS, no template, no configuration set", sesError(404, "NotFoundException", "not found"), "", simpleMessage, "ses_not_found"},
		{"emulator, no configuration set", emulator, "", templateMessage, "ses_template_not_found"},
		{"emulator, a configuration set", emulator, "herald", templateMessage, "ses_4xx"},
		{"emulator, no template in the email", emulator, "", simpleMessage, "ses_4xx"},
		{"a 400 is not a missing template", sesError(400, "BadRequestException", "Template data invalid"), "", templateMessage, "ses_bad_request"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, tt.handler, Config{ConfigurationSet: tt.configSet})
			err := b.sender.Send(t.Context(), parse(t, tt.body))
			requireOutcome(t, err, true, classOf(tt.class), 0)
		})
	}
}

func classOf(name string) delivery.Class {
	for _, c := range delivery.Classes() {
		if string(c) == name {
			return c
		}
	}
	panic("no class " + name)
}
