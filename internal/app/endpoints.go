package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/heraldhq/herald/internal/endpoint"
	"github.com/heraldhq/herald/internal/endpointsend"
	"github.com/heraldhq/herald/internal/store"
)

// endpointConfig is what the deliver function's endpoint middleware
// (package endpointsend) reads registered endpoints with: the endpoint
// store on herald's table, through a per-environment Cache (30 s), its
// failures recorded in the same table, and rate limits paced through st.
// Reading an endpoint needs kms:Decrypt only (each item's data key names
// the stack's EndpointKey), so no key id is configured here. Without a
// store table, a delivery naming an endpoint cannot be resolved: it is
// retried (endpoint_unavailable) and, after its receives, dead-lettered
// for a redrive once the table is configured.
func endpointConfig(awsCfg aws.Config, table string, db endpoint.DynamoDBAPI, st *store.Store) (endpointsend.Config, error) {
	if st == nil {
		return endpointsend.Config{Endpoints: noEndpointStore{}}, nil
	}
	tbl, err := endpoint.NewTable(endpoint.TableConfig{Table: table, DB: db, KMS: kms.NewFromConfig(awsCfg)})
	if err != nil {
		return endpointsend.Config{}, fmt.Errorf("endpoint store: %w", err)
	}
	return endpointsend.Config{Endpoints: endpoint.NewCache(tbl, 0, nil), Failures: tbl, Pace: st}, nil
}

// noEndpointStore answers every read: no endpoint store is configured.
type noEndpointStore struct{}

func (noEndpointStore) Get(context.Context, string) (endpoint.Endpoint, error) {
	return endpoint.Endpoint{}, errNoEndpointStore
}

var errNoEndpointStore = errors.New("no endpoint store: HERALD_STORE_TABLE is not set")
