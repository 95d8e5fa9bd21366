// Package awstest gives tests the AWS SDK configuration for a service
// stand-in on 127.0.0.1 (a wire-format fake or an httptest server): its
// endpoint, a Region, anonymous credentials and no SDK retries, so that each
// fault a test injects reaches the code under test once.
package awstest

import "github.com/aws/aws-sdk-go-v2/aws"

// Region is the Region every test client names.
const Region = "us-east-1"

// Config returns the configuration of a client of the service at endpoint
// (a URL such as httptest.Server.URL); pass it to a service's NewFromConfig.
func Config(endpoint string) aws.Config {
	return aws.Config{
		Region:           Region,
		Credentials:      aws.AnonymousCredentials{},
		BaseEndpoint:     aws.String(endpoint),
		RetryMaxAttempts: 1,
	}
}
