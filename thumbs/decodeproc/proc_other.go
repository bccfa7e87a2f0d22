//go:build !linux

package decodeproc

import (
	"errors"
	"os/exec"
)

// setProcAttr does nothing outside Linux.
func setProcAttr(*exec.Cmd) {}

// killGroup kills the process.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

// residentBytes is not known outside Linux.
func residentBytes(int) (int64, error) {
	return 0, errors.New("resident set not known on this system")
}
