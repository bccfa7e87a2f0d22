package decodeproc

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// proc is one decoder process, serving one request at a time. Only kill
// may be called from another goroutine.
type proc struct {
	cmd    *exec.Cmd
	in     *os.File // its standard input, our end
	out    *os.File // its standard output, our end
	w      *bufio.Writer
	r      *bufio.Reader
	stderr *tail
	done   chan struct{} // closed once it has exited and been waited for
	hello  hello
	nextID uint32
	cpu    atomic.Int64 // the CPU time it reported last, ns
}

// stderrTail is how much of a process's standard error is kept.
const stderrTail = 2048

// startProc starts a decoder process and waits for its hello. It is
// started from a goroutine of its own: the process is killed when the
// thread that started it ends (Pdeathsig), and a goroutine that locked
// its thread could end it.
func startProc(cfg Config) (*proc, error) {
	type started struct {
		p   *proc
		err error
	}
	ch := make(chan started, 1)
	go func() {
		p, err := spawn(cfg)
		ch <- started{p, err}
	}()
	s := <-ch
	if s.err != nil {
		return nil, s.err
	}
	p := s.p
	t := time.AfterFunc(cfg.StartTimeout, p.kill)
	h, payload, err := readFrame(p.r, nil)
	expired := !t.Stop()
	switch {
	case expired:
		err = fmt.Errorf("no hello within %v", cfg.StartTimeout)
	case err == nil && h.typ != frameHello:
		err = fmt.Errorf("%w: frame type %d before hello", ErrProtocol, h.typ)
	case err == nil:
		p.hello, err = parseHello(payload)
	}
	if err != nil {
		p.kill()
		p.close()
		return nil, fmt.Errorf("%w: %v%s", ErrStart, err, p.exitText())
	}
	return p, nil
}

// spawn starts the process with an empty environment in / and its own
// process group, with pipes for its standard input and output.
func spawn(cfg Config) (*proc, error) {
	args := append(slices.Clone(cfg.Command[1:]), "--memory", strconv.FormatInt(cfg.MemoryLimit, 10))
	if cfg.TestOps {
		args = append(args, "--test-ops")
	}
	cmd := exec.Command(cfg.Command[0], args...)
	cmd.Env = []string{}
	cmd.Dir = "/"
	setProcAttr(cmd)
	inR, inW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrStart, err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		inR.Close()
		inW.Close()
		return nil, fmt.Errorf("%w: %v", ErrStart, err)
	}
	p := &proc{cmd: cmd, in: inW, out: outR, stderr: newTail(stderrTail), done: make(chan struct{})}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, p.stderr
	err = cmd.Start()
	inR.Close()
	outW.Close()
	if err != nil {
		inW.Close()
		outR.Close()
		return nil, fmt.Errorf("%w: %v", ErrStart, err)
	}
	p.w = bufio.NewWriterSize(inW, 64<<10)
	p.r = bufio.NewReaderSize(outR, 64<<10)
	go func() { // exits when the process does
		_ = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// pid is the process id.
func (p *proc) pid() int { return p.cmd.Process.Pid }

// kill kills the process and its group.
func (p *proc) kill() { killGroup(p.cmd) }

// exited reports whether the process has exited.
func (p *proc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// close waits for the killed or exiting process and releases the pipes.
func (p *proc) close() {
	<-p.done
	p.in.Close()
	p.out.Close()
}

// cpuTime is the process's CPU time: exact once it has exited, else what
// it reported last.
func (p *proc) cpuTime() time.Duration {
	if p.exited() && p.cmd.ProcessState != nil {
		return p.cmd.ProcessState.UserTime() + p.cmd.ProcessState.SystemTime()
	}
	return time.Duration(p.cpu.Load())
}

// exitText describes how an exited process ended, with the end of its
// standard error; empty while it runs.
func (p *proc) exitText() string {
	if !p.exited() || p.cmd.ProcessState == nil {
		return ""
	}
	s := "; " + p.cmd.ProcessState.String()
	if e := strings.TrimSpace(p.stderr.String()); e != "" {
		s += "; stderr: " + e
	}
	return s
}

// failure is a request that cost the process: why it was killed.
type failure struct {
	reason string
	err    error
}

func (f *failure) Error() string { return f.reason + ": " + f.err.Error() }
func (f *failure) Unwrap() error { return f.err }

// call sends one request (written by write with the id given) and reads
// its reply, within timeout and ctx. An error frame is returned as the
// error it reports. Anything else that goes wrong leaves the process out
// of step: the process is killed and a *failure says why.
func (p *proc) call(ctx context.Context, timeout time.Duration, write func(w *bufio.Writer, id uint32) error) (header, []byte, error) {
	p.nextID++
	id := p.nextID
	var expired, canceled atomic.Bool
	t := time.AfterFunc(timeout, func() { expired.Store(true); p.kill() })
	stop := context.AfterFunc(ctx, func() { canceled.Store(true); p.kill() })
	h, payload, err := p.exchange(id, write)
	t.Stop()
	stop()
	switch {
	case expired.Load():
		return h, nil, &failure{ReasonTimeout, fmt.Errorf("no answer within %v", timeout)}
	case canceled.Load():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return h, nil, &failure{ReasonTimeout, fmt.Errorf("no answer before the request's deadline")}
		}
		return h, nil, &failure{ReasonCanceled, ctx.Err()}
	case err != nil && errors.Is(err, ErrProtocol):
		p.kill()
		return h, nil, &failure{ReasonProtocol, err}
	case err != nil:
		// The pipe broke or ended: the process died. Wait for it to
		// tell how.
		p.kill()
		<-p.done
		reason := ReasonCrash
		if p.stderr.outOfMemory() {
			reason = ReasonMemory
		}
		return h, nil, &failure{reason, fmt.Errorf("%v%s", err, p.exitText())}
	case h.typ == frameError:
		remote, cpu, perr := parseError(payload)
		if perr != nil {
			p.kill()
			return h, nil, &failure{ReasonProtocol, perr}
		}
		p.cpu.Store(int64(cpu))
		return h, nil, remote
	}
	return h, payload, nil
}

// exchange writes a request and reads the reply with the same id.
func (p *proc) exchange(id uint32, write func(w *bufio.Writer, id uint32) error) (header, []byte, error) {
	if err := write(p.w, id); err != nil {
		return header{}, nil, err
	}
	h, payload, err := readFrame(p.r, nil)
	if err == nil && h.id != id {
		err = fmt.Errorf("%w: reply to request %d, want %d", ErrProtocol, h.id, id)
	}
	return h, payload, err
}
