package localenv

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel kill cmd when this process ends (the
// parent-death signal): a test binary that panics or is killed (a
// mutant's, a timeout) runs no Stop, and the emulator must not outlive it
// holding its function.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
