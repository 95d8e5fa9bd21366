package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of herald's spans.
const ScopeName = "github.com/heraldhq/herald/internal/tracing"

// ExportTimeout bounds one export of a batch of spans, retries included:
// an invocation waits for its spans' export (Handler) before it returns,
// and a slow or unreachable endpoint must not hold deliveries back.
const ExportTimeout = 2 * time.Second

// Tracing is the deliver function's tracer and the provider that exports
// its spans. A nil *Tracing is tracing off: every method is then a no-op
// and builds nothing.
type Tracing struct {
	provider *sdktrace.TracerProvider
	tracer   trace.Tracer
	// cold is true until the first invocation (faas.coldstart).
	cold atomic.Bool
}

// Options adjust New.
type Options struct {
	// Credentials sign the XRay exporter's requests (SigV4), in Region,
	// whose X-Ray endpoint is the default. Required for XRay.
	Credentials aws.CredentialsProvider
	Region      string
	// HTTPClient sends the exports; nil is a client of its own. The
	// XRay mode wraps its transport to sign each request.
	HTTPClient *http.Client
}

// New builds tracing from cfg (LoadConfig's): nil and no error when
// cfg.Mode is Off. The provider batches spans; Handler exports them before
// each invocation returns.
func New(ctx context.Context, cfg Config, opts Options) (*Tracing, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Mode == Off {
		return nil, nil
	}
	client := opts.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: ExportTimeout}
	}
	if cfg.Mode == XRay {
		switch {
		case opts.Credentials == nil:
			return nil, errors.New("tracing: xray needs AWS credentials to sign its exports")
		case opts.Region == "":
			return nil, fmt.Errorf("tracing: %s=xray needs an AWS Region (AWS_REGION): the X-Ray endpoint's and SigV4's", EnvTracing)
		}
		if cfg.Endpoint == "" {
			cfg.Endpoint = XRayEndpoint(opts.Region)
		}
		signed := *client
		signed.Transport = newSigV4Transport(transportOf(client), opts.Credentials, opts.Region)
		client = &signed
	}
	exp := &exporter{endpoint: cfg.Endpoint, client: client}
	attrs := []attribute.KeyValue{KeyServiceName.String(cfg.ServiceName), KeyCloudProvider.String("aws"), KeyFaaSName.String(cfg.ServiceName)}
	if opts.Region != "" {
		attrs = append(attrs, KeyCloudRegion.String(opts.Region))
	}
	ratio := sdktrace.TraceIDRatioBased(cfg.SampleRatio)
	provider := sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp, sdktrace.WithExportTimeout(ExportTimeout)),
		sdktrace.WithResource(resource.NewSchemaless(attrs...)),
		// The ratio decides a trace's root, also under Lambda's own trace
		// header (Tracing: Active), whose sampling follows X-Ray's rules,
		// not this ratio; spans within an invocation follow their parent.
		sdktrace.WithSampler(sdktrace.ParentBased(ratio,
			sdktrace.WithRemoteParentSampled(ratio),
			sdktrace.WithRemoteParentNotSampled(ratio))),
	)
	t := &Tracing{provider: provider, tracer: provider.Tracer(ScopeName)}
	t.cold.Store(true)
	return t, nil
}

// Tracer returns herald's tracer; a no-op tracer when t is nil.
func (t *Tracing) Tracer() trace.Tracer {
	if t == nil {
		return noopTracer
	}
	return t.tracer
}

// Flush exports the spans ended so far, within ctx.
func (t *Tracing) Flush(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.ForceFlush(ctx)
}

// Shutdown flushes and stops the provider.
func (t *Tracing) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

func transportOf(c *http.Client) http.RoundTripper {
	if c.Transport != nil {
		return c.Transport
	}
	return http.DefaultTransport
}
