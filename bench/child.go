package bench

import (
	"errors"
	"fmt"
	"os/exec"
	"syscall"
	"time"
)

// child is a process started for the run (synthetic cameras, FFmpeg, MinIO).
type child struct {
	name string
	cmd  *exec.Cmd
	out  *outBuffer
	done chan struct{} // closed when the process has exited
	err  error         // Wait's result, set before done is closed
}

// startChild starts cmd with its standard error (and standard output, unless
// the caller took it) kept for error messages. The process is killed if this
// one dies.
func startChild(name string, cmd *exec.Cmd) (*child, error) {
	c := &child{name: name, cmd: cmd, out: newOutBuffer(16 << 10), done: make(chan struct{})}
	if cmd.Stdout == nil {
		cmd.Stdout = c.out
	}
	cmd.Stderr = c.out
	setProcAttr(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() { // exits when the process does
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// pid returns the process id.
func (c *child) pid() int { return c.cmd.Process.Pid }

// exited reports whether the process has exited.
func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stop asks the process to exit (SIGTERM), kills it after grace, and waits.
func (c *child) stop(grace time.Duration) {
	if c.exited() {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
		_ = c.cmd.Process.Kill()
		<-c.done
	}
}

// exitError describes how the process ended, with the tail of its output.
func (c *child) exitError() error {
	err := c.err
	if err == nil {
		err = errors.New("exited")
	}
	return fmt.Errorf("%s: %w; output:\n%s", c.name, err, c.out.String())
}
