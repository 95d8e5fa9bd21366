package main

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
)

// The emulator's own lines among a function's output: its timestamped
// "(rapid)" lines and the START, END and REPORT lines Lambda writes for
// every invocation. Lambda's platform lines are the same for every
// implementation and are left out of the log bytes a function writes.
var emulatorLine = regexp.MustCompile(`^(\d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2},\d{3} \[\w+\] \(rapid\)|(START|END|REPORT) RequestId: )`)

// functionLines returns the lines the function itself wrote in logs (the
// emulator's combined output), each without its newline.
func functionLines(logs string) []string {
	var out []string
	for _, l := range strings.Split(logs, "\n") {
		if l != "" && !emulatorLine.MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

// functionLogBytes is how many bytes the function wrote in logs, newlines
// included: what CloudWatch Logs would ingest of its own output.
func functionLogBytes(logs string) int {
	n := 0
	for _, l := range functionLines(logs) {
		n += len(l) + 1
	}
	return n
}

// metricSeries adds to seen every custom metric the function's EMF lines in
// logs define: one per metric name and dimension set with its values, the
// unit CloudWatch bills per month.
func metricSeries(logs string, seen map[string]bool) {
	for _, l := range functionLines(logs) {
		if !strings.Contains(l, `"_aws"`) {
			continue
		}
		var root map[string]json.RawMessage
		if json.Unmarshal([]byte(l), &root) != nil {
			continue
		}
		var meta struct {
			CloudWatchMetrics []struct {
				Namespace  string
				Dimensions [][]string
				Metrics    []struct{ Name string }
			}
		}
		if json.Unmarshal(root["_aws"], &meta) != nil {
			continue
		}
		for _, d := range meta.CloudWatchMetrics {
			for _, set := range d.Dimensions {
				dims := make([]string, 0, len(set))
				for _, name := range set {
					var v string
					_ = json.Unmarshal(root[name], &v)
					dims = append(dims, name+"="+v)
				}
				slices.Sort(dims)
				for _, m := range d.Metrics {
					seen[d.Namespace+"/"+m.Name+"{"+strings.Join(dims, ",")+"}"] = true
				}
			}
		}
	}
}
