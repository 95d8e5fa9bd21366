package app_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/heraldhq/herald/internal/app"
)

// TestLoggerToLeavesOutWhatLambdaAdds: lines carry no "time" (Lambda
// stamps each event) and INFO lines no "level" (Lambda's default for a
// JSON line without one); other levels, and members of those names inside
// a group, are kept.
func TestLoggerToLeavesOutWhatLambdaAdds(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	l := app.LoggerTo(&buf, slog.LevelDebug)
	ctx := context.Background()
	l.LogAttrs(ctx, slog.LevelInfo, "a", slog.Group("g", slog.String("time", "kept"), slog.String("level", "kept")))
	l.LogAttrs(ctx, slog.LevelWarn, "b")
	l.LogAttrs(ctx, slog.LevelDebug, "c")
	l.LogAttrs(ctx, slog.LevelError, "d")
	require.Equal(t, strings.Join([]string{
		`{"msg":"a","g":{"time":"kept","level":"kept"}}`,
		`{"level":"WARN","msg":"b"}`,
		`{"level":"DEBUG","msg":"c"}`,
		`{"level":"ERROR","msg":"d"}`,
	}, "\n")+"\n", buf.String())

	buf.Reset()
	app.LoggerTo(&buf, slog.LevelWarn).Info("filtered")
	require.Empty(t, buf.String(), "the level still filters")
}
