//go:build cgo

package app

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/vigia/vigia/status"
	"github.com/vigia/vigia/testenv"
)

// A recorded camera gets its completeness in its status record, in
// vigia_camera_recorded_ratio, and in the cluster's figure of the page:
// the recorder works it out from the catalogue the app hands it.
func TestCompletenessPublished(t *testing.T) {
	a, cam := recorderApp(t)
	ctx, cancel := context.WithTimeout(context.Background(), 70*time.Second)
	defer cancel()
	var r status.Completeness
	testenv.WaitFor(t, 60*time.Second, "the status record with its completeness", func() bool {
		st, ok, err := a.bus.GetStatus(ctx, cam)
		if err != nil || !ok || st.Recorded == nil {
			return false
		}
		r = *st.Recorded
		return true
	})
	if _, ok := a.recorded(cam); !ok {
		t.Error("the node's completeness of the camera unknown")
	}
	// Judged from when the node began tracking the camera, which includes
	// its connection: most of the window, not all of it.
	if r.Hour < 0.5 || r.Hour > 1 || r.Day != r.Hour {
		t.Errorf("completeness %+v of a camera recording since it started", r)
	}
	var m dto.Metric
	if err := a.metrics.RecordedRatio.WithLabelValues(cam, "1h").Write(&m); err != nil {
		t.Fatal(err)
	}
	if got := m.GetGauge().GetValue(); got != r.Hour {
		t.Errorf("vigia_camera_recorded_ratio{window=1h} = %v, want %v", got, r.Hour)
	}
	page := a.nodePage()
	page.Allowed = func(*http.Request) bool { return true }
	mux := http.NewServeMux()
	page.Register(mux)
	rr := httptest.NewRecorder()
	mux.ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/", nil))
	want := "Recorded, all 1 cameras of the cluster: <b>" + strconv.FormatFloat(100*r.Hour, 'f', 1, 64) + " %</b>"
	if !strings.Contains(rr.Body.String(), want) {
		t.Errorf("the page lacks the cluster figure %q:\n%s", want, rr.Body.String())
	}
}
