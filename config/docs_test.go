package config

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the generated key table of docs/config.md")

const (
	docsPath    = "../docs/config.md"
	examplePath = "../deploy/vigia.example.yaml"
	tableBegin  = "<!-- keys:begin -->\n"
	tableEnd    = "<!-- keys:end -->"
)

// TestDocsTable checks that the key table of docs/config.md is the one
// generated from the structs; -update rewrites it.
func TestDocsTable(t *testing.T) {
	data, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatalf("read docs: %v", err)
	}
	doc := string(data)
	begin := strings.Index(doc, tableBegin)
	end := strings.Index(doc, tableEnd)
	if begin < 0 || end < begin {
		t.Fatalf("%s lacks the %q and %q markers", docsPath, tableBegin, tableEnd)
	}
	current := doc[begin+len(tableBegin) : end]
	want := Markdown()
	if current == want {
		return
	}
	if !*update {
		t.Fatalf("%s key table is stale; run go test ./config -run TestDocsTable -update", docsPath)
	}
	doc = doc[:begin+len(tableBegin)] + want + doc[end:]
	if err := os.WriteFile(docsPath, []byte(doc), 0o644); err != nil {
		t.Fatalf("write docs: %v", err)
	}
}

// TestDocsMentionEveryKey checks the documentation names every key with its
// environment variable and default, whether or not the table is generated.
func TestDocsMentionEveryKey(t *testing.T) {
	data, err := os.ReadFile(docsPath)
	if err != nil {
		t.Fatalf("read docs: %v", err)
	}
	doc := string(data)
	for _, k := range Keys() {
		t.Run(k.Path, func(t *testing.T) {
			for _, s := range []string{"`" + k.Path + "`", k.Env, k.Default} {
				if !strings.Contains(doc, s) {
					t.Errorf("%s does not mention %q", docsPath, s)
				}
			}
		})
	}
}

func TestKeys(t *testing.T) {
	byPath := make(map[string]Key)
	for _, k := range Keys() {
		if _, dup := byPath[k.Path]; dup {
			t.Errorf("duplicate key %s", k.Path)
		}
		if k.Doc == "" {
			t.Errorf("key %s has no doc", k.Path)
		}
		byPath[k.Path] = k
	}
	tests := []struct {
		path, env, def string
		secret         bool
	}{
		{"http.addr", "VIGIA_HTTP_ADDR", "127.0.0.1:8080", false},
		{"storage.access_key", "VIGIA_STORAGE_ACCESS_KEY", "", false},
		{"storage.secret_key", "VIGIA_STORAGE_SECRET_KEY", "", true},
		{"operator_token", "VIGIA_OPERATOR_TOKEN", "", true},
		{"ingest.allow_private_networks", "VIGIA_INGEST_ALLOW_PRIVATE_NETWORKS", "false", false},
		{"recording.spool_max_bytes", "VIGIA_RECORDING_SPOOL_MAX_BYTES", "0", false},
		{"nats.token", "VIGIA_NATS_TOKEN", "", true},
		{"security.secret", "VIGIA_SECURITY_SECRET", "", true},
		{"cameras[].url", "", "", true},
		{"cameras[].history_days", "", "7", false},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			k, ok := byPath[tt.path]
			if !ok {
				t.Fatalf("no key %s", tt.path)
			}
			if k.Env != tt.env || k.Default != tt.def || k.Secret != tt.secret {
				t.Errorf("got %+v, want env %q default %q secret %v", k, tt.env, tt.def, tt.secret)
			}
		})
	}
}

// TestExampleConfig loads deploy/vigia.example.yaml through the whole
// loader, with no environment.
func TestExampleConfig(t *testing.T) {
	c, err := Load([]string{"--config", examplePath}, nil)
	if err != nil {
		t.Fatalf("example config: %v", err)
	}
	if c.Storage.Backend != "s3" || c.NATS.URL == "" || len(c.Cameras) == 0 {
		t.Errorf("example should be an S3 + external NATS node with cameras, got backend %q nats %q cameras %d",
			c.Storage.Backend, c.NATS.URL, len(c.Cameras))
	}
	if !filepath.IsAbs(c.Recording.SpoolDir) {
		t.Errorf("spool_dir %q not absolute", c.Recording.SpoolDir)
	}
}
