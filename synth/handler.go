package synth

import (
	"github.com/bluenviron/gortsplib/v4"
	"github.com/bluenviron/gortsplib/v4/pkg/base"
	"github.com/bluenviron/gortsplib/v4/pkg/liberrors"
	"go.uber.org/zap"
)

// handler answers RTSP requests for the server's cameras. Its methods are
// called by gortsplib from connection and session goroutines.
type handler struct {
	s *Server
}

var (
	_ gortsplib.ServerHandlerOnDescribe     = (*handler)(nil)
	_ gortsplib.ServerHandlerOnSetup        = (*handler)(nil)
	_ gortsplib.ServerHandlerOnPlay         = (*handler)(nil)
	_ gortsplib.ServerHandlerOnSessionClose = (*handler)(nil)
)

// admit finds the camera of a request and checks that it is up and that the
// credentials are right.
func (h *handler) admit(conn *gortsplib.ServerConn, req *base.Request, path string) (
	*camera, *base.Response, error,
) {
	c, err := h.s.camera(path)
	if err != nil {
		return nil, &base.Response{StatusCode: base.StatusNotFound}, nil
	}
	c.mu.Lock()
	down := c.down
	c.mu.Unlock()
	if down {
		return nil, &base.Response{StatusCode: base.StatusNotFound}, nil
	}
	if c.spec.User != "" && !conn.VerifyCredentials(req, c.spec.User, c.spec.Pass) {
		return nil, &base.Response{StatusCode: base.StatusUnauthorized}, liberrors.ErrServerAuth{}
	}
	return c, &base.Response{StatusCode: base.StatusOK}, nil
}

// OnDescribe implements gortsplib.ServerHandlerOnDescribe.
func (h *handler) OnDescribe(ctx *gortsplib.ServerHandlerOnDescribeCtx) (
	*base.Response, *gortsplib.ServerStream, error,
) {
	c, res, err := h.admit(ctx.Conn, ctx.Request, ctx.Path)
	if c == nil {
		return res, nil, err
	}
	return res, c.stream, nil
}

// OnSetup implements gortsplib.ServerHandlerOnSetup.
func (h *handler) OnSetup(ctx *gortsplib.ServerHandlerOnSetupCtx) (
	*base.Response, *gortsplib.ServerStream, error,
) {
	c, res, err := h.admit(ctx.Conn, ctx.Request, ctx.Path)
	if c == nil {
		return res, nil, err
	}
	h.s.mu.Lock()
	if prev, ok := h.s.sessions[ctx.Session]; ok && prev != c {
		h.s.mu.Unlock()
		return &base.Response{StatusCode: base.StatusBadRequest}, nil, nil
	}
	if h.s.cameras[c.spec.Path] != c {
		// removed since admit
		h.s.mu.Unlock()
		return &base.Response{StatusCode: base.StatusNotFound}, nil, nil
	}
	h.s.sessions[ctx.Session] = c
	c.mu.Lock()
	if _, ok := c.sessions[ctx.Session]; !ok {
		c.sessions[ctx.Session] = false
	}
	c.mu.Unlock()
	h.s.mu.Unlock()
	return res, c.stream, nil
}

// OnPlay implements gortsplib.ServerHandlerOnPlay.
func (h *handler) OnPlay(ctx *gortsplib.ServerHandlerOnPlayCtx) (*base.Response, error) {
	h.s.mu.RLock()
	c, ok := h.s.sessions[ctx.Session]
	h.s.mu.RUnlock()
	if !ok {
		return &base.Response{StatusCode: base.StatusNotFound}, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.down {
		return &base.Response{StatusCode: base.StatusNotFound}, nil
	}
	if playing, ok := c.sessions[ctx.Session]; ok && !playing {
		c.sessions[ctx.Session] = true
		c.playing++
	}
	c.log.Debug("reader playing", zap.Int("readers", c.playing))
	return &base.Response{StatusCode: base.StatusOK}, nil
}

// OnSessionClose implements gortsplib.ServerHandlerOnSessionClose.
func (h *handler) OnSessionClose(ctx *gortsplib.ServerHandlerOnSessionCloseCtx) {
	h.s.mu.Lock()
	c, ok := h.s.sessions[ctx.Session]
	delete(h.s.sessions, ctx.Session)
	h.s.mu.Unlock()
	if !ok {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if playing, ok := c.sessions[ctx.Session]; ok {
		delete(c.sessions, ctx.Session)
		if playing {
			c.playing--
		}
	}
	c.log.Debug("reader closed", zap.Int("readers", c.playing), zap.Error(ctx.Error))
}
