package deploy

import (
	"testing"

	"github.com/vigia/vigia/testenv"
)

// syncBuffer collects a process's output.
type syncBuffer = testenv.Buffer

// buildVigia builds the vigia binary once per test process.
func buildVigia(t *testing.T) string { return testenv.VigiaBinary(t) }
