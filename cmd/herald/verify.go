package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/internal/webhook"
)

// verifyFlags are the inputs of `herald verify`.
type verifyFlags struct {
	secrets   []string
	id        string
	timestamp string
	signature string
	body      string
	tolerance time.Duration
}

func newVerifyCmd(e *env, g *globals) *cobra.Command {
	var f verifyFlags
	cmd := &cobra.Command{
		Use:   "verify --secret S --id ID --timestamp TS --signature SIG --body FILE",
		Short: "Check a webhook's signature as a receiver would",
		Long: `Check a received webhook as a Standard Webhooks receiver does: the
webhook-timestamp within --tolerance of now, and one of the webhook-signature
entries ("v1,<base64>", space-separated) the HMAC-SHA256 of
"<webhook-id>.<webhook-timestamp>.<body>" under one of the secrets.
--body is the raw request body as received ("-" for standard input).
Prints "valid" (exit 0) or why not (exit 1).`,
		Example: `  herald verify --secret "$SECRET" --id msg_2Kx --timestamp 1796000000 \
    --signature 'v1,K5oZfz…' --body body.json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			keys, ts, err := f.parse()
			if err != nil {
				return err
			}
			var body []byte
			if f.body == "-" {
				body, err = io.ReadAll(e.stdin)
			} else {
				body, err = os.ReadFile(f.body)
			}
			if err != nil {
				return fmt.Errorf("body: %w", err)
			}
			verr := webhook.Verify(keys, f.id, ts, body, f.signature, e.now(), f.tolerance)
			if g.json {
				res := map[string]any{"valid": verr == nil}
				if verr != nil {
					res["error"] = verr.Error()
				}
				if err := writeJSON(e.stdout, res); err != nil {
					return err
				}
			} else if verr == nil {
				fmt.Fprintln(e.stdout, "valid")
			} else {
				fmt.Fprintln(e.stdout, "invalid:", verr)
			}
			if verr != nil {
				return errReported
			}
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&f.secrets, "secret", nil, "signing secret whsec_… (repeatable, or space-separated, as during a rotation)")
	cmd.Flags().StringVar(&f.id, "id", "", "the webhook-id header")
	cmd.Flags().StringVar(&f.timestamp, "timestamp", "", "the webhook-timestamp header (Unix seconds)")
	cmd.Flags().StringVar(&f.signature, "signature", "", "the webhook-signature header")
	cmd.Flags().StringVar(&f.body, "body", "", "file with the raw request body, - for standard input")
	cmd.Flags().DurationVar(&f.tolerance, "tolerance", webhook.DefaultTolerance, "how far the timestamp may be from now")
	return cmd
}

// parse checks the flags and decodes the secrets and the timestamp.
func (f *verifyFlags) parse() ([][]byte, time.Time, error) {
	var missing []string
	for name, v := range map[string]string{"--id": f.id, "--timestamp": f.timestamp, "--signature": f.signature, "--body": f.body} {
		if v == "" {
			missing = append(missing, name)
		}
	}
	if len(f.secrets) == 0 {
		missing = append(missing, "--secret")
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		return nil, time.Time{}, usagef("verify needs %s", strings.Join(missing, ", "))
	}
	var keys [][]byte
	for _, s := range f.secrets {
		for _, one := range strings.Fields(s) {
			k, err := webhook.DecodeSecret(one)
			if err != nil {
				return nil, time.Time{}, usageError{err}
			}
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil, time.Time{}, usageError{errors.New("--secret is empty")}
	}
	sec, err := strconv.ParseInt(f.timestamp, 10, 64)
	if err != nil {
		return nil, time.Time{}, usagef("--timestamp %q: want Unix seconds", f.timestamp)
	}
	return keys, time.Unix(sec, 0), nil
}
