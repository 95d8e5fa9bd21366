package app

import (
	"runtime"
	"strconv"
	"strings"
)

// MemoryPerVCPU is the Lambda memory size that comes with one full vCPU:
// "At 1,769 MB, a function has the equivalent of one vCPU (one vCPU-second
// of credits per second)", and proportionally less below
// (https://docs.aws.amazon.com/lambda/latest/dg/configuration-memory.html).
const MemoryPerVCPU = 1769

// LambdaProcs returns the GOMAXPROCS that fits a function of memoryMB: the
// vCPUs its memory size pays for, rounded up, at least 1 and at most
// numCPU (what the execution environment shows). It returns 0, meaning
// "leave Go's default", when memoryMB is not a positive whole number (not
// under Lambda).
func LambdaProcs(memoryMB string, numCPU int) int {
	mb, err := strconv.Atoi(strings.TrimSpace(memoryMB))
	if err != nil || mb <= 0 {
		return 0
	}
	return min(max((mb+MemoryPerVCPU-1)/MemoryPerVCPU, 1), numCPU)
}

// TuneRuntime sets GOMAXPROCS to [LambdaProcs] of the function's memory
// size (AWS_LAMBDA_FUNCTION_MEMORY_SIZE), unless the GOMAXPROCS variable
// sets it. The execution environment shows more vCPUs (two at small memory
// sizes) than a function below 1,769 MB gets the time of: with GOMAXPROCS
// at that count, Go's scheduler keeps a second processor spinning for work
// around each wait (the next invocation, a response), CPU time billed in
// the function's duration and worth nothing. It returns the value set, or 0
// when it left Go's default.
func TuneRuntime(getenv func(string) string) int {
	if getenv("GOMAXPROCS") != "" {
		return 0
	}
	n := LambdaProcs(getenv("AWS_LAMBDA_FUNCTION_MEMORY_SIZE"), runtime.NumCPU())
	if n > 0 {
		runtime.GOMAXPROCS(n)
	}
	return n
}
