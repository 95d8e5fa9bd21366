package delivery

import (
	"fmt"
	"slices"
	"sync"
)

// classes is every class declared with NewClass.
var classes = struct {
	sync.Mutex
	set map[Class]bool
}{set: map[Class]bool{}}

// NewClass declares the error class name and returns it. Every class herald
// can write into a log line, a metric's error_class dimension or a dead
// letter's reason is declared this way, once, by the package that owns it,
// so that Classes lists them all: docs/operations.md has a runbook row for
// each, and a test fails when one is missing. It panics when name is
// declared twice or is empty: a class has one home.
func NewClass(name string) Class {
	if name == "" {
		panic("delivery.NewClass: empty class name")
	}
	c := Class(name)
	classes.Lock()
	defer classes.Unlock()
	if classes.set[c] {
		panic(fmt.Sprintf("delivery.NewClass: class %q declared twice", name))
	}
	classes.set[c] = true
	return c
}

// Classes returns every class declared with NewClass by the packages linked
// into the program, sorted.
func Classes() []Class {
	classes.Lock()
	defer classes.Unlock()
	out := make([]Class, 0, len(classes.set))
	for c := range classes.set {
		out = append(out, c)
	}
	slices.Sort(out)
	return out
}

// originDown is every class declared with NewOriginDownClass.
var originDown = struct {
	sync.Mutex
	set map[Class]bool
}{set: map[Class]bool{}}

// NewOriginDownClass declares, as NewClass does, a class of transient
// failure that says the destination's origin (scheme, host, port) is down
// rather than that one notification was refused: no response (timeout,
// DNS, connection, TLS), a 5xx, a 408 or a 429. Consecutive failures of
// these classes open the origin's circuit (docs/operations.md,
// "Destination states"); any other failure leaves it as it is.
func NewOriginDownClass(name string) Class {
	c := NewClass(name)
	originDown.Lock()
	defer originDown.Unlock()
	originDown.set[c] = true
	return c
}

// OriginDown reports whether c was declared with NewOriginDownClass.
func OriginDown(c Class) bool {
	originDown.Lock()
	defer originDown.Unlock()
	return originDown.set[c]
}
