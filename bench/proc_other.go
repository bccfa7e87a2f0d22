//go:build !linux

package bench

import (
	"os/exec"
	"time"
)

func setProcAttr(*exec.Cmd) {}

func selfCPU() (time.Duration, error) { return 0, ErrUnsupported }

func procCPU(int) (time.Duration, error) { return 0, ErrUnsupported }

func procRSS(int) (int64, error) { return 0, ErrUnsupported }

func procRSSParts() (int64, int64, error) { return 0, 0, ErrUnsupported }

func pidRSSParts(int) (int64, int64, error) { return 0, 0, ErrUnsupported }

func machineCPU() (time.Duration, error) { return 0, ErrUnsupported }
