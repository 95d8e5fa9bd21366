package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatchlogs"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/heraldhq/herald/internal/localenv"
	"github.com/heraldhq/herald/internal/redrive"
)

// deployedStack is a stack deployed into the local stack (make deploy-local):
// LocalStack's own event source mapping feeds its deliver function, which
// runs on this machine under the Lambda Runtime Interface Emulator
// (localstack/lambda-executor).
type deployedStack struct {
	name     string
	queueURL string
	dlqURL   string
	function string
	lambda   *lambda.Client
	logs     *cloudwatchlogs.Client
	// env is the function's environment as deployed, put back by restore.
	env map[string]string
}

func openStack(ctx context.Context, awsCfg aws.Config, name string) (*deployedStack, error) {
	out, err := cloudformation.NewFromConfig(awsCfg).DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(name)})
	if err != nil {
		return nil, fmt.Errorf("stack %s (deploy it with make deploy-local): %w", name, err)
	}
	if len(out.Stacks) != 1 {
		return nil, fmt.Errorf("stack %s: %d stacks found", name, len(out.Stacks))
	}
	d := &deployedStack{name: name, lambda: lambda.NewFromConfig(awsCfg), logs: cloudwatchlogs.NewFromConfig(awsCfg)}
	for _, o := range out.Stacks[0].Outputs {
		switch aws.ToString(o.OutputKey) {
		case "NotificationQueueUrl":
			d.queueURL = aws.ToString(o.OutputValue)
		case "DeadLetterQueueUrl":
			d.dlqURL = aws.ToString(o.OutputValue)
		case "DeliverFunctionName":
			d.function = aws.ToString(o.OutputValue)
		}
	}
	if d.queueURL == "" || d.dlqURL == "" || d.function == "" {
		return nil, fmt.Errorf("stack %s lacks the outputs NotificationQueueUrl, DeadLetterQueueUrl or DeliverFunctionName", name)
	}
	fn, err := d.lambda.GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: aws.String(d.function)})
	if err != nil {
		return nil, err
	}
	if fn.Environment != nil {
		d.env = fn.Environment.Variables
	}
	return d, nil
}

// demoEnv is the deployed function's environment with the demo's settings,
// those the in-process run uses (run): backoff from 1 s, webhooks and chat
// webhooks to the demo's receivers on 127.0.0.1 whose certificate certFile
// holds, DEBUG lines (each names its SQS message id, which the fates are
// keyed on), and no delivered-once window: the demo sends the same ids on
// every run, which the store would settle as duplicates, as the in-process
// demo keeps no store either. A new value of HERALD_WEBHOOK_SECRET_VERSION makes LocalStack
// start fresh execution environments, as in Lambda.
func demoEnv(deployed map[string]string, certFile string, now time.Time) map[string]string {
	env := maps.Clone(deployed)
	if env == nil {
		env = map[string]string{}
	}
	maps.Copy(env, map[string]string{
		"HERALD_BACKOFF_BASE_SECONDS":          strconv.Itoa(int(demoBackoffBase.Seconds())),
		"HERALD_BACKOFF_CAP_SECONDS":           strconv.Itoa(int(demoBackoffCap.Seconds())),
		"HERALD_WEBHOOK_TIMEOUT_MS":            strconv.FormatInt(demoWebhookTimeout.Milliseconds(), 10),
		"HERALD_WEBHOOK_ALLOW_CIDRS":           demoAllowCIDR,
		"HERALD_CHAT_ALLOW_HOSTS":              demoChatHost,
		"HERALD_LOG_LEVEL":                     "DEBUG",
		"HERALD_DELIVERED_ONCE_WINDOW_SECONDS": "0",
		"SSL_CERT_FILE":                        certFile,
		"HERALD_WEBHOOK_SECRET_VERSION":        "demo-" + strconv.FormatInt(now.Unix(), 10),
	})
	return env
}

// configure gives the function env and waits until the update is done.
func (d *deployedStack) configure(ctx context.Context, env map[string]string) error {
	_, err := d.lambda.UpdateFunctionConfiguration(ctx, &lambda.UpdateFunctionConfigurationInput{
		FunctionName: aws.String(d.function), Environment: &lambdatypes.Environment{Variables: env},
	})
	if err != nil {
		return fmt.Errorf("configure %s: %w", d.function, err)
	}
	w := lambda.NewFunctionUpdatedV2Waiter(d.lambda, func(o *lambda.FunctionUpdatedV2WaiterOptions) {
		o.MinDelay, o.MaxDelay = 200*time.Millisecond, time.Second
	})
	return w.Wait(ctx, &lambda.GetFunctionInput{FunctionName: aws.String(d.function)}, time.Minute)
}

// restore puts the function's deployed environment back.
func (d *deployedStack) restore(ctx context.Context) error { return d.configure(ctx, d.env) }

// readLog returns the function's lines in LocalStack's CloudWatch Logs
// (/aws/lambda/<function>, where LocalStack writes each invocation's output).
func (d *deployedStack) readLog(ctx context.Context) ([]string, error) {
	group := "/aws/lambda/" + d.function
	streams, err := d.logs.DescribeLogStreams(ctx, &cloudwatchlogs.DescribeLogStreamsInput{LogGroupName: aws.String(group)})
	if err != nil {
		return nil, nil // no invocation finished yet
	}
	var lines []string
	for _, s := range streams.LogStreams {
		var token *string
		for {
			page, err := d.logs.GetLogEvents(ctx, &cloudwatchlogs.GetLogEventsInput{
				LogGroupName: aws.String(group), LogStreamName: s.LogStreamName, StartFromHead: aws.Bool(true), NextToken: token,
			})
			if err != nil {
				return nil, err
			}
			for _, e := range page.Events {
				lines = append(lines, strings.TrimRight(aws.ToString(e.Message), "\n"))
			}
			if len(page.Events) == 0 || aws.ToString(page.NextForwardToken) == aws.ToString(token) {
				break
			}
			token = page.NextForwardToken
		}
	}
	return lines, nil
}

// watch reads the function's log into fresh fates every 500 ms until every
// sample's fate is final or the deadline passes, writes the lines of this
// run's messages to logPath and returns the fates.
func (d *deployedStack) watch(ctx context.Context, samples []*sample, deadline time.Time, logPath string) (*fates, error) {
	ids := map[string]bool{}
	for _, s := range samples {
		ids[s.msgID] = true
	}
	for {
		lines, err := d.readLog(ctx)
		if err != nil {
			return nil, err
		}
		f := newFates()
		var mine bytes.Buffer
		for _, l := range lines {
			var m map[string]any
			if json.Unmarshal([]byte(l), &m) != nil {
				continue
			}
			if id, _ := m["sqs_message_id"].(string); ids[id] {
				_, _ = f.Write([]byte(l))
				mine.WriteString(l + "\n")
			}
		}
		if f.allFinal(samples) || time.Now().After(deadline) {
			return f, os.WriteFile(logPath, mine.Bytes(), 0o644)
		}
		select {
		case <-ctx.Done():
			return f, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// runDeployed sends the samples to the stack's queue and reads their fates
// from its deliver function's log. Meanwhile the function runs with the
// demo's settings (demoEnv); its deployed environment is put back at the end.
func runDeployed(ctx context.Context, stdout io.Writer, stack *deployedStack, samples []*sample, receiver *localenv.Receiver, sqsClient *sqs.Client,
	dlqName string, maxReceive int, logPath string, started time.Time, timeout time.Duration,
) error {
	// The function runs in a directory of its own: the path must be absolute.
	certFile, err := filepath.Abs(filepath.Join(filepath.Dir(logPath), "demo-receivers.pem"))
	if err != nil {
		return err
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: receiver.Certificate().Raw}), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "herald demo: %d notifications → %s of stack %s, delivered by its function %s through LocalStack's event source mapping (maxReceiveCount %d, backoff 1 s doubling)\n\n",
		len(samples), path.Base(stack.queueURL), stack.name, stack.function, maxReceive)
	if err := stack.configure(ctx, demoEnv(stack.env, certFile, time.Now())); err != nil {
		return err
	}
	defer func() {
		if err := stack.restore(context.Background()); err != nil {
			fmt.Fprintf(os.Stderr, "herald-demo: could not put back the deployed environment of %s: %v\n", stack.function, err)
		}
	}()
	for _, s := range samples {
		out, err := sqsClient.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(stack.queueURL), MessageBody: aws.String(s.body)})
		if err != nil {
			return fmt.Errorf("send %s: %w", s.name, err)
		}
		s.msgID = aws.ToString(out.MessageId)
	}
	f, err := stack.watch(ctx, samples, time.Now().Add(timeout), logPath)
	if err != nil {
		return err
	}
	return finish(ctx, stdout, samples, f, nil, receiver, sqsClient, []redrive.Queue{{URL: stack.queueURL, DeadLetterURL: stack.dlqURL}}, logPath, started)
}
