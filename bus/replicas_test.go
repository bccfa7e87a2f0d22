package bus

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/vigia/vigia/testenv"
	"go.uber.org/zap/zaptest"
)

// startJetStreamCluster starts n nats-servers with JetStream in one
// cluster, routed to each other on ports chosen at run time, waits until
// JetStream has a meta leader, and returns the client URLs comma-separated.
func startJetStreamCluster(t *testing.T, n int) string {
	t.Helper()
	ports := make([]int, n)
	for i := range ports {
		ports[i] = testenv.FreePort(t)
	}
	var routes []*url.URL
	for _, p := range ports {
		routes = append(routes, &url.URL{Scheme: "nats", Host: fmt.Sprintf("127.0.0.1:%d", p)})
	}
	var urls []string
	var srvs []*server.Server
	for i := 0; i < n; i++ {
		opts := &server.Options{
			ServerName: fmt.Sprintf("n%d", i+1),
			Host:       "127.0.0.1",
			Port:       -1,
			JetStream:  true,
			StoreDir:   t.TempDir(),
			NoSigs:     true,
			Cluster: server.ClusterOpts{
				Name: "vigia-test",
				Host: "127.0.0.1",
				Port: ports[i],
			},
			Routes: routes,
		}
		srv, err := server.NewServer(opts)
		if err != nil {
			t.Fatal(err)
		}
		srv.Start()
		t.Cleanup(func() { srv.Shutdown(); srv.WaitForShutdown() })
		if !srv.ReadyForConnections(10 * time.Second) {
			t.Fatalf("server %d not ready", i+1)
		}
		srvs = append(srvs, srv)
		urls = append(urls, srv.ClientURL())
	}
	testenv.WaitForNil(t, testWait, "jetstream meta leader", func() error {
		for _, s := range srvs {
			if s.JetStreamIsLeader() {
				return nil
			}
		}
		return fmt.Errorf("no meta leader yet")
	})
	return strings.Join(urls, ",")
}

// replicasOf returns the replicas of every stream and bucket of the
// topology, by stream name.
func replicasOf(t *testing.T, b *Bus) map[string]int {
	t.Helper()
	ctx := testCtx(t)
	got := map[string]int{}
	var names []string
	for _, c := range kvConfigs(1) {
		names = append(names, kvStreamPrefix+c.Bucket)
	}
	for _, c := range streamConfigs(1) {
		names = append(names, c.Name)
	}
	for _, name := range names {
		s, err := b.JetStream().Stream(ctx, name)
		if err != nil {
			t.Fatalf("stream %s: %v", name, err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatalf("stream %s info: %v", name, err)
		}
		got[name] = info.Config.Replicas
	}
	return got
}

// TestReplicasOnCluster: on a three-server JetStream cluster, every stream
// and bucket is made with nats.replicas 3, a node configured with replicas
// 1 leaves them at 3, and a topology made at 1 is raised to 3.
func TestReplicasOnCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a three-server cluster")
	}
	urls := startJetStreamCluster(t, 3)
	open := func(replicas int) *Bus {
		ctx, cancel := context.WithTimeout(context.Background(), testWait)
		defer cancel()
		var b *Bus
		var err error
		// A fresh cluster may refuse the first streams while its servers
		// are still electing; Open is retried as a node's start would be.
		testenv.WaitForNil(t, testWait, "open", func() error {
			b, err = Open(ctx, Options{URL: urls, Replicas: replicas, ReconnectWait: 50 * time.Millisecond}, zaptest.NewLogger(t))
			return err
		})
		t.Cleanup(b.Close)
		return b
	}
	b3 := open(3)
	for name, r := range replicasOf(t, b3) {
		if r != 3 {
			t.Errorf("%s: replicas %d after start with 3, want 3", name, r)
		}
	}
	b1 := open(1)
	if err := b1.EnsureTopology(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	for name, r := range replicasOf(t, b1) {
		if r != 3 {
			t.Errorf("%s: replicas %d after a node with replicas 1 started, want 3 (never lowered)", name, r)
		}
	}
	// Raising: make one stream R1 by hand, as an older node would have.
	ctx := testCtx(t)
	s, err := b1.JetStream().Stream(ctx, StreamEvents)
	if err != nil {
		t.Fatal(err)
	}
	info, _ := s.Info(ctx)
	cfg := info.Config
	cfg.Replicas = 1
	if _, err := b1.JetStream().UpdateStream(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if err := b3.EnsureTopology(ctx); err != nil {
		t.Fatal(err)
	}
	if r := replicasOf(t, b3)[StreamEvents]; r != 3 {
		t.Errorf("%s: replicas %d after EnsureTopology with 3, want 3 (raised)", StreamEvents, r)
	}
}
