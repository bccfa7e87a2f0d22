package retention

import (
	"reflect"
	"testing"
)

// TestReportAdd: every count of a report is added, so a field added to
// Report and not to Add fails here.
func TestReportAdd(t *testing.T) {
	one := Report{}
	v := reflect.ValueOf(&one).Elem()
	for i := range v.NumField() {
		v.Field(i).SetInt(int64(i + 1))
	}
	var sum Report
	sum.Add(one)
	sum.Add(one)
	s := reflect.ValueOf(sum)
	for i := range s.NumField() {
		if got, want := s.Field(i).Int(), 2*int64(i+1); got != want {
			t.Errorf("%s = %d, want %d", s.Type().Field(i).Name, got, want)
		}
	}
}
