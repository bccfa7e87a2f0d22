package api

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/vigia/vigia/api/db"
	"github.com/vigia/vigia/camera"
)

// RegistryRepairInterval is how often the wiring runs RepairRegistry after
// the pass at start: a registry write that failed after a database write
// (an edit, a block) takes effect within this time, without a restart.
const RegistryRepairInterval = 30 * time.Second

// RegistryRepair counts what one RepairRegistry pass did.
type RegistryRepair struct {
	// Put is the number of records written: missing, or different from
	// the database.
	Put int
	// Removed is the number of records removed: cameras of blocked
	// clients, and API ids no longer in the database.
	Removed int
	// Trusted is the number of trusted (static) records found under the id
	// of a database camera; they are left alone.
	Trusted int
	// Resealed is the number of cameras whose credentials, sealed under
	// the previous secret of a rotation, were sealed again under the
	// current one in the database (their records are put too).
	Resealed int
}

// RepairRegistry makes the NATS registry agree with the database: the
// record of every camera of an unblocked client is put when missing or
// different in content (sealed values are compared opened, since each
// sealing draws a new nonce), records of blocked clients' cameras are
// removed, and so are untrusted records under an API id (camera.IsAPIID)
// that the database no longer has. Credentials sealed under the previous
// secret of a rotation, in the database or in a record, are sealed again
// under the current one. Trusted records (static and synthetic cameras)
// are never touched. Each change re-reads its camera from the
// database under the lock the API's own writes take, so a pass racing an
// edit never puts the older content back.
func (s *Server) RepairRegistry(ctx context.Context) (RegistryRepair, error) {
	var rep RegistryRepair
	// The registry is listed before the database: a camera created in
	// between is in the database listing whenever its record is in the
	// registry listing, so it is never taken for a removed one.
	reg, listErr := s.cfg.Registry.ListCameras(ctx)
	have := make(map[string]camera.Config, len(reg))
	for _, c := range reg {
		have[c.ID] = c
	}
	inDB := map[string]bool{}
	var todo []int64
	err := s.cfg.DB.AllCameras(ctx, func(c db.Camera, blocked bool) error {
		id := camID(c.ID)
		inDB[id] = true
		switch got, ok := have[id]; {
		case ok && got.Trusted:
			rep.Trusted++ // a static camera under an API id: left alone
		case blocked && ok, !blocked && (!ok || !s.sameRecord(got, s.registryRecord(c))), s.staleSeal(c):
			todo = append(todo, c.ID)
		}
		return nil
	})
	if err != nil {
		return rep, fmt.Errorf("repair registry: list cameras: %w", err)
	}
	for _, c := range reg {
		if c.Trusted || inDB[c.ID] || !camera.IsAPIID(c.ID) {
			continue
		}
		if err := s.cfg.Registry.DeleteCamera(ctx, c.ID); err != nil {
			return rep, fmt.Errorf("repair registry: %w", err)
		}
		rep.Removed++
	}
	for _, id := range todo {
		put, resealed, err := s.repairCamera(ctx, id)
		if err != nil {
			return rep, fmt.Errorf("repair registry: camera %d: %w", id, err)
		}
		switch {
		case put:
			rep.Put++
		case !resealed: // (a blocked client's camera only re-sealed is not counted removed)
			rep.Removed++
		}
		if resealed {
			rep.Resealed++
		}
	}
	if listErr != nil {
		// Records that could not be read were compared as missing: the
		// database's cameras among them were put again.
		return rep, fmt.Errorf("repair registry: some records unreadable: %w", listErr)
	}
	return rep, nil
}

// repairCamera re-seals camera id's credentials when they are sealed
// under the previous secret, then writes its record as the database has it
// now (put true), or removes it when the camera is gone or its client
// blocked.
func (s *Server) repairCamera(ctx context.Context, id int64) (put, resealed bool, err error) {
	s.regMu.Lock()
	defer s.regMu.Unlock()
	c, err := s.cfg.DB.Camera(ctx, id)
	if errors.Is(err, db.ErrNotFound) {
		return false, false, s.cfg.Registry.DeleteCamera(ctx, camID(id))
	}
	if err != nil {
		return false, false, err
	}
	if resealed, err = s.reseal(ctx, &c); err != nil {
		return false, false, err
	}
	client, err := s.cfg.DB.Client(ctx, c.ClientID)
	if err != nil {
		return false, resealed, err
	}
	return !client.Blocked, resealed, s.syncCamera(ctx, c, client.Blocked)
}

// staleSeal reports whether a credential of c is sealed under the previous
// secret of a rotation.
func (s *Server) staleSeal(c db.Camera) bool {
	return camera.Stale(s.keys, c.SealedURL) || camera.Stale(s.keys, c.SealedP2PPassword)
}

// reseal seals c's credentials again under the current secret when they
// are sealed under the previous one, and stores them; resealed says
// whether it did. The caller holds regMu.
func (s *Server) reseal(ctx context.Context, c *db.Camera) (resealed bool, err error) {
	if !s.staleSeal(*c) {
		return false, nil
	}
	for _, v := range []*string{&c.SealedURL, &c.SealedP2PPassword} {
		if !camera.Stale(s.keys, *v) {
			continue
		}
		pt, err := camera.Open(s.keys, *v)
		if err != nil {
			return false, err
		}
		if *v, err = camera.Seal(s.keys, pt); err != nil {
			return false, err
		}
	}
	c.UpdatedAt = s.now()
	if err := s.cfg.DB.UpdateCamera(ctx, *c); err != nil {
		return false, err
	}
	return true, nil
}

// sameRecord reports whether two records of a camera have the same
// content, comparing sealed values by what they open to. A value that does
// not open (another secret, a damaged record), or opens only with the
// previous secret of a rotation, is a difference.
func (s *Server) sameRecord(a, b camera.Config) bool {
	for _, p := range [][2]*string{{&a.SealedURL, &b.SealedURL}, {&a.P2PSealedPassword, &b.P2PSealedPassword}} {
		x, errX := camera.Open(s.keys, *p[0])
		y, errY := camera.Open(s.keys, *p[1])
		if errX != nil || errY != nil || x != y || camera.Stale(s.keys, *p[0]) || camera.Stale(s.keys, *p[1]) {
			return false
		}
		*p[0], *p[1] = "", ""
	}
	return a == b
}

// RunRegistryRepair runs RepairRegistry every interval until ctx ends,
// logging what each pass changed and the passes that failed.
func (s *Server) RunRegistryRepair(ctx context.Context, interval time.Duration) {
	if interval <= 0 {
		interval = RegistryRepairInterval
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		rep, err := s.RepairRegistry(ctx)
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			s.log.Warn("camera registry repair failed; retried at the next pass", zap.Error(err))
		case rep.Put+rep.Removed+rep.Resealed > 0:
			s.log.Info("camera registry repaired from the database", zap.Int("put", rep.Put), zap.Int("removed", rep.Removed),
				zap.Int("resealed", rep.Resealed))
		}
		if rep.Trusted > 0 {
			s.log.Warn("static camera records under the ids of API cameras left alone; rename those static cameras",
				zap.Int("records", rep.Trusted))
		}
	}
}
