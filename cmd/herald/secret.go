package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/internal/webhook"
)

// newSecretCmd is the `herald secret` group. `herald secret derive URL`
// (per-destination secrets) is added here beside `new`.
func newSecretCmd(e *env, g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "secret",
		Short: "Make webhook signing secrets",
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
	})
	return cmd
}
