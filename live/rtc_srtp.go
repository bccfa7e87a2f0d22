package live

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/pion/dtls/v3"
	"github.com/pion/dtls/v3/pkg/crypto/prf"
	"github.com/pion/dtls/v3/pkg/protocol/extension"
	"github.com/pion/dtls/v3/pkg/protocol/handshake"
	"github.com/pion/rtp"
	"github.com/pion/srtp/v3"
	"github.com/pion/webrtc/v4"
)

// The node seals a session's video itself (docs/live.md, "The node's own
// SRTP writes"): pion's per-packet write path (track, SRTP session, mux,
// ICE connection, and a copy into the run) was over a third of a viewer's
// cost on the node, twice the encryption's.
// pion keeps the session's DTLS, ICE and RTCP; the node takes the SRTP
// master key it derives from the DTLS handshake (RFC 5764, section 4.2),
// which it learns from two of the handshake's hooks pion's settings
// offer: the TLS key log line (client random and master secret) and the
// ServerHello the node sends (server random, cipher suite, SRTP
// protection profile). The key is checked against pion's before use: the
// session's first RTCP packet, which pion encrypts, must decrypt with it.

// dtlsSecrets collects one session's handshake secrets. They are held in
// memory only, never logged, until the node's key is derived from them
// (forget).
type dtlsSecrets struct {
	mu           sync.Mutex
	clientRandom []byte
	serverRandom []byte
	master       []byte
	suite        dtls.CipherSuiteID
	profile      dtls.SRTPProtectionProfile
}

// apply makes se's DTLS handshakes report to d; se must serve one
// session only.
func (d *dtlsSecrets) apply(se *webrtc.SettingEngine) {
	se.SetDTLSKeyLogWriter(d)
	se.SetDTLSServerHelloMessageHook(d.serverHello)
}

// Write takes the handshake's key log line: "CLIENT_RANDOM <client
// random> <master secret>", in hex.
func (d *dtlsSecrets) Write(line []byte) (int, error) {
	f := strings.Fields(string(line))
	if len(f) != 3 || f[0] != "CLIENT_RANDOM" {
		return len(line), nil
	}
	cr, err1 := hex.DecodeString(f[1])
	ms, err2 := hex.DecodeString(f[2])
	if err1 != nil || err2 != nil {
		return len(line), nil
	}
	d.mu.Lock()
	d.clientRandom, d.master = cr, ms
	d.mu.Unlock()
	return len(line), nil
}

// serverHello notes the node's ServerHello and sends it unchanged.
func (d *dtlsSecrets) serverHello(m handshake.MessageServerHello) handshake.Message {
	r := m.Random.MarshalFixed()
	d.mu.Lock()
	d.serverRandom = r[:]
	if m.CipherSuiteID != nil {
		d.suite = dtls.CipherSuiteID(*m.CipherSuiteID)
	}
	for _, e := range m.Extensions {
		if u, ok := e.(*extension.UseSRTP); ok && len(u.ProtectionProfiles) == 1 {
			d.profile = dtls.SRTPProtectionProfile(u.ProtectionProfiles[0])
		}
	}
	d.mu.Unlock()
	return &m
}

// forget drops the secrets once the node's key is derived (or could not
// be): they are not needed again.
func (d *dtlsSecrets) forget() {
	d.mu.Lock()
	defer d.mu.Unlock()
	clear(d.master)
	d.master, d.clientRandom, d.serverRandom = nil, nil, nil
}

var errNoSecrets = errors.New("DTLS handshake secrets not seen")

// ExportKeyingMaterial is the TLS exporter (RFC 5705) of the handshake,
// as dtls.State's, for srtp.Config.ExtractSessionKeysFromDTLS.
func (d *dtlsSecrets) ExportKeyingMaterial(label string, context []byte, length int) ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.master == nil || d.serverRandom == nil || d.suite == 0 {
		return nil, errNoSecrets
	}
	if len(context) != 0 {
		return nil, errors.New("exporter context not supported")
	}
	// TLS 1.2's PRF is SHA-256 unless the suite names another hash; of
	// pion's suites only the AES-256-GCM ones name SHA-384.
	h := prf.HashFunc(sha256.New)
	if strings.HasSuffix(dtls.CipherSuiteName(d.suite), "SHA384") {
		h = sha512.New384
	}
	seed := append(append([]byte(label), d.clientRandom...), d.serverRandom...)
	return prf.PHash(d.master, seed, length, h)
}

// sealer encrypts a session's RTP packets with the node's (the DTLS
// server's) SRTP write key. It is used by the session's goroutine only.
type sealer struct {
	ctx  *srtp.Context
	ssrc uint32
	pt   uint8
	tag  int        // bytes the profile adds to a packet
	hdr  rtp.Header // scratch for EncryptRTP
}

// newSealer derives the node's SRTP write key from d for the sender of
// ssrc and payload type pt.
func newSealer(d *dtlsSecrets, ssrc uint32, pt uint8) (*sealer, error) {
	d.mu.Lock()
	profile := srtp.ProtectionProfile(d.profile)
	d.mu.Unlock()
	if profile == 0 {
		return nil, errNoSecrets
	}
	cfg := srtp.Config{Profile: profile}
	if err := cfg.ExtractSessionKeysFromDTLS(d, false); err != nil {
		return nil, err
	}
	ctx, err := srtp.CreateContext(cfg.Keys.LocalMasterKey, cfg.Keys.LocalMasterSalt, profile)
	if err != nil {
		return nil, err
	}
	tag, err := profile.AEADAuthTagLen()
	if err != nil {
		return nil, err
	}
	if tag == 0 {
		if tag, err = profile.AuthTagRTPLen(); err != nil {
			return nil, err
		}
	}
	return &sealer{ctx: ctx, ssrc: ssrc, pt: pt, tag: tag}, nil
}

// check reports whether pkt, an SRTCP packet pion encrypted for the
// session, decrypts with the sealer's key: the key the node derived is
// pion's.
func (s *sealer) check(pkt []byte) error {
	if _, err := s.ctx.DecryptRTCP(nil, pkt, nil); err != nil {
		return fmt.Errorf("derived SRTP key does not match the session's: %w", err)
	}
	return nil
}

// size is what p becomes once sealed.
func (s *sealer) size(p *rtp.Packet) int {
	return p.Header.MarshalSize() + len(p.Payload) + s.tag
}

// seal writes p, with the session's SSRC and payload type, encrypted into
// dst, which must be size(p) long.
func (s *sealer) seal(dst []byte, p *rtp.Packet) error {
	h := p.Header
	h.SSRC, h.PayloadType = s.ssrc, s.pt
	hl, err := h.MarshalTo(dst)
	if err != nil {
		return err
	}
	n := hl + copy(dst[hl:], p.Payload)
	out, err := s.ctx.EncryptRTP(dst[:0:len(dst)], dst[:n], &s.hdr)
	if err != nil {
		return err
	}
	if len(out) != len(dst) || &out[0] != &dst[0] {
		return fmt.Errorf("sealed packet of %d bytes, %d expected", len(out), len(dst))
	}
	return nil
}
