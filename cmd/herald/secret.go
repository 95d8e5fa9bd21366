package main

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/webhook"
)

// outputSecretARN is the template's output that names the signing secret
// (template.yaml, Outputs).
const outputSecretARN = "WebhookSigningSecretArn"

// newSecretCmd is the `herald secret` group: new and derive.
func newSecretCmd(e *env, g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secret",
		Short: "Make webhook signing secrets and derive a receiver's",
		Args:  noArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "new",
		Short: "Print a fresh Standard Webhooks signing secret (whsec_…)",
		Long: `Print a fresh signing secret: "whsec_" and the base64 of 32 random bytes
(crypto/rand), for the WebhookSigningSecret parameter or HERALD_WEBHOOK_SECRET.
Rotation (sign with old and new): docs/security.md.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s := webhook.NewSecret()
			if g.json {
				return writeJSON(e.stdout, map[string]string{"secret": s})
			}
			_, err := fmt.Fprintln(e.stdout, s)
			return err
		},
	}, newSecretDeriveCmd(e, g))
	return cmd
}

// deriveSource is where `secret derive` reads the deployment's secrets.
type deriveSource struct {
	secrets []string // --secret, each possibly a white-space separated list
	arn     string   // --secret-arn
}

func newSecretDeriveCmd(e *env, g *globals) *cobra.Command {
	var src deriveSource
	cmd := &cobra.Command{
		Use:   "derive URL",
		Short: "Print the signing secret the receiver at URL installs (per-destination key)",
		Long: `Print the whsec_ secret that the webhook receiver at URL installs when herald
signs per destination (HERALD_WEBHOOK_SECRET_SCOPE=destination, the default):
HKDF-SHA256 of each active deployment secret and URL's origin (scheme, host,
port; docs/security.md, "What a receiver installs"). One line per active
deployment secret, in their order: during a rotation the receiver may install
either. Every URL of one origin has the same secret. The deployment secrets
themselves are never printed.

The deployment secrets come from --secret (repeatable), else --secret-arn
(Secrets Manager GetSecretValue through the SDK's default chain), else the
stack's WebhookSigningSecretArn output (--stack), else HERALD_WEBHOOK_SECRET
(white-space separated), else HERALD_WEBHOOK_SECRET_ARN.

--json prints {"origin": ..., "secrets": [...]}.`,
		Example: `  herald secret derive https://hooks.example.com/herald
  herald secret derive --stack herald https://hooks.example.com/herald`,
		Args: exactArgs(1, "one URL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			origin, err := webhook.Origin(args[0])
			if err != nil {
				return usageError{err}
			}
			secrets, source, err := src.read(ctx, g, e.getenv, func() (aws.Config, error) { return g.awsConfig(ctx) }, g.stackOutputs)
			if err != nil {
				return err
			}
			derived, err := deriveAll(secrets, args[0])
			if err != nil {
				err = fmt.Errorf("secrets from %s: %w", source, err)
				if len(src.secrets) > 0 {
					return usageError{err}
				}
				return err
			}
			if e.getenv("HERALD_WEBHOOK_SECRET_SCOPE") == string(webhook.ScopeShared) {
				fmt.Fprintln(e.stderr, "herald: note: HERALD_WEBHOOK_SECRET_SCOPE=shared here: a deployment with that setting signs with its secrets themselves, not these")
			}
			if g.json {
				return writeJSON(e.stdout, struct {
					Origin  string   `json:"origin"`
					Secrets []string `json:"secrets"`
				}{origin, derived})
			}
			for _, d := range derived {
				if _, err := fmt.Fprintln(e.stdout, d); err != nil {
					return err
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&src.secrets, "secret", nil, "a deployment signing secret (whsec_…; repeatable, or several separated by spaces)")
	f.StringVar(&src.arn, "secret-arn", "", "read the deployment secrets from this Secrets Manager secret")
	return cmd
}

// read returns the active deployment secrets and where they came from (for
// error texts; never a value). Secrets Manager is read with
// app.WebhookSecrets, as the deliver function reads it.
func (s deriveSource) read(ctx context.Context, g *globals, getenv func(string) string, awsCfg func() (aws.Config, error), outputs func(context.Context) (map[string]string, error)) ([]string, string, error) {
	var secrets []string
	for _, v := range s.secrets {
		secrets = append(secrets, webhook.SplitSecrets(v)...)
	}
	if len(secrets) > 0 {
		return secrets, "--secret", nil
	}
	arn := s.arn
	if arn == "" && g.stack != "" {
		out, err := outputs(ctx)
		if err != nil {
			return nil, "", err
		}
		if arn = out[outputSecretARN]; arn == "" {
			return nil, "", fmt.Errorf("stack %s has no %s output: is it a herald stack?", g.stack, outputSecretARN)
		}
	}
	if arn == "" {
		if env := webhook.SplitSecrets(getenv("HERALD_WEBHOOK_SECRET")); len(env) > 0 {
			return env, "HERALD_WEBHOOK_SECRET", nil
		}
		arn = getenv("HERALD_WEBHOOK_SECRET_ARN")
	}
	if arn == "" {
		return nil, "", usagef("no deployment secret: give --secret, --secret-arn, --stack NAME, HERALD_WEBHOOK_SECRET or HERALD_WEBHOOK_SECRET_ARN")
	}
	cfg, err := awsCfg()
	if err != nil {
		return nil, "", err
	}
	return app.WebhookSecrets(ctx, config.Deliver{WebhookSecretARN: arn}, cfg)
}

// deriveAll derives the secret of rawURL from each deployment secret, in
// order. Errors name a secret by its position, never its value.
func deriveAll(secrets []string, rawURL string) ([]string, error) {
	derived := make([]string, len(secrets))
	for i, s := range secrets {
		d, err := webhook.DeriveSecret(s, rawURL)
		if err != nil {
			return nil, fmt.Errorf("secret %d of %d: %w", i+1, len(secrets), err)
		}
		derived[i] = d
	}
	return derived, nil
}
