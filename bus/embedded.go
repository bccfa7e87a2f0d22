package bus

import (
	"fmt"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"go.uber.org/zap"
)

// embeddedReadyTimeout bounds how long Open waits for the embedded server.
const embeddedReadyTimeout = 10 * time.Second

// startEmbedded starts a nats-server with JetStream on listen (host:port, port
// 0 = free port) storing in storeDir, and waits until it accepts clients. A
// non-empty token is required from clients; at most maxConns are served.
// nats-server's other bounds stay at its defaults: 1 MiB messages, 4 KiB
// protocol lines, 2 s to authenticate, 64 MiB pending per client before
// it is cut as a slow consumer, 10 s write deadline.
func startEmbedded(listen, storeDir, token string, maxConns int, log *zap.Logger) (*server.Server, error) {
	host, port, err := splitListen(listen)
	if err != nil {
		return nil, err
	}
	sopts := &server.Options{
		ServerName:    "vigia-embedded",
		Host:          host,
		Port:          port,
		JetStream:     true,
		StoreDir:      storeDir,
		Authorization: token,
		MaxConn:       maxConns,
		NoSigs:        true,
	}
	srv, err := server.NewServer(sopts)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEmbedded, err)
	}
	srv.SetLoggerV2(serverLogger{log: log.Sugar()}, false, false, false)
	srv.Start()
	if !srv.ReadyForConnections(embeddedReadyTimeout) {
		srv.Shutdown()
		srv.WaitForShutdown()
		return nil, fmt.Errorf("%w: not ready on %s within %s", ErrEmbedded, listen, embeddedReadyTimeout)
	}
	return srv, nil
}

// serverLogger routes nats-server logs to zap. Notices (the startup banner and
// routine messages) go to debug; fatal errors are logged, never exit.
type serverLogger struct {
	log *zap.SugaredLogger
}

// Noticef logs a routine server message at debug level.
func (l serverLogger) Noticef(format string, v ...any) { l.log.Debugf(format, v...) }

// Warnf logs a server warning.
func (l serverLogger) Warnf(format string, v ...any) { l.log.Warnf(format, v...) }

// Fatalf logs a fatal server error at error level.
func (l serverLogger) Fatalf(format string, v ...any) { l.log.Errorf(format, v...) }

// Errorf logs a server error.
func (l serverLogger) Errorf(format string, v ...any) { l.log.Errorf(format, v...) }

// Debugf logs a server debug message.
func (l serverLogger) Debugf(format string, v ...any) { l.log.Debugf(format, v...) }

// Tracef logs a server trace message at debug level.
func (l serverLogger) Tracef(format string, v ...any) { l.log.Debugf(format, v...) }
