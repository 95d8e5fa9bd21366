package app

import (
	"fmt"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/endpointapi"
)

// NewEndpointsAPI builds the endpoints API's handler from its
// configuration: the endpoint store over awsCfg's DynamoDB and KMS
// clients (with the deployment's URL rules), and the event queue for test
// events.
func NewEndpointsAPI(cfg config.EndpointsAPI, awsCfg aws.Config, logger *slog.Logger) (*endpointapi.Handler, error) {
	table, err := endpoint.NewTable(endpoint.TableConfig{
		Table: cfg.StoreTable, KeyID: cfg.EndpointKeyID,
		DB: dynamodb.NewFromConfig(awsCfg), KMS: kms.NewFromConfig(awsCfg),
		URLRules: endpoint.URLRules{AllowHTTP: cfg.WebhookAllowHTTP, AllowCIDRs: cfg.WebhookAllowCIDRs, ChatAllowHosts: cfg.ChatAllowHosts},
	})
	if err != nil {
		return nil, fmt.Errorf("endpoint store: %w", err)
	}
	return endpointapi.New(endpointapi.Config{
		Store: table, Queue: sqs.NewFromConfig(awsCfg), EventQueueURL: cfg.EventQueueURL, Logger: logger,
	})
}
