// Command register is the Go example of docs/endpoints-guide.md: it
// registers a webhook endpoint for a tenant through the endpoints API and
// prints its id and signing secret.
//
//	HERALD_ENDPOINTS_API_URL=https://abcdef1234.execute-api.eu-west-1.amazonaws.com/api go run ./docs/examples/register
package main

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/aws/aws-sdk-go-v2/config"

	"github.com/heraldhq/herald/endpoints"
)

func main() {
	ctx := context.Background()
	cfg, err := config.LoadDefaultConfig(ctx) // your usual AWS credentials and Region
	if err != nil {
		log.Fatal(err)
	}
	api, err := endpoints.New(os.Getenv("HERALD_ENDPOINTS_API_URL"), cfg) // the stack's EndpointsApiUrl
	if err != nil {
		log.Fatal(err)
	}
	if err := register(ctx, api); err != nil {
		log.Fatal(err)
	}
}

func register(ctx context.Context, api *endpoints.Client) error {
	created, err := api.Create(ctx, endpoints.CreateInput{
		Tenant:      "acme", // your customer's id
		URL:         "https://hooks.acme.example/herald",
		Description: "Acme's billing system",
		EventTypes:  []string{"invoice.*", "customer.deleted"},
	})
	if err != nil {
		return err // an *endpoints.Error names the field the API refused
	}
	// Show the secret to your customer once; herald keeps it sealed.
	fmt.Println(created.Endpoint.ID, created.Secret)
	return nil
}
