package config

import (
	"log/slog"
	"net/netip"
	"strings"

	"github.com/heraldhq/herald/notification"
)

// Names of the endpoints API's own variables.
const (
	// EnvStoreTable names herald's DynamoDB table.
	EnvStoreTable = "HERALD_STORE_TABLE"
	// EnvEndpointKeyID names the stack's endpoint KMS key (EndpointKey):
	// its id, ARN or alias.
	EnvEndpointKeyID = "HERALD_ENDPOINT_KEY_ID"
)

// EndpointsAPI is the configuration of the endpoints API function
// (functions/endpoints).
type EndpointsAPI struct {
	// StoreTable is herald's DynamoDB table, where endpoints are kept
	// (HERALD_STORE_TABLE). Required.
	StoreTable string
	// EndpointKeyID is the KMS key that seals endpoint secrets, chat URLs
	// and header values (HERALD_ENDPOINT_KEY_ID). Required.
	EndpointKeyID string
	// EventQueueURL is the event queue test events go to
	// (HERALD_EVENT_QUEUE_URL). Required.
	EventQueueURL string
	// WebhookAllowCIDRs, WebhookAllowHTTP and ChatAllowHosts are the
	// deployment's exceptions to the URL rules, read as for the deliver
	// function (HERALD_WEBHOOK_ALLOW_CIDRS, HERALD_WEBHOOK_ALLOW_HTTP,
	// HERALD_CHAT_ALLOW_HOSTS), so that an endpoint is refused at creation
	// exactly when it would be refused at send time. Default to none.
	WebhookAllowCIDRs []netip.Prefix
	WebhookAllowHTTP  bool
	ChatAllowHosts    []string
	// LogLevel as for Deliver (HERALD_LOG_LEVEL).
	LogLevel slog.Level
}

// LoadEndpointsAPI reads the endpoints API function's settings through
// getenv; the error names every variable at fault.
func LoadEndpointsAPI(getenv func(string) string) (EndpointsAPI, error) {
	r := reader{getenv: getenv}
	c := EndpointsAPI{
		StoreTable:        strings.TrimSpace(getenv(EnvStoreTable)),
		EndpointKeyID:     strings.TrimSpace(getenv(EnvEndpointKeyID)),
		EventQueueURL:     strings.TrimSpace(getenv(EnvQueueURL(notification.ChannelEvent))),
		WebhookAllowCIDRs: r.prefixes("HERALD_WEBHOOK_ALLOW_CIDRS"),
		WebhookAllowHTTP:  r.boolean("HERALD_WEBHOOK_ALLOW_HTTP", false),
		ChatAllowHosts:    r.hosts("HERALD_CHAT_ALLOW_HOSTS"),
		LogLevel:          r.level("HERALD_LOG_LEVEL"),
	}
	for name, v := range map[string]string{EnvStoreTable: c.StoreTable, EnvEndpointKeyID: c.EndpointKeyID, EnvQueueURL(notification.ChannelEvent): c.EventQueueURL} {
		if v == "" {
			r.problem(name, "required")
		}
	}
	return c, r.err()
}
