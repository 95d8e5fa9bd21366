// Package endpoints is the Go client of herald's endpoints API: register
// your customers' webhook and chat endpoints, change, disable, enable and
// delete them, rotate their signing secrets, send them a test event and read
// their recent failures.
//
// The API is an Amazon API Gateway REST API with AWS IAM authorization
// (api/endpoints.openapi.yaml is its OpenAPI 3.1 document; docs/endpoints.md,
// "API reference"). [Client] signs every request with Signature Version 4
// for the service "execute-api" with the credentials of an aws.Config, so
// the caller's principal needs execute-api:Invoke on the API
// (https://docs.aws.amazon.com/apigateway/latest/developerguide/permissions.html).
//
// Every failure the API answered is an [*Error]: its Status (the HTTP
// status), Code (one of the Code* constants) and, for bad input, Field (the
// JSON path of the member, the query parameter's or the header's name).
//
//	c, err := endpoints.New("https://abcdef1234.execute-api.eu-west-1.amazonaws.com/api", awsCfg)
//	created, err := c.Create(ctx, endpoints.CreateInput{Tenant: "acme", URL: "https://hooks.acme.example/herald"})
//	// created.Secret ("whsec_…") is handed out only here and by RotateSecret.
//
// The command `herald endpoints` is a thin layer over this package.
package endpoints
