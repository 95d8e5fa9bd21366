package metrics

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Validate checks that line (one log event, without its newline) is an EMF
// document that CloudWatch extracts, by the rules of the EMF specification
// and CloudWatch's metric limits:
//
//   - the line is one JSON object with nothing before or after it, and no
//     member name twice at its root;
//   - "_aws" is an object with only CloudWatchMetrics (a non-empty array of
//     MetricDirectives) and Timestamp (an integer, milliseconds since the
//     epoch; within MaxTimestampPast and MaxTimestampFuture of now unless
//     now is zero);
//   - a MetricDirective has only Namespace (1 to MaxNameLength ASCII
//     characters, not starting "AWS/"), Dimensions (an array of
//     DimensionSets) and Metrics (1 to MaxMetricsPerDirective
//     MetricDefinitions);
//   - a DimensionSet has at most MaxDimensionsPerSet distinct names, each a
//     root member holding a string of 1 to MaxDimensionValueLength ASCII
//     characters, not all white space;
//   - a MetricDefinition has only Name, Unit (one of Units) and
//     StorageResolution (1 or 60); Name is a root member holding a number
//     or an array of 1 to MaxValuesPerMetric numbers.
//
// It returns the first rule broken, nil when none is.
func Validate(line []byte, now time.Time) error {
	root, err := decodeObject(line)
	if err != nil {
		return err
	}
	rawAWS, ok := root["_aws"]
	if !ok {
		return errors.New(`emf: no "_aws" member`)
	}
	var meta map[string]json.RawMessage
	if err := json.Unmarshal(rawAWS, &meta); err != nil || meta == nil {
		return errors.New(`emf: "_aws" is not an object`)
	}
	for k := range meta {
		if k != "CloudWatchMetrics" && k != "Timestamp" {
			return fmt.Errorf("emf: _aws has unknown member %q", k)
		}
	}
	if err := checkTimestamp(meta["Timestamp"], now); err != nil {
		return err
	}
	var directives []json.RawMessage
	if err := json.Unmarshal(meta["CloudWatchMetrics"], &directives); err != nil || len(directives) == 0 {
		return errors.New("emf: _aws.CloudWatchMetrics is not a non-empty array")
	}
	for i, raw := range directives {
		if err := checkDirective(raw, root); err != nil {
			return fmt.Errorf("emf: CloudWatchMetrics[%d]: %w", i, err)
		}
	}
	return nil
}

// decodeObject decodes one JSON object with nothing after it, rejecting a
// member name that appears twice.
func decodeObject(line []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, errors.New("emf: line is not a JSON object")
	}
	root := map[string]json.RawMessage{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("emf: %w", err)
		}
		name := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("emf: member %q: %w", name, err)
		}
		if _, dup := root[name]; dup {
			return nil, fmt.Errorf("emf: member %q appears twice", name)
		}
		root[name] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("emf: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("emf: data after the JSON object")
	}
	return root, nil
}

func checkTimestamp(raw json.RawMessage, now time.Time) error {
	var ms json.Number
	if err := json.Unmarshal(raw, &ms); err != nil || raw == nil {
		return errors.New("emf: _aws.Timestamp is not a number")
	}
	v, err := ms.Int64()
	if err != nil || v < 0 {
		return fmt.Errorf("emf: _aws.Timestamp %s is not milliseconds since the epoch", ms)
	}
	if now.IsZero() {
		return nil
	}
	t := time.UnixMilli(v)
	if t.Before(now.Add(-MaxTimestampPast)) || t.After(now.Add(MaxTimestampFuture)) {
		return fmt.Errorf("emf: _aws.Timestamp %s is more than 14 days before or 2 hours after %s", t.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return nil
}

func checkDirective(raw json.RawMessage, root map[string]json.RawMessage) error {
	var d map[string]json.RawMessage
	if err := json.Unmarshal(raw, &d); err != nil || d == nil {
		return errors.New("not an object")
	}
	for k := range d {
		if k != "Namespace" && k != "Dimensions" && k != "Metrics" {
			return fmt.Errorf("unknown member %q", k)
		}
	}
	var ns string
	if err := json.Unmarshal(d["Namespace"], &ns); err != nil || d["Namespace"] == nil {
		return errors.New("Namespace is not a string")
	}
	if err := checkName("Namespace", ns); err != nil {
		return err
	}
	if strings.HasPrefix(ns, "AWS/") {
		return fmt.Errorf("Namespace %q: AWS/ is reserved", ns)
	}
	var sets [][]string
	if err := json.Unmarshal(d["Dimensions"], &sets); err != nil || d["Dimensions"] == nil || sets == nil {
		return errors.New("Dimensions is not an array of arrays of strings")
	}
	for i, set := range sets {
		if len(set) > MaxDimensionsPerSet {
			return fmt.Errorf("Dimensions[%d]: %d names, more than %d", i, len(set), MaxDimensionsPerSet)
		}
		for j, name := range set {
			if slices.Contains(set[:j], name) {
				return fmt.Errorf("Dimensions[%d]: %q twice", i, name)
			}
			if err := checkDimension(name, root[name]); err != nil {
				return fmt.Errorf("Dimensions[%d]: %w", i, err)
			}
		}
	}
	var defs []map[string]json.RawMessage
	if err := json.Unmarshal(d["Metrics"], &defs); err != nil || len(defs) == 0 {
		return errors.New("Metrics is not a non-empty array of objects")
	}
	if len(defs) > MaxMetricsPerDirective {
		return fmt.Errorf("Metrics: %d definitions, more than %d", len(defs), MaxMetricsPerDirective)
	}
	for i, def := range defs {
		if err := checkDefinition(def, root); err != nil {
			return fmt.Errorf("Metrics[%d]: %w", i, err)
		}
	}
	return nil
}

func checkDimension(name string, raw json.RawMessage) error {
	if err := checkName("dimension name", name); err != nil {
		return err
	}
	if strings.HasPrefix(name, ":") {
		return fmt.Errorf("dimension name %q starts with a colon", name)
	}
	var v string
	if raw == nil {
		return fmt.Errorf("dimension %q is not a member of the line", name)
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return fmt.Errorf("dimension %q: value %s is not a string", name, raw)
	}
	switch {
	case strings.TrimSpace(v) == "":
		return fmt.Errorf("dimension %q: value is empty or white space", name)
	case len(v) > MaxDimensionValueLength:
		return fmt.Errorf("dimension %q: value longer than %d characters", name, MaxDimensionValueLength)
	case !printableASCII(v):
		return fmt.Errorf("dimension %q: value is not printable ASCII", name)
	}
	return nil
}

func checkDefinition(def map[string]json.RawMessage, root map[string]json.RawMessage) error {
	for k := range def {
		if k != "Name" && k != "Unit" && k != "StorageResolution" {
			return fmt.Errorf("unknown member %q", k)
		}
	}
	var name string
	if err := json.Unmarshal(def["Name"], &name); err != nil || def["Name"] == nil {
		return errors.New("Name is not a string")
	}
	if err := checkName("metric name", name); err != nil {
		return err
	}
	if raw, ok := def["Unit"]; ok {
		var u Unit
		if err := json.Unmarshal(raw, &u); err != nil || !slices.Contains(Units, u) {
			return fmt.Errorf("metric %q: Unit %s is not a CloudWatch unit", name, raw)
		}
	}
	if raw, ok := def["StorageResolution"]; ok {
		if s := string(raw); s != "1" && s != "60" {
			return fmt.Errorf("metric %q: StorageResolution %s is not 1 or 60", name, raw)
		}
	}
	raw, ok := root[name]
	if !ok {
		return fmt.Errorf("metric %q is not a member of the line", name)
	}
	var one float64
	if err := json.Unmarshal(raw, &one); err == nil {
		return nil
	}
	var many []float64
	if err := json.Unmarshal(raw, &many); err != nil || len(many) == 0 {
		return fmt.Errorf("metric %q: value %s is not a number or an array of numbers", name, raw)
	}
	if len(many) > MaxValuesPerMetric {
		return fmt.Errorf("metric %q: %d values, more than %d", name, len(many), MaxValuesPerMetric)
	}
	return nil
}

// checkName checks a namespace, metric or dimension name: 1 to
// MaxNameLength printable ASCII characters.
func checkName(what, s string) error {
	if s == "" || len(s) > MaxNameLength || !printableASCII(s) {
		return fmt.Errorf("%s %q: must be 1 to %d printable ASCII characters", what, s, MaxNameLength)
	}
	return nil
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
