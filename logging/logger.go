// Package logging builds the zap loggers used by every component and keeps
// secrets out of them: camera URLs and signed URLs are logged through
// RedactURL, which removes passwords and token-like query parameters.
//
// Loggers are built once by the command and handed to each component, tagged
// with Component and Camera fields; there is no package-level logger.
package logging

import (
	"fmt"
	"io"
	"os"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// Log formats accepted by New.
const (
	FormatJSON    = "json"    // one JSON object per line (the default)
	FormatConsole = "console" // human-readable, colourless
)

// New returns a logger writing to standard error at the given level
// ("debug", "info", "warn", "error", ...) in the given format ("json",
// "console", or "" for JSON).
func New(level, format string) (*zap.Logger, error) {
	return NewWriter(os.Stderr, level, format)
}

// NewWriter is New writing to w instead of standard error. Writes to w are
// serialised by the logger.
func NewWriter(w io.Writer, level, format string) (*zap.Logger, error) {
	lvl, err := ParseLevel(level)
	if err != nil {
		return nil, err
	}
	enc, err := newEncoder(format)
	if err != nil {
		return nil, err
	}
	core := zapcore.NewCore(enc, zapcore.Lock(zapcore.AddSync(w)), lvl)
	return zap.New(core,
		zap.AddCaller(),
		zap.AddStacktrace(zapcore.ErrorLevel),
		zap.ErrorOutput(zapcore.Lock(zapcore.AddSync(w))),
	), nil
}

// ParseLevel parses a level name (case-insensitive; "" is info); the error
// names the rejected level.
func ParseLevel(level string) (zapcore.Level, error) {
	lvl, err := zapcore.ParseLevel(level)
	if err != nil {
		return 0, fmt.Errorf("logging: %w %q", ErrInvalidLevel, level)
	}
	return lvl, nil
}

func newEncoder(format string) (zapcore.Encoder, error) {
	switch format {
	case "", FormatJSON:
		cfg := zap.NewProductionEncoderConfig()
		cfg.EncodeTime = zapcore.ISO8601TimeEncoder
		cfg.EncodeDuration = zapcore.StringDurationEncoder
		return zapcore.NewJSONEncoder(cfg), nil
	case FormatConsole:
		cfg := zap.NewDevelopmentEncoderConfig()
		cfg.EncodeLevel = zapcore.CapitalLevelEncoder
		return zapcore.NewConsoleEncoder(cfg), nil
	default:
		return nil, fmt.Errorf("logging: %w %q (want json or console)", ErrInvalidFormat, format)
	}
}
