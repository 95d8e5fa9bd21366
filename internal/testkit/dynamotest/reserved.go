package dynamotest

import (
	_ "embed"
	"strings"
)

// reservedWords is DynamoDB's list of reserved words (its source is named
// at the top of the file): an expression may not use one as an attribute
// name, only through an expression attribute name.
//
//go:embed reserved_words.txt
var reservedWords string

var reserved = func() map[string]bool {
	m := map[string]bool{}
	for _, l := range strings.Split(reservedWords, "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			m[l] = true
		}
	}
	return m
}()
