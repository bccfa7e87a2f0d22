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

	"github.com/vigia/vigia/app"
	"github.com/vigia/vigia/export"
	"github.com/vigia/vigia/integrity"
	"github.com/vigia/vigia/sign"
)

const verifyUsage = `usage:
  vigia verify --config FILE --camera ID --from FROM --to TO [--key OLD.pem]...
                                                              stored segments against their signed manifests
  vigia verify CLIP MANIFEST --key PUB.pem [--sig FILE]         a downloadable video against its signed manifest`

// errVerifyFailed is returned when verification found a problem.
var errVerifyFailed = errors.New("verification failed")

// runVerify implements `vigia verify`.
func runVerify(args []string, stdout io.Writer) error {
	if len(args) >= 2 && !strings.HasPrefix(args[0], "-") && !strings.HasPrefix(args[1], "-") {
		return runVerifyVideo(args, stdout)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	keyFiles, args, err := takeRepeated(args, "key")
	if err != nil {
		return err
	}
	rc, err := openRange(ctx, args, []string{"camera", "from", "to"}, verifyUsage)
	if err != nil {
		return err
	}
	// The public keys: the current and previous secrets', and the older
	// ones given with --key.
	_, pubs, err := app.ManifestKeys(rc.cfg)
	if err != nil && !errors.Is(err, sign.ErrSecretRequired) {
		return err
	}
	for _, f := range keyFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		pub, err := sign.ParsePublicKeyPEM(b)
		if err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		pubs = append(pubs, pub)
	}
	rep, err := integrity.Verify(ctx, rc.store, rc.own["camera"], rc.from, rc.to, pubs...)
	if err != nil {
		return err
	}
	for _, p := range rep.Problems {
		fmt.Fprintf(stdout, "%s\t%s\t%s\n", strings.ToUpper(p.Kind), p.Key, p.Detail)
	}
	if len(pubs) == 0 {
		fmt.Fprintln(stdout, "signatures not checked: no security.secret and no --key")
	}
	fmt.Fprintf(stdout, "%d manifests (%d signatures verified), %d segments checked, %d expired by quota, %d problems\n",
		rep.Manifests, rep.Signed, rep.Segments, rep.Expired, len(rep.Problems))
	if !rep.OK() {
		return errVerifyFailed
	}
	return nil
}

// takeRepeated takes every --name VALUE (or --name=VALUE) out of args.
func takeRepeated(args []string, name string) (vals, rest []string, err error) {
	for i := 0; i < len(args); i++ {
		n, val, hasVal := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if n != name || !strings.HasPrefix(args[i], "-") {
			rest = append(rest, args[i])
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return nil, nil, fmt.Errorf("--%s needs a value; %s", name, verifyUsage)
			}
			i++
			val = args[i]
		}
		vals = append(vals, val)
	}
	return vals, rest, nil
}

// runVerifyVideo implements `vigia verify CLIP MANIFEST`: the manifest's
// signature (by default MANIFEST with .sig for .json) by the PEM public key,
// then the video's hash.
func runVerifyVideo(args []string, stdout io.Writer) error {
	video, manifest := args[0], args[1]
	keyFile, sigFile := "", strings.TrimSuffix(manifest, ".json")+".sig"
	for i := 2; i < len(args); i++ {
		name, val, hasVal := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !hasVal && i+1 < len(args) {
			i++
			val = args[i]
		}
		switch name {
		case "key":
			keyFile = val
		case "sig":
			sigFile = val
		default:
			return fmt.Errorf("unknown argument %q; %s", args[i], verifyUsage)
		}
	}
	if keyFile == "" {
		return fmt.Errorf("--key is required (the PEM of GET /api/v1/keys/export.pub); %s", verifyUsage)
	}
	pemBytes, err := os.ReadFile(keyFile)
	if err != nil {
		return err
	}
	pub, err := sign.ParsePublicKeyPEM(pemBytes)
	if err != nil {
		return fmt.Errorf("%s: %w", keyFile, err)
	}
	body, err := os.ReadFile(manifest)
	if err != nil {
		return err
	}
	sig, err := os.ReadFile(sigFile)
	if err != nil {
		return err
	}
	f, err := os.Open(video)
	if err != nil {
		return err
	}
	defer f.Close()
	m, err := export.VerifyVideo(f, body, sig, pub)
	if err != nil {
		fmt.Fprintf(stdout, "FAILED\t%s\t%v\n", video, err)
		return errVerifyFailed
	}
	fmt.Fprintf(stdout, "OK\t%s\tcamera %s, %s to %s, %d segments, %d gaps, key %s\n",
		video, m.Camera, m.Start, m.End, len(m.Segments), len(m.Gaps), m.KeyID)
	return nil
}
