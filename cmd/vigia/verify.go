package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"go.uber.org/zap"

	"github.com/vigia/vigia/app"
	"github.com/vigia/vigia/config"
	"github.com/vigia/vigia/integrity"
)

const verifyUsage = `usage: vigia verify --config FILE --camera ID --from FROM --to TO (stored segments against their manifests)`

// errVerifyFailed is returned when verification found a problem.
var errVerifyFailed = errors.New("verification failed")

// runVerify implements `vigia verify`.
func runVerify(args []string, stdout io.Writer) error {
	own := map[string]string{"camera": "", "from": "", "to": ""}
	var rest []string
	for i := 0; i < len(args); i++ {
		name, val, hasVal := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if _, ok := own[name]; !ok || !strings.HasPrefix(args[i], "-") {
			rest = append(rest, args[i])
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return fmt.Errorf("--%s needs a value; %s", name, verifyUsage)
			}
			i++
			val = args[i]
		}
		own[name] = val
	}
	for _, k := range []string{"camera", "from", "to"} {
		if own[k] == "" {
			return fmt.Errorf("--%s is required; %s", k, verifyUsage)
		}
	}
	from, err := parseExportTime(own["from"])
	if err != nil {
		return fmt.Errorf("--from: %w", err)
	}
	to, err := parseExportTime(own["to"])
	if err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	cfg, err := config.Load(rest, os.Environ())
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	store, err := app.OpenStore(ctx, cfg, zap.NewNop())
	if err != nil {
		return err
	}
	rep, err := integrity.Verify(ctx, store, own["camera"], from, to)
	if err != nil {
		return err
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(stdout, "%s\t%s\t%s\n", strings.ToUpper(p.Kind), p.Key, p.Detail)
	}
	fmt.Fprintf(stdout, "%d manifests, %d segments checked, %d expired by quota, %d problems\n",
		rep.Manifests, rep.Segments, rep.Expired, len(rep.Problems))
	if !rep.OK() {
		return errVerifyFailed
	}
	return nil
}
