package main

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/webhook"
)

// Outputs of the template that these commands read (template.yaml,
// Outputs): the signing secret and the store table.
const (
	outputSecretARN  = "WebhookSigningSecretArn"
	outputStoreTable = "StoreTableName"
)

// DefaultRotateGrace is `herald secret rotate --grace`'s default: how long
// the previous key version keeps signing beside the new one, a day for the
// receiver's operator to install the new key.
const DefaultRotateGrace = 24 * time.Hour

// newSecretCmd is the `herald secret` group: new, derive and rotate.
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
	}, newSecretDeriveCmd(e, g), newSecretRotateCmd(e, g))
	return cmd
}

// openStore returns the store of the table the stack's StoreTableName
// output names (--stack), else HERALD_STORE_TABLE; nil when neither names
// one. outputs is read only with --stack.
func openStore(ctx context.Context, g *globals, getenv func(string) string, awsCfg func() (aws.Config, error), outputs func(context.Context) (map[string]string, error)) (*store.Store, error) {
	table := ""
	if g.stack != "" {
		out, err := outputs(ctx)
		if err != nil {
			return nil, err
		}
		if table = out[outputStoreTable]; table == "" {
			return nil, fmt.Errorf("stack %s has no %s output: is it a herald stack?", g.stack, outputStoreTable)
		}
	} else {
		table = getenv("HERALD_STORE_TABLE")
	}
	if table == "" {
		return nil, nil
	}
	cfg, err := awsCfg()
	if err != nil {
		return nil, err
	}
	return store.New(dynamodb.NewFromConfig(cfg), store.Config{Table: table})
}

func newSecretRotateCmd(e *env, g *globals) *cobra.Command {
	grace := DefaultRotateGrace
	cmd := &cobra.Command{
		Use:   "rotate URL",
		Short: "Start the next key version of URL's origin (every receiver there)",
		Long: `Start the next version of the per-destination key of URL's origin (scheme,
host, port): for a receiver whose key leaked. The key is the origin's, not the
URL's: every receiver at that origin shares it (two tenants on one host, at
/a and /b, have one key) and must install the new one; receivers at other
origins keep theirs. Per-endpoint secrets (a key of each URL) are not
available yet. herald then signs each webhook to that origin with the new
version's key and, for --grace (default 24h), also with the previous one
(two signatures, space-separated, as Standard Webhooks allows), so that the
receiver can install the new key first and drop the old one after. A
rotation during a grace period ends the older version at once: only the
previous and the new version sign. --grace 0 replaces the key at once.

The version is kept in herald's DynamoDB table (--stack's StoreTableName
output, else HERALD_STORE_TABLE): one consistent GetItem and one
conditional PutItem. Running deliver functions see it within 30 s (each
caches an origin's versions that long). Print the keys the receiver
installs with ` + "`herald secret derive URL`" + ` (docs/security.md, "Rotating one
receiver's key").

Refused under HERALD_WEBHOOK_SECRET_SCOPE=shared: there herald signs with the
deployment secret itself, key versions change nothing, and every receiver
holds that secret: rotate the deployment secret instead.

--json prints {"origin": ..., "version": n, "previous_until": RFC 3339}.`,
		Example: `  herald secret rotate --stack herald https://hooks.example.com/herald
  herald secret rotate --grace 72h https://hooks.example.com/herald`,
		Args: exactArgs(1, "one URL"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			origin, err := webhook.Origin(args[0])
			if err != nil {
				return usageError{err}
			}
			if grace < 0 {
				return usagef("--grace %s: must not be negative", grace)
			}
			scope, err := config.WebhookSecretScope(e.getenv)
			if err != nil {
				return usageError{err}
			}
			if scope == webhook.ScopeShared {
				return usagef("HERALD_WEBHOOK_SECRET_SCOPE=shared here: a deployment with that setting signs with its secret itself, so a key version would change nothing and every receiver holds that secret; rotate the deployment secret (docs/security.md, \"The signing secret\"), or unset the variable if the deployment signs per destination")
			}
			st, err := openStore(ctx, g, e.getenv, func() (aws.Config, error) { return g.awsConfig(ctx) }, g.stackOutputs)
			if err != nil {
				return err
			}
			if st == nil {
				return usagef("no store table: give --stack NAME or HERALD_STORE_TABLE")
			}
			k, err := st.Rotate(ctx, origin, grace)
			if err != nil {
				return err
			}
			if g.json {
				return writeJSON(e.stdout, struct {
					Origin        string `json:"origin"`
					Version       int    `json:"version"`
					PreviousUntil string `json:"previous_until"`
				}{origin, k.Version, k.PreviousUntil.UTC().Format(time.RFC3339)})
			}
			_, err = fmt.Fprintf(e.stdout, "%s: key version %d; version %d also signs until %s\nevery receiver at %s (any path) installs the keys of `herald secret derive` for this URL now, and drops version %d's after that time\n",
				origin, k.Version, k.Version-1, k.PreviousUntil.UTC().Format(time.RFC3339), origin, k.Version-1)
			return err
		},
	}
	cmd.Flags().DurationVar(&grace, "grace", DefaultRotateGrace, "how long the previous key version also signs (Go duration: 24h, 90m; 0: not at all)")
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
		Short: "Print the signing secrets the receiver at URL installs (per-destination keys)",
		Long: `Print the whsec_ secrets that the webhook receiver at URL installs when herald
signs per destination (HERALD_WEBHOOK_SECRET_SCOPE=destination, the default):
HKDF-SHA256 of each active deployment secret, URL's origin (scheme, host,
port) and the origin's key version (docs/security.md, "What a receiver
installs"). One line per active key version (newest first) and deployment
secret (in their order): during a rotation herald signs with each, and the
receiver may install any. Every URL of one origin has the same secrets. The
deployment secrets themselves are never printed.

The origin's key versions come from herald's DynamoDB table (--stack's
StoreTableName output, else HERALD_STORE_TABLE; ` + "`herald secret rotate`" + `);
without a table, or for an origin never rotated, version 1.

The deployment secrets come from --secret (repeatable), else --secret-arn
(Secrets Manager GetSecretValue through the SDK's default chain), else the
stack's WebhookSigningSecretArn output (--stack), else HERALD_WEBHOOK_SECRET
(white-space separated), else HERALD_WEBHOOK_SECRET_ARN.

--json prints {"origin": ..., "secrets": [...], "versions": [{"version": n,
"secrets": [...], "until": RFC 3339 or absent}]}: "secrets" is every line,
"until" is when a previous version stops signing.`,
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
			st, err := openStore(ctx, g, e.getenv, func() (aws.Config, error) { return g.awsConfig(ctx) }, g.stackOutputs)
			if err != nil {
				return err
			}
			kv := webhook.KeyVersions{Version: 1}
			if st != nil {
				k, err := st.Keys(ctx, origin)
				if err != nil {
					return err
				}
				kv = webhook.KeyVersions{Version: k.Version, PreviousUntil: k.PreviousUntil}
			}
			type version struct {
				Version int      `json:"version"`
				Secrets []string `json:"secrets"`
				Until   string   `json:"until,omitempty"`
			}
			var versions []version
			var all []string
			for _, v := range kv.Active(e.now()) {
				derived, err := deriveAll(secrets, args[0], v)
				if err != nil {
					err = fmt.Errorf("secrets from %s: %w", source, err)
					if len(src.secrets) > 0 {
						return usageError{err}
					}
					return err
				}
				ver := version{Version: v, Secrets: derived}
				if v < kv.Version {
					ver.Until = kv.PreviousUntil.UTC().Format(time.RFC3339)
					fmt.Fprintf(e.stderr, "herald: note: %s is at key version %d; version %d also signs until %s: install every line now, drop version %d's after\n", origin, kv.Version, v, ver.Until, v)
				}
				versions = append(versions, ver)
				all = append(all, derived...)
			}
			if scope, _ := config.WebhookSecretScope(e.getenv); scope == webhook.ScopeShared {
				fmt.Fprintln(e.stderr, "herald: note: HERALD_WEBHOOK_SECRET_SCOPE=shared here: a deployment with that setting signs with its secrets themselves, not these")
			}
			if g.json {
				return writeJSON(e.stdout, struct {
					Origin   string    `json:"origin"`
					Secrets  []string  `json:"secrets"`
					Versions []version `json:"versions"`
				}{origin, all, versions})
			}
			for _, d := range all {
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

// deriveAll derives key version v of rawURL from each deployment secret,
// in order. Errors name a secret by its position, never its value.
func deriveAll(secrets []string, rawURL string, v int) ([]string, error) {
	derived := make([]string, len(secrets))
	for i, s := range secrets {
		d, err := webhook.DeriveSecretVersion(s, rawURL, v)
		if err != nil {
			return nil, fmt.Errorf("secret %d of %d: %w", i+1, len(secrets), err)
		}
		derived[i] = d
	}
	return derived, nil
}
