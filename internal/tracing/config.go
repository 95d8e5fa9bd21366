package tracing

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// The deliver function's tracing variables (docs/configuration.md).
const (
	// EnvTracing selects the exporter: off, xray or otlp. Defaults to off.
	EnvTracing = "HERALD_TRACING"
	// EnvEndpoint is the OTLP/HTTP traces URL. Required for otlp; for
	// xray it defaults to X-Ray's endpoint in AWS_REGION.
	EnvEndpoint = "HERALD_TRACING_ENDPOINT"
	// EnvSampleRatio is the share of invocations traced, 0 to 1.
	EnvSampleRatio = "HERALD_TRACING_SAMPLE_RATIO"
)

// Mode is where spans go.
type Mode string

// The modes of EnvTracing.
const (
	// Off builds nothing: no exporter, no tracer, no wrapper.
	Off Mode = "off"
	// XRay exports to X-Ray's OTLP traces endpoint, signed with SigV4.
	XRay Mode = "xray"
	// OTLP exports to Endpoint unsigned (a collector; a test's receiver).
	OTLP Mode = "otlp"
)

// DefaultSampleRatio is Config.SampleRatio's default: one invocation in a
// hundred. With batches of 10 that is 1,000 traces per million
// notifications, $0.005 at X-Ray's $5.00 per million traces recorded
// (docs/benchmarks.md, "Tracing").
const DefaultSampleRatio = 0.01

// Config configures tracing.
type Config struct {
	// Mode is where spans go. Defaults to Off.
	Mode Mode
	// Endpoint is the OTLP/HTTP traces URL (…/v1/traces). Defaults to
	// XRayEndpoint of the AWS configuration's Region for XRay (New);
	// required for OTLP.
	Endpoint string
	// SampleRatio is the share of invocations traced, from 0 to 1: the
	// invocation's trace id decides, and its records and calls follow it.
	// Defaults to DefaultSampleRatio.
	SampleRatio float64
	// ServiceName names the spans' service (service.name): the deliver
	// function gives its name (AWS_LAMBDA_FUNCTION_NAME). Defaults to
	// "herald-deliver".
	ServiceName string
}

// XRayEndpoint is X-Ray's OTLP traces endpoint in region.
func XRayEndpoint(region string) string {
	return "https://xray." + region + ".amazonaws.com/v1/traces"
}

// LoadConfig reads EnvTracing, EnvEndpoint and EnvSampleRatio, applies
// the defaults and validates. Its errors name the variable and what it
// allows.
func LoadConfig(getenv func(string) string) (Config, error) {
	c := Config{
		Mode:        Mode(strings.ToLower(strings.TrimSpace(getenv(EnvTracing)))),
		Endpoint:    strings.TrimSpace(getenv(EnvEndpoint)),
		SampleRatio: -1,
	}
	if v := strings.TrimSpace(getenv(EnvSampleRatio)); v != "" {
		r, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return Config{}, fmt.Errorf("%s %q: not a number; give a ratio from 0 to 1", EnvSampleRatio, v)
		}
		c.SampleRatio = r
		if r < 0 {
			return Config{}, fmt.Errorf("%s %q: must be from 0 to 1", EnvSampleRatio, v)
		}
	}
	c = c.WithDefaults()
	return c, c.Validate()
}

// WithDefaults returns c with its unset fields at their defaults; a
// negative SampleRatio stands for unset.
func (c Config) WithDefaults() Config {
	if c.Mode == "" {
		c.Mode = Off
	}
	if c.SampleRatio < 0 {
		c.SampleRatio = DefaultSampleRatio
	}
	if c.ServiceName == "" {
		c.ServiceName = "herald-deliver"
	}
	return c
}

// Validate returns an error naming the first variable out of range.
func (c Config) Validate() error {
	switch c.Mode {
	case Off:
		return nil
	case XRay:
	case OTLP:
		if c.Endpoint == "" {
			return fmt.Errorf("%s=otlp: %s is required (an OTLP/HTTP traces URL, …/v1/traces)", EnvTracing, EnvEndpoint)
		}
	default:
		return fmt.Errorf("%s %q: must be off, xray or otlp", EnvTracing, c.Mode)
	}
	if c.SampleRatio < 0 || c.SampleRatio > 1 {
		return fmt.Errorf("%s %v: must be from 0 to 1", EnvSampleRatio, c.SampleRatio)
	}
	if c.Endpoint == "" {
		return nil // XRay's: New sets it from the Region
	}
	u, err := url.Parse(c.Endpoint)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		// The URL itself is not echoed: an operator's collector URL may
		// carry a token.
		return fmt.Errorf("%s: must be an absolute http(s) URL", EnvEndpoint)
	}
	if c.Mode == XRay && u.Scheme != "https" {
		return fmt.Errorf("%s: X-Ray's endpoint is https", EnvEndpoint)
	}
	return nil
}
