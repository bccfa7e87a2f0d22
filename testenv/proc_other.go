//go:build !linux

package testenv

import "os/exec"

// setProcAttr does nothing where the child cannot be tied to the parent's death.
func setProcAttr(*exec.Cmd) {}
