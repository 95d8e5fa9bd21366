// Package clamp is mutatecover's test input: a switch whose case
// expressions and a constant Go's coverage has no block for.
package clamp

import "strconv"

const limit = 10 * 10

// Clamp returns x limited to [0, limit].
func Clamp(x int) int {
	switch {
	case x < 0:
		return 0
	case x > limit:
		return limit
	}
	return x
}

// Label is Clamp's result in decimal.
func Label(x int) string {
	return strconv.Itoa(Clamp(x))
}
