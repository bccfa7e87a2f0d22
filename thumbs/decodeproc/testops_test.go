package decodeproc

import (
	"bytes"
	"strings"
	"testing"
)

// TestTestOpsNotBuiltIn: a binary without the test operations (the
// product) refuses --test-ops before it starts.
func TestTestOpsNotBuiltIn(t *testing.T) {
	saved := testOps
	testOps = nil
	defer func() { testOps = saved }()
	var out, stderr bytes.Buffer
	if code := run([]string{"--test-ops"}, strings.NewReader(""), &out, &stderr); code != 2 {
		t.Fatalf("exit status %d, want 2", code)
	}
	if out.Len() != 0 || !strings.Contains(stderr.String(), "built without test operations") {
		t.Errorf("stdout %q, stderr %q", out.String(), stderr.String())
	}
}
