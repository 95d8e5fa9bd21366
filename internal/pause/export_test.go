package pause

import "time"

// The tests' fake Lambda finishes an update by the next list: no need to
// wait a second before trying again.
func init() { busyWait = time.Millisecond }
