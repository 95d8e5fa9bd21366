package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/spf13/cobra"

	"github.com/heraldhq/herald/internal/localenv"
)

// Exit statuses.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

// env is what the commands read and write: the process's, or a test's.
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	now            func() time.Time
}

func defaultEnv() *env {
	return &env{stdin: os.Stdin, stdout: os.Stdout, stderr: os.Stderr, getenv: os.Getenv, now: time.Now}
}

// globals are the flags every command has.
type globals struct {
	queueURL string
	dlqURL   string
	stack    string
	region   string
	json     bool
}

// usageError is a mistake in the command line: exit status 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

// errReported is an error already reported to the user: exit status 1 with
// nothing more printed.
var errReported = errors.New("failed")

// execute runs the command line args and returns the exit status.
func execute(ctx context.Context, e *env, args []string) int {
	root := newRoot(e)
	root.SetArgs(args)
	root.SetIn(e.stdin)
	root.SetOut(e.stdout)
	root.SetErr(e.stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	var ue usageError
	if errors.As(err, &ue) || isCobraUsage(err) {
		fmt.Fprintf(e.stderr, "herald: %v\nRun 'herald --help' for usage.\n", err)
		return exitUsage
	}
	if !errors.Is(err, errReported) {
		fmt.Fprintf(e.stderr, "herald: %v\n", err)
	}
	return exitFailed
}

// isCobraUsage recognises the errors cobra returns for an unknown command.
func isCobraUsage(err error) bool {
	return strings.HasPrefix(err.Error(), "unknown command") || strings.HasPrefix(err.Error(), "unknown shorthand flag") || strings.HasPrefix(err.Error(), "unknown flag")
}

func newRoot(e *env) *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:   "herald",
		Short: "Send notifications, run delivery locally, inspect and redrive dead letters, resume delivery, follow email",
		Long: `herald is the command line of herald, serverless notification delivery on AWS.

Each channel has its queue and dead-letter queue. Their URLs come from
--queue-url / --dlq-url (one pair for every channel), else from --stack NAME
(the deployed stack's outputs: EmailQueueUrl, WebhookQueueUrl, ChatQueueUrl,
EventQueueUrl and their dead-letter queues'), else from HERALD_<CHANNEL>_QUEUE_URL /
HERALD_<CHANNEL>_DLQ_URL (and HERALD_QUEUE_URL / HERALD_DLQ_URL for the queue
of every channel). --stack also names the deliver function
(resume), the log groups (email events) and the signing secret (secret derive).
AWS credentials, Region and endpoints
come from the SDK's default chain (AWS_PROFILE, AWS_REGION, AWS_ENDPOINT_URL…);
for the local stack: ` + localenv.SourceEnvFile + `.

Exit status: 0 ok, 1 something failed, 2 usage error.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// herald's own commands only; no shell completion command.
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
		Args:              noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return cmd.Help()
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&g.queueURL, "queue-url", "", "one queue URL for every channel, over each channel's own (default $HERALD_<CHANNEL>_QUEUE_URL, $HERALD_QUEUE_URL or the stack's outputs)")
	pf.StringVar(&g.dlqURL, "dlq-url", "", "one dead-letter queue URL for every channel (default $HERALD_<CHANNEL>_DLQ_URL, $HERALD_DLQ_URL or the stack's outputs)")
	pf.StringVar(&g.stack, "stack", "", "read the queue URLs from this CloudFormation stack's outputs")
	pf.StringVar(&g.region, "region", "", "AWS Region (default from the SDK's chain: AWS_REGION, the profile)")
	pf.BoolVar(&g.json, "json", false, "machine-readable JSON output")
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })

	// One file per command group: send.go, run.go, dlq.go, secret.go
	// (secret new, secret derive), verify.go, resume.go, email.go, destinations.go. A new
	// group adds its constructor here.
	root.AddCommand(
		newSendCmd(e, g),
		newRunCmd(e, g),
		newDLQCmd(e, g),
		newSecretCmd(e, g),
		newVerifyCmd(e, g),
		newResumeCmd(e, g),
		newEmailCmd(e, g),
		newDestinationsCmd(e, g),
		newListenCmd(e, g),
		newEgressCmd(e, g),
		newTraceCmd(e, g),
		newEndpointsCmd(e, g),
	)
	return root
}

// noArgs is cobra.NoArgs as a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		if cmd.HasSubCommands() {
			return usagef("unknown command %q for %q", args[0], cmd.CommandPath())
		}
		return usagef("%s takes no arguments, got %q", cmd.CommandPath(), args)
	}
	return nil
}

// exactArgs is cobra.ExactArgs as a usage error.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s needs %s", cmd.CommandPath(), what)
		}
		return nil
	}
}

// awsConfig loads the SDK's default configuration chain, with --region.
func (g *globals) awsConfig(ctx context.Context) (aws.Config, error) {
	var opts []func(*awsconfig.LoadOptions) error
	if g.region != "" {
		opts = append(opts, awsconfig.WithRegion(g.region))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS config: %w", err)
	}
	return cfg, nil
}
