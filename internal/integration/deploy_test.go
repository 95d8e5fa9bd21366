//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudformation"
	cfntypes "github.com/aws/aws-sdk-go-v2/service/cloudformation/types"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
	"github.com/heraldhq/herald/internal/config"
	"github.com/heraldhq/herald/internal/redrive"
	"github.com/heraldhq/herald/internal/store"
	"github.com/heraldhq/herald/internal/tracing"
	"github.com/heraldhq/herald/notification"
	"github.com/heraldhq/herald/producer"
)

// deployStackPrefix starts the name of the stack the test deploys, apart
// from the one `make deploy-local` deploys (herald-local). Each run creates
// a stack of its own: LocalStack reports some updates complete without
// applying them (an event source mapping's FunctionResponseTypes, a
// schedule's expression), so only a created stack shows what the template
// builds.
const deployStackPrefix = "herald-it-"

// deployed is what `sam deploy` built, read back through the AWS APIs.
type deployed struct {
	stack     string            // the stack's name
	params    map[string]string // stack parameters, as resolved
	outputs   map[string]string // stack outputs
	resources map[string]cfntypes.StackResourceSummary
	// functions are every function of the stack by logical id.
	functions          map[string]*lambda.GetFunctionConfigurationOutput
	deliver, retention *lambda.GetFunctionConfigurationOutput
}

// physical returns the physical id of the stack's resource logicalID.
func (d deployed) physical(t *testing.T, logicalID string) string {
	t.Helper()
	r, ok := d.resources[logicalID]
	require.True(t, ok, "the stack has no resource %s", logicalID)
	return aws.ToString(r.PhysicalResourceId)
}

// ofType returns the physical ids of the stack's resources of one type.
func (d deployed) ofType(typ string) []string {
	var out []string
	for _, r := range d.resources {
		if aws.ToString(r.ResourceType) == typ {
			out = append(out, aws.ToString(r.PhysicalResourceId))
		}
	}
	slices.Sort(out)
	return out
}

// deployTestParameters are the test stack's parameters beyond those of
// `make deploy-local`: retries within seconds (three receives, backoff 1 s
// then 2 s), the shortest function timeout, and webhooks to loopback allowed
// (a receiver that is down).
const deployTestParameters = `MaxReceiveCount="3" BackoffBaseSeconds="1" BackoffCapSeconds="2" ` +
	`FunctionTimeoutSeconds="15" WebhookAllowCidrs="127.0.0.1/32" WebhookTimeoutMs="2000"`

// TestDeployedStack deploys template.yaml into the local stack as `make
// deploy-local` does (sam build, sam deploy) and checks what was built
// against what herald's code expects: the queues (herald's own queue check,
// with the deployed function timeout), the event source mapping, both
// functions' environments against the configuration loaders, the retention
// schedule, every alarm's metric, and the outputs. Then the stack runs:
// LocalStack's own event source mapping, schedule and rule invoke the
// deployed functions (deployed_run_test.go).
func TestDeployedStack(t *testing.T) {
	t.Parallel()
	require.NotEmpty(t, os.Getenv("AWS_ENDPOINT_URL"), "run the integration tests with `make test`, which starts the local stack")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)

	awsCfg, err := app.AWSConfig(ctx)
	require.NoError(t, err)
	sqsc, lambdac, cfn := sqs.NewFromConfig(awsCfg), lambda.NewFromConfig(awsCfg), cloudformation.NewFromConfig(awsCfg)
	stack := deployStackPrefix + randHex(3)
	t.Cleanup(func() { // not waited for: the local stack is thrown away anyway
		_, _ = cfn.DeleteStack(context.Background(), &cloudformation.DeleteStackInput{StackName: aws.String(stack)})
	})
	start := time.Now()
	deployLocal(ctx, t, stack, deployTestParameters)
	t.Logf("scripts/deploy-local.sh (sam build + sam deploy) took %s", time.Since(start).Round(time.Millisecond))
	d := readStack(ctx, t, cfn, lambdac, stack)

	// The deployed environments load, and name exactly what the loaders read.
	deliverCfg, deliverRead := loadRecorded(d.deliver.Environment.Variables, config.LoadDeliver)
	require.NoError(t, deliverCfg.err, "the deployed DeliverFunction's environment loads")
	// The deliver function's second loader: its tracing (off by default).
	tracingCfg, tracingRead := loadRecorded(d.deliver.Environment.Variables, tracing.LoadConfig)
	require.NoError(t, tracingCfg.err, "the deployed DeliverFunction's tracing settings load")
	require.Equal(t, tracing.Off, tracingCfg.v.Mode, "Tracing Off, the default")
	maps.Copy(deliverRead, tracingRead)
	retentionCfg, retentionRead := loadRecorded(d.retention.Environment.Variables, config.LoadRetention)
	require.NoError(t, retentionCfg.err, "the deployed RetentionFunction's environment loads")
	feedbackCfg, feedbackRead := loadRecorded(d.functions["FeedbackFunction"].Environment.Variables, config.LoadFeedback)
	require.NoError(t, feedbackCfg.err, "the deployed FeedbackFunction's environment loads")
	fanoutCfg, fanoutRead := loadRecorded(d.functions["FanoutFunction"].Environment.Variables, config.LoadFanout)
	require.NoError(t, fanoutCfg.err, "the deployed FanoutFunction's environment loads")
	require.Equal(t, d.outputs["EventQueueUrl"], fanoutCfg.v.EventQueue.URL)
	require.Equal(t, d.outputs["EventDeadLetterQueueUrl"], fanoutCfg.v.EventQueue.DeadLetterURL)
	endpointsCfg, endpointsRead := loadRecorded(d.functions["EndpointsFunction"].Environment.Variables, config.LoadEndpointsAPI)
	require.NoError(t, endpointsCfg.err, "the deployed EndpointsFunction's environment loads")
	read := map[string]map[string]bool{"DeliverFunction": deliverRead, "RetentionFunction": retentionRead, "FeedbackFunction": feedbackRead, "FanoutFunction": fanoutRead, "EndpointsFunction": endpointsRead}
	for logical, fn := range d.functions {
		require.Contains(t, read, logical, "function %s has no configuration loader in this test", logical)
		requireEnvMatchesLoader(t, logical, fn.Environment.Variables, read[logical])
	}
	dc := deliverCfg.v

	t.Run("queues", func(t *testing.T) {
		// Each channel's queue and dead-letter queue, and the queue of
		// every channel (SharedQueue Keep, the default).
		logical := map[notification.Channel][2]string{"": {"NotificationQueue", "DeadLetterQueue"}}
		for _, c := range config.DeliverChannels {
			name := strings.ToUpper(string(c)[:1]) + string(c)[1:]
			logical[c] = [2]string{name + "Queue", name + "DeadLetterQueue"}
		}
		require.Len(t, dc.AllQueues(), len(config.DeliverChannels)+1, "every delivered channel's queue and the queue of every channel")
		require.ElementsMatch(t, append(dc.DeadLetterQueueURLs(), d.outputs["EventDeadLetterQueueUrl"]), retentionCfg.v.DeadLetterQueueURLs,
			"retention sweeps the deliver function's dead-letter queues and the event queue's")
		timeout := time.Duration(aws.ToInt32(d.deliver.Timeout)) * time.Second
		require.Equal(t, d.params["FunctionTimeoutSeconds"], strconv.Itoa(int(timeout.Seconds())))
		// herald's cold-start check, told the function's timeout, which
		// the function itself cannot know at cold start: redrive policy to
		// the dead-letter queue with maxReceiveCount = HERALD_MAX_RECEIVE_COUNT,
		// retry schedule within the retention, dead letters kept longer,
		// visibility timeout at least 6 x the function timeout.
		require.NoError(t, app.CheckQueues(ctx, dc, awsCfg, timeout))
		require.Equal(t, d.params["MaxReceiveCount"], strconv.Itoa(dc.MaxReceiveCount))

		for _, q := range dc.AllQueues() {
			require.Equal(t, d.physical(t, logical[q.Channel][0]), q.URL, "channel %q", q.Channel)
			require.Equal(t, d.physical(t, logical[q.Channel][1]), q.DeadLetterURL, "channel %q", q.Channel)
			main := queueAttributes(ctx, t, sqsc, q.URL)
			dlq := queueAttributes(ctx, t, sqsc, q.DeadLetterURL)
			var redrive struct {
				DeadLetterTargetArn string `json:"deadLetterTargetArn"`
				MaxReceiveCount     int    `json:"maxReceiveCount"`
			}
			require.NoError(t, json.Unmarshal([]byte(main["RedrivePolicy"]), &redrive))
			require.Equal(t, dlq["QueueArn"], redrive.DeadLetterTargetArn, "channel %q: its own dead-letter queue", q.Channel)
			require.Equal(t, dc.MaxReceiveCount, redrive.MaxReceiveCount)
			var allow struct {
				RedrivePermission string   `json:"redrivePermission"`
				SourceQueueArns   []string `json:"sourceQueueArns"`
			}
			require.NoError(t, json.Unmarshal([]byte(dlq["RedriveAllowPolicy"]), &allow))
			require.Equal(t, "byQueue", allow.RedrivePermission)
			require.Equal(t, []string{main["QueueArn"]}, allow.SourceQueueArns, "only its own queue may dead-letter into it")
			// The retention function keeps dead letters HERALD_DLQ_MAX_AGE_HOURS;
			// SQS must not drop them first.
			dlqRetention, err := strconv.Atoi(dlq["MessageRetentionPeriod"])
			require.NoError(t, err)
			require.GreaterOrEqual(t, time.Duration(dlqRetention)*time.Second, retentionCfg.v.MaxAge)
		}
	})

	t.Run("store", func(t *testing.T) {
		// The table the function writes its delivered-once records to:
		// the stack's, on-demand, with time to live on the attribute
		// package store writes.
		require.True(t, dc.DeliveredOnce())
		require.Equal(t, d.physical(t, "StoreTable"), dc.StoreTable)
		require.Equal(t, d.outputs["StoreTableName"], dc.StoreTable)
		ddb := dynamodb.NewFromConfig(awsCfg)
		tbl, err := ddb.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(dc.StoreTable)})
		require.NoError(t, err)
		require.Equal(t, ddbtypes.BillingModePayPerRequest, tbl.Table.BillingModeSummary.BillingMode)
		ttl, err := ddb.DescribeTimeToLive(ctx, &dynamodb.DescribeTimeToLiveInput{TableName: aws.String(dc.StoreTable)})
		require.NoError(t, err)
		require.Equal(t, store.AttrExpiresAt, aws.ToString(ttl.TimeToLiveDescription.AttributeName))
		require.Equal(t, ddbtypes.TimeToLiveStatusEnabled, ttl.TimeToLiveDescription.TimeToLiveStatus)
	})

	t.Run("event source mappings", func(t *testing.T) {
		out, err := lambdac.ListEventSourceMappings(ctx, &lambda.ListEventSourceMappingsInput{FunctionName: d.deliver.FunctionName})
		require.NoError(t, err)
		require.Len(t, out.EventSourceMappings, len(dc.AllQueues()), "one mapping per queue")
		concurrency := map[notification.Channel]string{"": d.params["MaximumConcurrency"]}
		for _, c := range config.DeliverChannels {
			concurrency[c] = d.params[strings.ToUpper(string(c)[:1])+string(c)[1:]+"MaximumConcurrency"]
		}
		for _, q := range dc.AllQueues() {
			m := mappingOf(ctx, t, lambdac, d, q.URL)
			// herald answers with a partial batch response; without
			// ReportBatchItemFailures Lambda would retry the whole batch.
			require.Contains(t, m.FunctionResponseTypes, lambdatypes.FunctionResponseTypeReportBatchItemFailures)
			require.Equal(t, d.params["BatchSize"], strconv.Itoa(int(aws.ToInt32(m.BatchSize))))
			require.Equal(t, d.params["MaximumBatchingWindowInSeconds"], strconv.Itoa(int(aws.ToInt32(m.MaximumBatchingWindowInSeconds))))
			require.NotNil(t, m.ScalingConfig, "the mapping has a ScalingConfig")
			require.NotEmpty(t, concurrency[q.Channel])
			require.Equal(t, concurrency[q.Channel], strconv.Itoa(int(aws.ToInt32(m.ScalingConfig.MaximumConcurrency))), "channel %q: its own MaximumConcurrency", q.Channel)
		}
	})

	t.Run("retention schedule", func(t *testing.T) {
		eb := eventbridge.NewFromConfig(awsCfg)
		var schedules []*eventbridge.DescribeRuleOutput
		for _, name := range d.ofType("AWS::Events::Rule") {
			rule, err := eb.DescribeRule(ctx, &eventbridge.DescribeRuleInput{Name: aws.String(name)})
			require.NoError(t, err)
			if aws.ToString(rule.ScheduleExpression) != "" {
				schedules = append(schedules, rule)
			}
		}
		require.Len(t, schedules, 1, "one schedule: RetentionFunction's")
		rule := schedules[0]
		require.Equal(t, "ENABLED", string(rule.State))
		// A dead letter outlives HERALD_DLQ_MAX_AGE_HOURS by at most one
		// interval: no more than the variable's unit, an hour.
		every := rateInterval(t, aws.ToString(rule.ScheduleExpression))
		require.Greater(t, every, time.Duration(0))
		require.LessOrEqual(t, every, time.Hour)
		targets, err := eb.ListTargetsByRule(ctx, &eventbridge.ListTargetsByRuleInput{Rule: rule.Name})
		require.NoError(t, err)
		require.Len(t, targets.Targets, 1)
		require.Equal(t, aws.ToString(d.retention.FunctionArn), aws.ToString(targets.Targets[0].Arn))
	})

	t.Run("feedback dead letters", func(t *testing.T) {
		// SES events not logged are kept: the rule's target retries and
		// then dead-letters what it cannot deliver, and the function's
		// failed asynchronous invocations go to the same queue.
		dlqArn := queueAttributes(ctx, t, sqsc, d.physical(t, "FeedbackDeadLetterQueue"))["QueueArn"]
		require.Equal(t, d.physical(t, "FeedbackDeadLetterQueue"), d.outputs["FeedbackDeadLetterQueueUrl"])
		eb := eventbridge.NewFromConfig(awsCfg)
		targets, err := eb.ListTargetsByRule(ctx, &eventbridge.ListTargetsByRuleInput{Rule: aws.String(d.physical(t, "FeedbackFunctionEmailEvents"))})
		require.NoError(t, err)
		require.Len(t, targets.Targets, 1)
		target := targets.Targets[0]
		require.Equal(t, aws.ToString(d.functions["FeedbackFunction"].FunctionArn), aws.ToString(target.Arn))
		require.NotNil(t, target.DeadLetterConfig)
		require.Equal(t, dlqArn, aws.ToString(target.DeadLetterConfig.Arn))
		require.NotNil(t, target.RetryPolicy)
		require.Positive(t, aws.ToInt32(target.RetryPolicy.MaximumRetryAttempts))
		fn := d.functions["FeedbackFunction"]
		require.NotNil(t, fn.DeadLetterConfig)
		require.Equal(t, dlqArn, aws.ToString(fn.DeadLetterConfig.TargetArn))
	})

	t.Run("alarms", func(t *testing.T) {
		names := d.ofType("AWS::CloudWatch::Alarm")
		t.Logf("%d alarms in the stack", len(names))
		if len(names) == 0 {
			return // nothing to check until the template has alarms
		}
		namespace, emitted := emittedMetrics(t)
		out, err := cloudwatch.NewFromConfig(awsCfg).DescribeAlarms(ctx, &cloudwatch.DescribeAlarmsInput{AlarmNames: names})
		require.NoError(t, err)
		require.Len(t, out.MetricAlarms, len(names), "every alarm of the stack is a metric alarm")
		for _, a := range out.MetricAlarms {
			metrics := map[string]string{} // name -> namespace
			if a.MetricName != nil {
				metrics[aws.ToString(a.MetricName)] = aws.ToString(a.Namespace)
			}
			for _, q := range a.Metrics {
				if q.MetricStat != nil && q.MetricStat.Metric != nil {
					metrics[aws.ToString(q.MetricStat.Metric.MetricName)] = aws.ToString(q.MetricStat.Metric.Namespace)
				}
			}
			require.NotEmpty(t, metrics, "alarm %s watches no metric", aws.ToString(a.AlarmName))
			for name, ns := range metrics {
				if strings.HasPrefix(ns, "AWS/") {
					continue // a metric AWS publishes (SQS, Lambda, SES, ...)
				}
				require.Equal(t, namespace, ns, "alarm %s: namespace of %s is neither herald's nor an AWS one", aws.ToString(a.AlarmName), name)
				require.True(t, emitted[name], "alarm %s watches %s/%s, which herald does not emit (internal/metrics)", aws.ToString(a.AlarmName), ns, name)
			}
		}
	})

	t.Run("outputs", func(t *testing.T) {
		require.Equal(t, dc.QueueURL, d.outputs["NotificationQueueUrl"])
		require.Equal(t, dc.DeadLetterQueueURL, d.outputs["DeadLetterQueueUrl"])
		require.Equal(t, queueAttributes(ctx, t, sqsc, dc.QueueURL)["QueueArn"], d.outputs["NotificationQueueArn"])
		require.Equal(t, queueAttributes(ctx, t, sqsc, dc.DeadLetterQueueURL)["QueueArn"], d.outputs["DeadLetterQueueArn"])
		// Every channel's queue is named by the outputs producers read
		// (producer.QueueOutput).
		for _, q := range dc.Queues {
			require.Equal(t, q.URL, d.outputs[producer.QueueOutput(q.Channel)])
			require.Equal(t, q.DeadLetterURL, d.outputs[producer.DeadLetterQueueOutput(q.Channel)])
			require.Equal(t, queueAttributes(ctx, t, sqsc, q.URL)["QueueArn"], d.outputs[strings.TrimSuffix(producer.QueueOutput(q.Channel), "Url")+"Arn"])
		}
		require.Equal(t, aws.ToString(d.deliver.FunctionName), d.outputs["DeliverFunctionName"])
		require.Equal(t, aws.ToString(d.retention.FunctionName), d.outputs["RetentionFunctionName"])
		require.Equal(t, aws.ToString(d.functions["FeedbackFunction"].FunctionName), d.outputs["FeedbackFunctionName"])
		require.Equal(t, d.physical(t, "FeedbackFunctionLogGroup"), d.outputs["FeedbackFunctionLogGroupName"])
		require.Equal(t, dc.EmailConfigurationSet, d.outputs["EmailConfigurationSetName"], "the configuration set output is the one the deliver function uses")
		require.Equal(t, d.physical(t, "AlarmTopic"), d.outputs["AlarmTopicArn"])
		require.Equal(t, d.physical(t, "Dashboard"), d.outputs["DashboardName"])
		require.Equal(t, dc.WebhookSecretARN, d.outputs["WebhookSigningSecretArn"])
		sec, err := secretsmanager.NewFromConfig(awsCfg).GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(dc.WebhookSecretARN)})
		require.NoError(t, err, "the signing secret the function is given exists")
		require.True(t, strings.HasPrefix(aws.ToString(sec.SecretString), "whsec_"))
		for k, v := range d.outputs {
			require.NotEmpty(t, v, "output %s is empty", k)
		}
	})

	// The stack at work: LocalStack's event source mapping, schedule and
	// rule invoke the deployed functions (LAMBDA_RUNTIME_EXECUTOR=herald-host).
	t.Run("runs in LocalStack", func(t *testing.T) {
		t.Run("schedule runs retention", func(t *testing.T) {
			t.Parallel()
			scheduleRunsRetention(ctx, t, awsCfg, d)
		})
		t.Run("invoke", func(t *testing.T) {
			t.Parallel()
			invokeDirectly(ctx, t, awsCfg, d)
		})
		t.Run("SES event reaches feedback", func(t *testing.T) {
			t.Parallel()
			sesEventReachesFeedback(ctx, t, awsCfg, d)
		})
		t.Run("feedback replay as documented", func(t *testing.T) {
			t.Parallel()
			feedbackReplayAsDocumented(ctx, t, awsCfg, d)
		})
		t.Run("deliver", func(t *testing.T) {
			t.Parallel()
			r := newDeployedRun(ctx, t, awsCfg, d)
			t.Run("mixed batch", r.mixedBatch)
			t.Run("broken secret pauses", r.brokenSecretPauses)
		})
	})
}

// deployMu lets one deployLocal run at a time.
var deployMu sync.Mutex

// deployLocal runs scripts/deploy-local.sh against the stack the tests use
// (the ports are those of AWS_ENDPOINT_URL and AWS_ENDPOINT_URL_SESV2), with
// parameters, Key="Value" words, beyond its own.
func deployLocal(ctx context.Context, t *testing.T, stack, parameters string) {
	t.Helper()
	// sam build writes one .aws-sam/build of the repository: two deploys at
	// once (TestDeployedStack, TestDeployedStaticEgress) would build into
	// each other's ("Template file not found", seen under load).
	deployMu.Lock()
	defer deployMu.Unlock()
	cmd := exec.CommandContext(ctx, filepath.Join(repoRoot, "scripts", "deploy-local.sh"))
	cmd.Dir = repoRoot
	cmd.Env = append(os.Environ(),
		"HERALD_STACK_NAME="+stack, "HERALD_DEPLOY_PARAMETERS="+parameters,
		"LOCALSTACK_PORT="+portOf(t, os.Getenv("AWS_ENDPOINT_URL")),
		"SES_PORT="+portOf(t, os.Getenv("AWS_ENDPOINT_URL_SESV2")))
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "scripts/deploy-local.sh:\n%s", out)
}

func portOf(t *testing.T, endpoint string) string {
	t.Helper()
	u, err := url.Parse(endpoint)
	require.NoError(t, err)
	require.NotEmpty(t, u.Port(), "endpoint %q has no port", endpoint)
	return u.Port()
}

// readStack reads the stack's status, parameters, outputs, resources and
// both functions' configurations.
func readStack(ctx context.Context, t *testing.T, cfn *cloudformation.Client, lambdac *lambda.Client, stack string) deployed {
	t.Helper()
	out, err := cfn.DescribeStacks(ctx, &cloudformation.DescribeStacksInput{StackName: aws.String(stack)})
	require.NoError(t, err)
	require.Len(t, out.Stacks, 1)
	s := out.Stacks[0]
	require.Contains(t, []cfntypes.StackStatus{cfntypes.StackStatusCreateComplete, cfntypes.StackStatusUpdateComplete}, s.StackStatus,
		"stack %s: %s", stack, aws.ToString(s.StackStatusReason))
	d := deployed{stack: stack, params: map[string]string{}, outputs: map[string]string{}, resources: map[string]cfntypes.StackResourceSummary{}}
	for _, p := range s.Parameters {
		d.params[aws.ToString(p.ParameterKey)] = aws.ToString(p.ParameterValue)
	}
	for _, o := range s.Outputs {
		d.outputs[aws.ToString(o.OutputKey)] = aws.ToString(o.OutputValue)
	}
	pages := cloudformation.NewListStackResourcesPaginator(cfn, &cloudformation.ListStackResourcesInput{StackName: aws.String(stack)})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		require.NoError(t, err)
		for _, r := range page.StackResourceSummaries {
			require.Contains(t, []cfntypes.ResourceStatus{cfntypes.ResourceStatusCreateComplete, cfntypes.ResourceStatusUpdateComplete}, r.ResourceStatus,
				"resource %s: %s", aws.ToString(r.LogicalResourceId), aws.ToString(r.ResourceStatusReason))
			d.resources[aws.ToString(r.LogicalResourceId)] = r
			if reason := aws.ToString(r.ResourceStatusReason); strings.Contains(reason, "not supported") {
				// LocalStack's placeholder: recorded as created, nothing built.
				t.Logf("not built by LocalStack: %s (%s): %s", aws.ToString(r.LogicalResourceId), aws.ToString(r.ResourceType), reason)
			}
		}
	}
	d.functions = map[string]*lambda.GetFunctionConfigurationOutput{}
	for logical, r := range d.resources {
		if aws.ToString(r.ResourceType) != "AWS::Lambda::Function" {
			continue
		}
		c, err := lambdac.GetFunctionConfiguration(ctx, &lambda.GetFunctionConfigurationInput{FunctionName: r.PhysicalResourceId})
		require.NoError(t, err)
		require.Equal(t, lambdatypes.StateActive, c.State, "%s: %s", logical, aws.ToString(c.StateReason))
		require.NotNil(t, c.Environment, "%s has no environment", logical)
		d.functions[logical] = c
	}
	d.deliver, d.retention = d.functions["DeliverFunction"], d.functions["RetentionFunction"]
	require.NotNil(t, d.deliver, "the stack has no DeliverFunction")
	require.NotNil(t, d.retention, "the stack has no RetentionFunction")
	require.NotNil(t, d.functions["FeedbackFunction"], "the stack has no FeedbackFunction")
	return d
}

type loaded[T any] struct {
	v   T
	err error
}

// loadRecorded runs a configuration loader on env and returns what it
// loaded and every variable name it read: the loader is the one list of
// the variables a function reads.
func loadRecorded[T any](env map[string]string, load func(func(string) string) (T, error)) (loaded[T], map[string]bool) {
	read := map[string]bool{}
	v, err := load(func(name string) string { read[name] = true; return env[name] })
	return loaded[T]{v, err}, read
}

// requireEnvMatchesLoader checks that a function's environment sets every
// variable its loader reads (but those config.TemplateLeavesUnset names)
// and nothing else (but config.SetButNotRead).
func requireEnvMatchesLoader(t *testing.T, function string, env map[string]string, read map[string]bool) {
	t.Helper()
	for name := range read {
		if slices.Contains(config.TemplateLeavesUnset, name) {
			_, set := env[name]
			require.False(t, set, "%s sets %s, which config.TemplateLeavesUnset says the template leaves to its default", function, name)
			continue
		}
		_, set := env[name]
		require.True(t, set, "%s's configuration loader reads %s, which the template does not set", function, name)
	}
	for name := range env {
		require.True(t, read[name] || slices.Contains(config.SetButNotRead, name),
			"%s is given %s, which its configuration loader does not read (a typo, or a setting that does nothing)", function, name)
	}
}

func queueAttributes(ctx context.Context, t *testing.T, c *sqs.Client, queueURL string) map[string]string {
	t.Helper()
	out, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(queueURL), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	require.NoError(t, err)
	return out.Attributes
}

// mappingOf returns the deliver function's one event source mapping from
// the queue queueURL.
func mappingOf(ctx context.Context, t *testing.T, c *lambda.Client, d deployed, queueURL string) lambdatypes.EventSourceMappingConfiguration {
	t.Helper()
	out, err := c.ListEventSourceMappings(ctx, &lambda.ListEventSourceMappingsInput{FunctionName: d.deliver.FunctionName})
	require.NoError(t, err)
	var found []lambdatypes.EventSourceMappingConfiguration
	for _, m := range out.EventSourceMappings {
		if redrive.QueueKey(aws.ToString(m.EventSourceArn)) == redrive.QueueKey(queueURL) {
			found = append(found, m)
		}
	}
	require.Len(t, found, 1, "DeliverFunction has one event source mapping from %s", queueURL)
	return found[0]
}

var rateExpr = regexp.MustCompile(`^rate\((\d+) (minute|minutes|hour|hours|day|days)\)$`)

// rateInterval is the interval of an EventBridge rate expression
// (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-scheduled-rule-pattern.html).
func rateInterval(t *testing.T, expr string) time.Duration {
	t.Helper()
	m := rateExpr.FindStringSubmatch(expr)
	require.NotNil(t, m, "schedule %q is not a rate expression", expr)
	n, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	unit := map[string]time.Duration{"minute": time.Minute, "hour": time.Hour, "day": 24 * time.Hour}[strings.TrimSuffix(m[2], "s")]
	return time.Duration(n) * unit
}

// emittedMetrics reads package internal/metrics' source: its Namespace
// constant, and its metric names, the exported untyped string constants
// other than Namespace and the dimension names (Dim...). Without the
// package, herald emits no metric of its own.
func emittedMetrics(t *testing.T) (namespace string, names map[string]bool) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(repoRoot, "internal", "metrics", "*.go"))
	require.NoError(t, err)
	require.NotEmpty(t, files, "an alarm watches a herald metric, but there is no package internal/metrics")
	fset := token.NewFileSet()
	names = map[string]bool{}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		require.NoError(t, err)
		for _, decl := range f.Decls {
			g, ok := decl.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, spec := range g.Specs {
				vs := spec.(*ast.ValueSpec)
				if vs.Type != nil {
					continue // typed: units, not names
				}
				for i, id := range vs.Names {
					if i >= len(vs.Values) || !id.IsExported() {
						continue
					}
					lit, ok := vs.Values[i].(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						continue
					}
					v, err := strconv.Unquote(lit.Value)
					require.NoError(t, err)
					switch {
					case id.Name == "Namespace":
						namespace = v
					case !strings.HasPrefix(id.Name, "Dim"):
						names[v] = true
					}
				}
			}
		}
	}
	require.NotEmpty(t, namespace, "package internal/metrics declares no Namespace")
	return namespace, names
}
