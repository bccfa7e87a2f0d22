// Package deploy holds the deployment files (container image, compose,
// Kubernetes, systemd, Grafana) and the tests that validate them without a
// container engine or kubectl, and run make cluster.
package deploy

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/vigia/vigia/config"
)

// subcommands are the commands of cmd/vigia a deployment file may run.
var subcommands = map[string]bool{"serve": true, "recorder": true, "api": true, "synthcam": true,
	"nats": true, "doctor": true, "cameras": true, "probe": true, "version": true, "config": true}

// knownEnv is every VIGIA_* variable the configuration reads.
func knownEnv() map[string]bool {
	out := map[string]bool{"VIGIA_CONFIG": true}
	for _, k := range config.Keys() {
		if k.Env != "" {
			out[k.Env] = true
		}
	}
	return out
}

// m reads a YAML mapping decoded into any.
func m(t *testing.T, v any, what string) map[string]any {
	t.Helper()
	out, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: want a mapping, got %T", what, v)
	}
	return out
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func TestCompose(t *testing.T) {
	var doc map[string]any
	b, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	services := m(t, doc["services"], "services")
	volumes := m(t, doc["volumes"], "volumes")
	for _, name := range []string{"minio", "nats-1", "nats-2", "nats-3", "api", "recorder-1", "recorder-2", "recorder-3", "synthcam", "register"} {
		if _, ok := services[name]; !ok {
			t.Errorf("compose: service %s missing", name)
		}
	}
	env := knownEnv()
	nodeIDs := map[string]string{}
	hostPorts := map[string]string{}
	for name, raw := range services {
		svc := m(t, raw, name)
		if str(svc["image"]) == "" {
			t.Errorf("%s: no image", name)
		}
		for _, p := range asList(svc["ports"]) {
			host, _, _ := strings.Cut(str(p), ":")
			if other, dup := hostPorts[host]; dup {
				t.Errorf("%s and %s publish the same host port %s", name, other, host)
			}
			hostPorts[host] = name
		}
		for _, v := range asList(svc["volumes"]) {
			src, _, _ := strings.Cut(str(v), ":")
			if strings.HasPrefix(src, ".") {
				if _, err := os.Stat(src); err != nil {
					t.Errorf("%s: mounted file %s: %v", name, src, err)
				}
				continue
			}
			if _, ok := volumes[src]; !ok {
				t.Errorf("%s: volume %s not declared", name, src)
			}
		}
		for dep := range asMap(svc["depends_on"]) {
			if _, ok := services[dep]; !ok {
				t.Errorf("%s depends on unknown service %s", name, dep)
			}
		}
		if str(svc["image"]) != "vigia:dev" {
			continue
		}
		cmd := asList(svc["command"])
		if len(cmd) == 0 || !subcommands[str(cmd[0])] {
			t.Errorf("%s: command %v is not a vigia subcommand", name, cmd)
			continue
		}
		vars := asMap(svc["environment"])
		for k := range vars {
			if strings.HasPrefix(k, "VIGIA_") && !env[k] {
				t.Errorf("%s: %s is not a configuration variable", name, k)
			}
		}
		role := str(cmd[0])
		if role != "recorder" && role != "api" {
			continue
		}
		if r := str(vars["VIGIA_NATS_REPLICAS"]); r != "3" {
			t.Errorf("%s: VIGIA_NATS_REPLICAS %q, want 3 on the three NATS servers", name, r)
		}
		for _, k := range []string{"VIGIA_NATS_URL", "VIGIA_STORAGE_BACKEND", "VIGIA_STORAGE_ENDPOINT", "VIGIA_STORAGE_SECRET_KEY", "VIGIA_SECURITY_SECRET", "VIGIA_NODE_ID"} {
			if str(vars[k]) == "" {
				t.Errorf("%s: %s not set", name, k)
			}
		}
		id := str(vars["VIGIA_NODE_ID"])
		if other, dup := nodeIDs[id]; dup {
			t.Errorf("%s and %s share node id %q", name, other, id)
		}
		nodeIDs[id] = name
		if svc["healthcheck"] == nil {
			t.Errorf("%s: no healthcheck", name)
		}
		if role == "recorder" {
			grace, err := time.ParseDuration(str(svc["stop_grace_period"]))
			if err != nil || grace < 45*time.Second {
				t.Errorf("%s: stop_grace_period %q, want at least 45s for the drain", name, svc["stop_grace_period"])
			}
			if !strings.HasSuffix(str(asList(svc["volumes"])[0]), ":/var/lib/vigia") {
				t.Errorf("%s: the spool (/var/lib/vigia) is not on a volume", name)
			}
		}
	}
	for _, name := range []string{"nats-1", "nats-2", "nats-3"} {
		cmd := strings.Join(toStrings(asList(m(t, services[name], name)["command"])), " ")
		for _, want := range []string{"--jetstream", "--cluster_name vigia", "--routes"} {
			if !strings.Contains(cmd, want) {
				t.Errorf("%s: %q not in its command %q", name, want, cmd)
			}
		}
	}
}

func asList(v any) []any {
	out, _ := v.([]any)
	return out
}

func asMap(v any) map[string]any {
	out, _ := v.(map[string]any)
	return out
}

func toStrings(v []any) []string {
	var out []string
	for _, x := range v {
		out = append(out, str(x))
	}
	return out
}

// kubeDocs reads every YAML document of the Kubernetes manifests.
func kubeDocs(t *testing.T) []map[string]any {
	t.Helper()
	files, err := filepath.Glob("kubernetes/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no manifests: %v", err)
	}
	var out []map[string]any
	for _, f := range files {
		if filepath.Base(f) == "kustomization.yaml" {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		for {
			var doc map[string]any
			err := dec.Decode(&doc)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if doc != nil {
				doc["_file"] = f
				out = append(out, doc)
			}
		}
	}
	return out
}

func TestKubernetes(t *testing.T) {
	docs := kubeDocs(t)
	byKind := map[string]map[string]map[string]any{}
	for _, d := range docs {
		kind, api := str(d["kind"]), str(d["apiVersion"])
		md := asMap(d["metadata"])
		name := str(md["name"])
		if kind == "" || api == "" || name == "" {
			t.Errorf("%s: a document lacks apiVersion, kind or metadata.name", d["_file"])
			continue
		}
		if kind != "Namespace" && str(md["namespace"]) != "vigia" {
			t.Errorf("%s %s: namespace %q, want vigia", kind, name, md["namespace"])
		}
		if byKind[kind] == nil {
			byKind[kind] = map[string]map[string]any{}
		}
		byKind[kind][name] = d
	}
	kust := map[string]any{}
	b, err := os.ReadFile("kubernetes/kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &kust); err != nil {
		t.Fatal(err)
	}
	for _, r := range asList(kust["resources"]) {
		if _, err := os.Stat(filepath.Join("kubernetes", str(r))); err != nil {
			t.Errorf("kustomization: resource %s: %v", r, err)
		}
	}

	secret := byKind["Secret"]["vigia-secrets"]
	cm := byKind["ConfigMap"]["vigia-config"]
	if secret == nil || cm == nil {
		t.Fatalf("Secret vigia-secrets or ConfigMap vigia-config missing")
	}
	secretKeys := asMap(secret["stringData"])
	env := knownEnv()
	for k := range secretKeys {
		if !env[k] {
			t.Errorf("Secret key %s is not a configuration variable", k)
		}
	}
	// The configuration file of the ConfigMap, with the Secret's values in
	// the environment, is valid.
	file := filepath.Join(t.TempDir(), "vigia.yaml")
	if err := os.WriteFile(file, []byte(str(asMap(cm["data"])["vigia.yaml"])), 0o600); err != nil {
		t.Fatal(err)
	}
	environ := []string{"VIGIA_NODE_ID=vigia-recorder-0"}
	for k, v := range secretKeys {
		environ = append(environ, k+"="+str(v))
	}
	if _, err := config.Load([]string{"--config", file}, environ); err != nil {
		t.Errorf("ConfigMap vigia.yaml: %v", err)
	}

	sts := byKind["StatefulSet"]["vigia-recorder"]
	dep := byKind["Deployment"]["vigia-api"]
	if sts == nil || dep == nil {
		t.Fatalf("StatefulSet vigia-recorder or Deployment vigia-api missing")
	}
	svcName := str(asMap(sts["spec"])["serviceName"])
	if svc := byKind["Service"][svcName]; svc == nil || str(asMap(svc["spec"])["clusterIP"]) != "None" {
		t.Errorf("StatefulSet serviceName %q is not a headless Service of the manifests", svcName)
	}
	claims := map[string]bool{}
	for _, c := range asList(asMap(sts["spec"])["volumeClaimTemplates"]) {
		claims[str(asMap(asMap(c)["metadata"])["name"])] = true
	}
	for _, w := range []struct {
		name     string
		doc      map[string]any
		role     string
		minGrace int
	}{{"recorder", sts, "recorder", 45}, {"api", dep, "api", 10}} {
		spec := asMap(w.doc["spec"])
		sel := asMap(asMap(spec["selector"])["matchLabels"])
		tmpl := asMap(spec["template"])
		labels := asMap(asMap(tmpl["metadata"])["labels"])
		for k, v := range sel {
			if labels[k] != v {
				t.Errorf("%s: selector %s=%v does not match the pod labels", w.name, k, v)
			}
		}
		pod := asMap(tmpl["spec"])
		grace, _ := pod["terminationGracePeriodSeconds"].(int)
		if grace < w.minGrace {
			t.Errorf("%s: terminationGracePeriodSeconds %d, want at least %d", w.name, grace, w.minGrace)
		}
		if sc := asMap(pod["securityContext"]); sc["runAsNonRoot"] != true {
			t.Errorf("%s: pods do not run as non-root", w.name)
		}
		vols := map[string]bool{}
		for name := range claims {
			if w.role == "recorder" {
				vols[name] = true
			}
		}
		for _, v := range asList(pod["volumes"]) {
			vm := asMap(v)
			vols[str(vm["name"])] = true
			if ref := asMap(vm["configMap"]); ref != nil && byKind["ConfigMap"][str(ref["name"])] == nil {
				t.Errorf("%s: volume refers to unknown ConfigMap %v", w.name, ref["name"])
			}
		}
		containers := asList(pod["containers"])
		if len(containers) != 1 {
			t.Fatalf("%s: %d containers, want 1", w.name, len(containers))
		}
		c := asMap(containers[0])
		args := toStrings(asList(c["args"]))
		if len(args) == 0 || args[0] != w.role {
			t.Errorf("%s: args %v, want the %s subcommand", w.name, args, w.role)
		}
		for probe, path := range map[string]string{"readinessProbe": "/readyz", "livenessProbe": "/healthz"} {
			hg := asMap(asMap(c[probe])["httpGet"])
			if str(hg["path"]) != path {
				t.Errorf("%s: %s path %q, want %s", w.name, probe, hg["path"], path)
			}
		}
		mounts := map[string]string{}
		for _, vm := range asList(c["volumeMounts"]) {
			mm := asMap(vm)
			if !vols[str(mm["name"])] {
				t.Errorf("%s: mount of unknown volume %v", w.name, mm["name"])
			}
			mounts[str(mm["mountPath"])] = str(mm["name"])
		}
		if w.role == "recorder" && !claims[mounts["/var/lib/vigia"]] {
			t.Errorf("recorder: /var/lib/vigia (the spool) is not on a volume claim: %v", mounts)
		}
		for _, e := range asList(c["env"]) {
			if name := str(asMap(e)["name"]); strings.HasPrefix(name, "VIGIA_") && !env[name] {
				t.Errorf("%s: %s is not a configuration variable", w.name, name)
			}
		}
		for _, ef := range asList(c["envFrom"]) {
			if ref := asMap(asMap(ef)["secretRef"]); ref != nil && byKind["Secret"][str(ref["name"])] == nil {
				t.Errorf("%s: envFrom unknown Secret %v", w.name, ref["name"])
			}
		}
	}
}

func TestSystemdUnit(t *testing.T) {
	f, err := os.Open("systemd/vigia-recorder.service")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sections := map[string]map[string][]string{}
	cur := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			cur = line
			sections[cur] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || cur == "" {
				t.Fatalf("bad line %q", line)
			}
			sections[cur][k] = append(sections[cur][k], v)
		}
	}
	svc := sections["[Service]"]
	if svc == nil || sections["[Unit]"] == nil || sections["[Install]"] == nil {
		t.Fatalf("sections: %v", sections)
	}
	exec := strings.Fields(strings.Join(svc["ExecStart"], ""))
	if len(exec) < 2 || exec[1] != "recorder" {
		t.Errorf("ExecStart %v does not run vigia recorder", exec)
	}
	want := map[string]string{"User": "vigia", "KillSignal": "SIGTERM", "NoNewPrivileges": "yes",
		"ProtectSystem": "strict", "ProtectHome": "yes", "PrivateTmp": "yes", "ReadWritePaths": "/var/lib/vigia",
		"Restart": "always", "CapabilityBoundingSet": ""}
	for k, v := range want {
		got, ok := svc[k]
		if !ok || got[len(got)-1] != v {
			t.Errorf("[Service] %s = %v, want %q", k, got, v)
		}
	}
	stop, err := time.ParseDuration(strings.Join(svc["TimeoutStopSec"], "") + "s")
	if err != nil || stop < 45*time.Second {
		t.Errorf("TimeoutStopSec %v, want at least 45 s for the drain", svc["TimeoutStopSec"])
	}
}

func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	froms := regexp.MustCompile(`(?m)^FROM `).FindAllString(text, -1)
	if len(froms) < 3 {
		t.Errorf("%d stages, want a multi-stage build (player, build, runtime)", len(froms))
	}
	for _, want := range []string{"CGO_ENABLED=1", "libavcodec-dev", "libavcodec59", "libswscale6", "libavutil57",
		"USER 10001", `VOLUME ["/var/lib/vigia"]`, "ENTRYPOINT", "STOPSIGNAL SIGTERM", "hls.min.js"} {
		if !strings.Contains(text, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
	// The runtime stage is the last one and carries no build tools.
	last := text[strings.LastIndex(text, "\nFROM "):]
	for _, no := range []string{"-dev", "golang"} {
		if strings.Contains(last, no) {
			t.Errorf("runtime stage contains %q", no)
		}
	}
}

func TestExampleConfig(t *testing.T) {
	if _, err := config.Load([]string{"--config", "vigia.example.yaml"}, nil); err != nil {
		t.Errorf("vigia.example.yaml: %v", err)
	}
}

// TestDashboard checks the Grafana dashboard: valid JSON, and every metric
// its queries use is one Vigia exports.
func TestDashboard(t *testing.T) {
	b, err := os.ReadFile("grafana/vigia-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	known := map[string]bool{}
	for _, set := range []map[string]string{recorderMetrics, apiMetrics} {
		for name, typ := range set {
			known[name] = true
			if typ == "histogram" {
				known[name+"_bucket"] = true
			}
		}
	}
	name := regexp.MustCompile(`\b(vigia_[a-z_]+|process_[a-z_]+|go_[a-z_]+)`)
	if len(dash.Panels) < 10 {
		t.Errorf("%d panels", len(dash.Panels))
	}
	for _, p := range dash.Panels {
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, q := range p.Targets {
			for _, n := range name.FindAllString(q.Expr, -1) {
				if !known[n] {
					t.Errorf("panel %q: metric %s is not exported", p.Title, n)
				}
			}
		}
	}
}
