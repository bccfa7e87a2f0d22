package decodeproc

import (
	"time"

	"go.uber.org/zap"
)

// Defaults of Config.
const (
	// DefaultProcesses is the default number of decoder processes.
	DefaultProcesses = 2

	// DefaultMemoryLimit is the default RLIMIT_DATA of a decoder process:
	// room for a 4K H.265 decoder and its pictures with the Go runtime
	// (a 720p process uses about 60 MB of data), and a bound a malformed
	// stream cannot pass.
	DefaultMemoryLimit = 768 << 20

	// DefaultTimeout is the default deadline of one request.
	DefaultTimeout = 15 * time.Second

	// DefaultStartTimeout is the default time a new process has to say it
	// is ready.
	DefaultStartTimeout = 10 * time.Second

	// DefaultIdleTimeout is how long a process may go without a request
	// before the pool stops it: a node's thumbnails come in a burst once a
	// minute, and starting a process costs a few tens of milliseconds.
	DefaultIdleTimeout = 30 * time.Second
)

// Config configures a Pool.
type Config struct {
	// Command starts a decoder process: the vigia binary and Subcommand
	// (tests use their own binary, whose TestMain calls Main). The Pool
	// adds --memory (and --test-ops). Empty: decoding is unavailable.
	Command []string

	// Processes is the number of decoder processes, each answering one
	// request at a time; requests wait for a free one. They are started
	// at the first request. It defaults to DefaultProcesses.
	Processes int

	// MemoryLimit is each process's RLIMIT_DATA in bytes: past it,
	// allocations fail and the process dies or refuses the request. It
	// defaults to DefaultMemoryLimit; negative disables it.
	MemoryLimit int64

	// Timeout bounds one request (a request's context may shorten it):
	// a process that has not answered by then is killed. It defaults to
	// DefaultTimeout.
	Timeout time.Duration

	// StartTimeout bounds a new process's start. It defaults to
	// DefaultStartTimeout.
	StartTimeout time.Duration

	// IdleTimeout is how long a process may go without a request before
	// the pool stops it (the next request starts another). It defaults to
	// DefaultIdleTimeout; negative keeps idle processes.
	IdleTimeout time.Duration

	// TestOps starts the processes with --test-ops, so that tests can make
	// them crash, hang or allocate. Never set outside tests.
	TestOps bool

	// Log is the component's logger. It defaults to a no-op logger.
	Log *zap.Logger
}

func (c Config) withDefaults() Config {
	if c.Processes <= 0 {
		c.Processes = DefaultProcesses
	}
	switch {
	case c.MemoryLimit == 0:
		c.MemoryLimit = DefaultMemoryLimit
	case c.MemoryLimit < 0:
		c.MemoryLimit = 0
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.StartTimeout <= 0 {
		c.StartTimeout = DefaultStartTimeout
	}
	switch {
	case c.IdleTimeout == 0:
		c.IdleTimeout = DefaultIdleTimeout
	case c.IdleTimeout < 0:
		c.IdleTimeout = 0
	}
	if c.Log == nil {
		c.Log = zap.NewNop()
	}
	return c
}
