package e2e

import (
	"sync"

	"github.com/bluenviron/gortsplib/v4"
	"github.com/bluenviron/gortsplib/v4/pkg/base"
	"github.com/bluenviron/gortsplib/v4/pkg/description"
	"github.com/bluenviron/gortsplib/v4/pkg/format"
	"github.com/pion/rtp"
)

// relay is an RTSP server that accepts one publisher (FFmpeg) and serves
// its stream to readers, like a camera would.
type relay struct {
	server *gortsplib.Server

	mu        sync.RWMutex
	stream    *gortsplib.ServerStream
	publisher *gortsplib.ServerSession
}

func (r *relay) OnSessionClose(ctx *gortsplib.ServerHandlerOnSessionCloseCtx) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stream != nil && ctx.Session == r.publisher {
		r.stream.Close()
		r.stream = nil
	}
}

func (r *relay) OnDescribe(*gortsplib.ServerHandlerOnDescribeCtx) (*base.Response, *gortsplib.ServerStream, error) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.stream == nil {
		return &base.Response{StatusCode: base.StatusNotFound}, nil, nil
	}
	return &base.Response{StatusCode: base.StatusOK}, r.stream, nil
}

func (r *relay) OnAnnounce(ctx *gortsplib.ServerHandlerOnAnnounceCtx) (*base.Response, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stream != nil {
		return &base.Response{StatusCode: base.StatusBadRequest}, nil
	}
	st := &gortsplib.ServerStream{Server: r.server, Desc: ctx.Description}
	if err := st.Initialize(); err != nil {
		return &base.Response{StatusCode: base.StatusBadRequest}, err
	}
	r.stream, r.publisher = st, ctx.Session
	return &base.Response{StatusCode: base.StatusOK}, nil
}

func (r *relay) OnSetup(ctx *gortsplib.ServerHandlerOnSetupCtx) (*base.Response, *gortsplib.ServerStream, error) {
	if ctx.Session.State() == gortsplib.ServerSessionStatePreRecord {
		return &base.Response{StatusCode: base.StatusOK}, nil, nil
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	if r.stream == nil {
		return &base.Response{StatusCode: base.StatusNotFound}, nil, nil
	}
	return &base.Response{StatusCode: base.StatusOK}, r.stream, nil
}

func (r *relay) OnPlay(*gortsplib.ServerHandlerOnPlayCtx) (*base.Response, error) {
	return &base.Response{StatusCode: base.StatusOK}, nil
}

func (r *relay) OnRecord(ctx *gortsplib.ServerHandlerOnRecordCtx) (*base.Response, error) {
	ctx.Session.OnPacketRTPAny(func(m *description.Media, _ format.Format, pkt *rtp.Packet) {
		r.mu.RLock()
		st := r.stream
		r.mu.RUnlock()
		if st != nil {
			_ = st.WritePacketRTP(m, pkt)
		}
	})
	return &base.Response{StatusCode: base.StatusOK}, nil
}

func (r *relay) ready() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.stream != nil
}
