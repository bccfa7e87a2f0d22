package api

import (
	"context"
	"testing"
)

// BenchmarkPlayerDigestAccess measures the check of a player_digest on
// each use of the player, its playlists and segment addresses: three
// primary-key reads (camera, client, user) and two signature checks.
func BenchmarkPlayerDigestAccess(b *testing.B) {
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			e := newEnv(b, kind, nil)
			clientID, userID, _ := e.clientWithUser("bench@example.com")
			id := e.camera(clientID)
			pd := e.signDigest(testKeys, PurposePlayer, id, e.clock.Now(), userID)
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				if _, err := e.srv.playerDigestAccess(ctx, id, pd); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTokenAccess measures the token check of every user request
// (one join read), for comparison.
func BenchmarkTokenAccess(b *testing.B) {
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run(kind, func(b *testing.B) {
			e := newEnv(b, kind, nil)
			_, _, tok := e.clientWithUser("bench@example.com")
			ctx := context.Background()
			b.ResetTimer()
			for b.Loop() {
				if _, err := e.srv.authenticate(ctx, tok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
