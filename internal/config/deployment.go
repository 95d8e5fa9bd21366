package config

// TemplateLeavesUnset names the variables LoadDeliver reads that
// template.yaml deliberately does not set on DeliverFunction, so each takes
// its default there:
//   - HERALD_WEBHOOK_SECRET: the template passes the secret's ARN instead
//     (HERALD_WEBHOOK_SECRET_ARN); the two are mutually exclusive.
//   - HERALD_WEBHOOK_ALLOW_HTTP: plain http webhooks are for local testing only.
//   - HERALD_CHECK_QUEUES: the cold-start queue check stays on (its default).
//   - HERALD_CHAT_ALLOW_HOSTS: chat webhooks reach only each service's own
//     hosts (its default, none added); local tests add their stand-ins.
//
// Every other variable a loader reads is set by the template; the deploy
// integration test (internal/integration/deploy_test.go) checks both lists
// against the deployed functions.
var TemplateLeavesUnset = []string{"HERALD_WEBHOOK_SECRET", "HERALD_WEBHOOK_ALLOW_HTTP", "HERALD_CHECK_QUEUES", "HERALD_CHAT_ALLOW_HOSTS"}

// SetButNotRead names the variables template.yaml sets on a function that
// no loader reads: HERALD_WEBHOOK_SECRET_VERSION only changes the function's
// configuration, so that a rotated signing secret is read by fresh execution
// environments at once (template parameter WebhookSigningSecretVersion).
var SetButNotRead = []string{"HERALD_WEBHOOK_SECRET_VERSION"}
