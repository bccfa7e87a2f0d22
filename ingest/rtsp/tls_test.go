package rtsp

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"testing"
	"time"

	"github.com/vigia/vigia/ingest"
)

// selfSigned returns a certificate for 127.0.0.1 that no authority
// issued, as cameras come with.
func selfSigned(t *testing.T) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "camera"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// TestRTSPSUntrustedCertificate: an rtsps camera whose certificate no
// trusted authority issued fails at once with ERRO PERMANENTE "certificate
// not trusted", over either transport: retrying will not fix it. Before,
// it was retried with backoff as a camera offline.
func TestRTSPSUntrustedCertificate(t *testing.T) {
	for _, tr := range []string{"tcp", "udp"} {
		t.Run(tr, func(t *testing.T) {
			cam := newScriptedCamera(t)
			cam.ln = tls.NewListener(cam.ln, &tls.Config{Certificates: []tls.Certificate{selfSigned(t)}})
			cam.start()
			s := New(ingest.Camera{ID: "c", URL: "rtsps://" + cam.ln.Addr().String() + "/cam", Transport: tr},
				ingest.SourceConfig{ReadTimeout: 2 * time.Second}, nil)
			s.allowed = onlyHost(cam.ln.Addr().String())
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := s.Run(ctx, &unitSink{})
			pe, ok := ingest.IsPermanent(err)
			if !ok || pe.Reason != ingest.ReasonTLS {
				t.Fatalf("run ended with %v, want a permanent failure %q", err, ingest.ReasonTLS)
			}
		})
	}
}
