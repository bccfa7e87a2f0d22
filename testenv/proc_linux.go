package testenv

import (
	"os/exec"
	"syscall"
)

// setProcAttr makes the child die with the test process.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
