package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestProfileRoundTrip(t *testing.T) {
	t.Parallel()
	text := "mode: set\n" +
		"example.com/m/a.go:3.14,5.2 1 1\n" +
		"example.com/m/a.go:7.2,7.10 2 0\n"
	p, err := parseProfile(strings.NewReader(text + "\n"))
	require.NoError(t, err)
	require.Equal(t, "set", p.mode)
	require.Equal(t, []block{
		{file: "example.com/m/a.go", start: pos{3, 14}, end: pos{5, 2}, stmts: 1, count: 1},
		{file: "example.com/m/a.go", start: pos{7, 2}, end: pos{7, 10}, stmts: 2, count: 0},
	}, p.blocks)
	var out strings.Builder
	require.NoError(t, p.write(&out))
	require.Equal(t, text, out.String())
}

func TestParseProfileErrors(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ text, err string }{
		"empty":         {"", "profile is empty"},
		"no mode":       {"a.go:1.1,2.2 1 1\n", `profile line 1: want "mode: set|count|atomic"`},
		"no colon":      {"mode: set\na.go 1 1\n", "profile line 2: want"},
		"two fields":    {"mode: set\na.go:1.1,2.2 1\n", "profile line 2: want"},
		"no comma":      {"mode: set\na.go:1.1-2.2 1 1\n", "profile line 2: want"},
		"no dot":        {"mode: set\na.go:1,2.2 1 1\n", "profile line 2: want"},
		"bad start":     {"mode: set\na.go:x.1,2.2 1 1\n", "profile line 2: want"},
		"bad end col":   {"mode: set\na.go:1.1,2.y 1 1\n", "profile line 2: want"},
		"bad stmts":     {"mode: set\na.go:1.1,2.2 s 1\n", "profile line 2: want"},
		"bad count":     {"mode: set\na.go:1.1,2.2 1 c\n", "profile line 2: want"},
		"line too long": {"mode: set\n" + strings.Repeat("x", 2*1024*1024) + "\n", "read profile"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			_, err := parseProfile(strings.NewReader(tc.text))
			require.ErrorContains(t, err, tc.err)
		})
	}
}

func TestPosBefore(t *testing.T) {
	t.Parallel()
	require.True(t, pos{1, 9}.before(pos{2, 1}))
	require.True(t, pos{2, 1}.before(pos{2, 2}))
	require.False(t, pos{2, 2}.before(pos{2, 2}))
	require.False(t, pos{2, 3}.before(pos{2, 2}))
	require.False(t, pos{3, 1}.before(pos{2, 9}))
}
