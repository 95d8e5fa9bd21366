package app

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/webhook"
)

// secretReadTimeout bounds reading the signing secret at cold start, well
// inside Lambda's 10 s initialization phase.
const secretReadTimeout = 5 * time.Second

// WebhookSecrets returns the active webhook signing secrets and the name of
// where they came from, for error texts: HERALD_WEBHOOK_SECRET, or the
// SecretString of the Secrets Manager secret HERALD_WEBHOOK_SECRET_ARN names,
// read once (the standard AWS_ENDPOINT_URL_SECRETS_MANAGER or
// AWS_ENDPOINT_URL points it at LocalStack). Either holds whsec_ secrets
// separated by white space ([webhook.SplitSecrets]). Errors name the
// variable and the ARN, never the value. Only cfg.WebhookSecret and
// cfg.WebhookSecretARN are read: the deliver function and `herald secret
// derive` share it.
func WebhookSecrets(ctx context.Context, cfg config.Deliver, awsCfg aws.Config) (secrets []string, source string, err error) {
	if cfg.WebhookSecretARN == "" {
		return webhook.SplitSecrets(cfg.WebhookSecret), "HERALD_WEBHOOK_SECRET", nil
	}
	source = "HERALD_WEBHOOK_SECRET_ARN " + cfg.WebhookSecretARN
	ctx, cancel := context.WithTimeout(ctx, secretReadTimeout)
	defer cancel()
	out, err := secretsmanager.NewFromConfig(awsCfg).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{
		SecretId: aws.String(cfg.WebhookSecretARN),
	})
	if err != nil {
		return nil, source, fmt.Errorf("read %s: %w", source, err)
	}
	if out.SecretString == nil {
		return nil, source, fmt.Errorf("read %s: %w", source, errors.New("the secret has no SecretString (a binary secret is not read)"))
	}
	secrets = webhook.SplitSecrets(*out.SecretString)
	if len(secrets) == 0 {
		return nil, source, fmt.Errorf("read %s: %w", source, errors.New("the SecretString is empty"))
	}
	return secrets, source, nil
}
