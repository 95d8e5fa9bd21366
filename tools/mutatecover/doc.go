// Command mutatecover widens a Go coverage profile with the expressions that
// control certainly evaluated but that Go's coverage has no block for, so that
// gremlins (github.com/go-gremlins/gremlins, v0.6.0) stops reporting their
// mutants as not covered although the tests run them.
//
// Go's cover tool (cmd/cover) counts statements: a switch ends its block at
// its opening brace and each clause body gets a block of its own starting
// after the clause's colon, so a case expression, a select case's channel and
// value expressions, a package-level constant's value and a package-level
// variable's initializer lie in no block. gremlins v0.6.0 takes the blocks of
// the profile with a count above 0 and counts a mutant as covered when its
// position lies in one of them (internal/coverage in gremlins); a mutant
// anywhere else is "not covered".
//
// mutatecover adds a block (0 statements, count 1) for each such expression
// that the profile proves was evaluated:
//
//   - a case expression of an expression or type switch, when a later
//     clause's body ran (every expression of the earlier clauses was then
//     evaluated and false), when the default clause's body ran (all of them
//     were), when no clause can leave the switch except by a return, panic or
//     continue, the switch has no default and the statement after it ran (no
//     clause matched, so all were evaluated), or, for the first expression of
//     a clause, when the clause's own body ran. A body entered through the
//     previous clause's fallthrough proves nothing.
//   - the channel and value expressions of a select's cases, when the body of
//     any of its clauses ran: Go evaluates them all, once, on entering select.
//   - a package-level constant's value expression, when the constant is used
//     in a block that ran, in a package-level variable's initializer (below)
//     or in another constant's value expression that is covered: a mutant of
//     the value changes what that code computed.
//   - a package-level variable's initializer, when any block of the package
//     ran: the package was initialised, which evaluates every initializer.
//
// The body of a function literal inside such an expression is left out: it
// has blocks of its own. As in Go's coverage, evaluated means the expression
// was evaluated, not every operand of a short-circuit && or ||.
//
// Usage:
//
//	mutatecover -profile FILE      widen FILE in place (run in the module)
//	go ARGS...                     (invoked through a link named go) run the
//	                               real go, named by MUTATECOVER_GO, with ARGS;
//	                               when ARGS are a go test with -coverprofile
//	                               and it succeeds, widen that profile
//
// scripts/mutate.sh puts a link named go to mutatecover first on PATH for
// gremlins, which runs "go test -cover -coverprofile FILE ./pkg/..." to find
// the covered positions and "go test" again for each mutant (those runs are
// handed to the real go unchanged, by exec). When MUTATECOVER_LOG names a
// file, each widening appends a line there saying what it added. Exit status:
// the real go's, or 1 when the profile cannot be read, parsed or type-checked
// enough to widen.
package main
