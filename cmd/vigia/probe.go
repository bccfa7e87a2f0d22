package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// runProbe implements `vigia probe URL`: a GET that succeeds on a 2xx
// answer within 5 s. Container health checks use it (the image has no
// curl).
func runProbe(args []string, stdout io.Writer) error {
	if len(args) != 1 {
		return errors.New("usage: vigia probe URL")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, args[0], nil)
	if err != nil {
		return err
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 1<<20))
	if res.StatusCode < 200 || res.StatusCode > 299 {
		return fmt.Errorf("%s: %s", args[0], res.Status)
	}
	fmt.Fprintf(stdout, "%s: %s\n", args[0], res.Status)
	return nil
}
