package config

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func TestRedacted(t *testing.T) {
	c := Default()
	c.Storage.SecretKey = "s3-secret-value"
	c.NATS.Token = "nats-token-value"
	c.OperatorToken = "operator-token-value"
	c.Security.Secret = "hmac-secret-value"
	c.Database.URL = "postgres://vigia:db-password-value@db/vigia"
	c.Cameras = []Camera{
		{ID: "1", URL: "rtsp://admin:cam-password-one@10.0.0.1/live"},
		{ID: "2", URL: "rtmp://h/live?token=cam-token-two"},
	}
	secrets := []string{"s3-secret-value", "nats-token-value", "operator-token-value", "hmac-secret-value",
		"db-password-value", "cam-password-one", "cam-token-two"}

	r := c.Redacted()
	out, err := yaml.Marshal(r)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	for _, s := range secrets {
		if strings.Contains(string(out), s) {
			t.Errorf("redacted config contains %q:\n%s", s, out)
		}
	}
	checks := []struct{ name, got, want string }{
		{"storage.secret_key", r.Storage.SecretKey, RedactedText},
		{"nats.token", r.NATS.Token, RedactedText},
		{"operator_token", r.OperatorToken, RedactedText},
		{"security.secret", r.Security.Secret, RedactedText},
		{"database.url", r.Database.URL, "postgres://vigia:xxxxx@db/vigia"},
		{"cameras[0].url", r.Cameras[0].URL, "rtsp://admin:xxxxx@10.0.0.1/live"},
		{"cameras[1].url", r.Cameras[1].URL, "rtmp://h/live?token=xxxxx"},
		{"storage.access_key kept", r.Storage.AccessKey, c.Storage.AccessKey},
		{"camera id kept", r.Cameras[0].ID, "1"},
		{"original untouched", c.Cameras[0].URL, "rtsp://admin:cam-password-one@10.0.0.1/live"},
		{"original secret untouched", c.Storage.SecretKey, "s3-secret-value"},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %q, want %q", ch.name, ch.got, ch.want)
		}
	}
}

func TestRedactedCoversSecretKeys(t *testing.T) {
	// Every key tagged secret must be changed by Redacted when set.
	c := Default()
	c.Cameras = []Camera{{}}
	for _, k := range Keys() {
		if !k.Secret {
			continue
		}
		switch k.Path {
		case "cameras[].url":
			c.Cameras[0].URL = "rtsp://u:marker-" + k.Path + "@h/"
		default:
			if err := c.setKey(k.Path, "rtsp://u:marker-"+k.Path+"@h/"); err != nil {
				t.Fatalf("set %s: %v", k.Path, err)
			}
		}
	}
	out, err := yaml.Marshal(c.Redacted())
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	if strings.Contains(string(out), "marker-") {
		t.Errorf("a secret key is not redacted:\n%s", out)
	}
}

func TestRedactedEmptySecretsStayEmpty(t *testing.T) {
	r := Default().Redacted()
	if r.Storage.SecretKey != "" || r.OperatorToken != "" {
		t.Errorf("unset secrets should stay empty, got %q %q", r.Storage.SecretKey, r.OperatorToken)
	}
}
