// Package endpointapi is the endpoints API's Lambda handler: API Gateway
// REST API proxy events (events.APIGatewayProxyRequest, AWS_PROXY
// integration) routed to the operations of api/endpoints.openapi.yaml over
// the endpoint store (internal/endpoint) and the event queue (test events).
//
// Its rules: a body is one JSON object of at most MaxRequestBytes with
// Content-Type application/json, members matched exactly and unknown ones
// refused; bad input is 400 naming the field and writes nothing; an update
// names the version it read in If-Match (412 when it is not the current
// one, 428 without it); a secret is shown only by create and
// rotate-secret, a chat URL and header values never. Authorization is API
// Gateway's (AWS_IAM on every method, template.yaml): the handler trusts
// every request that reaches it.
//
// https://docs.aws.amazon.com/apigateway/latest/developerguide/set-up-lambda-proxy-integrations.html
// gives the proxy event's and answer's shapes.
package endpointapi
