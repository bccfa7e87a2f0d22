package cluster

import (
	"fmt"
	"testing"
)

func TestWinnerSpreadsByCapacity(t *testing.T) {
	cases := []struct {
		name    string
		members []member
		want    map[string]float64 // expected share
	}{
		{"equal", []member{{"a", 100, 0}, {"b", 100, 0}, {"c", 100, 0}}, map[string]float64{"a": 1.0 / 3, "b": 1.0 / 3, "c": 1.0 / 3}},
		{"weighted", []member{{"a", 100, 0}, {"b", 300, 0}}, map[string]float64{"a": 0.25, "b": 0.75}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const n = 6000
			got := map[string]int{}
			for i := 0; i < n; i++ {
				got[winner(fmt.Sprint(i), tc.members)]++
			}
			for id, share := range tc.want {
				if f := float64(got[id]) / n; f < share-0.04 || f > share+0.04 {
					t.Errorf("node %s got %.3f of cameras, want about %.3f", id, f, share)
				}
			}
		})
	}
}

func TestWinnerMovesOnlyTheNewNodesShare(t *testing.T) {
	three := []member{{"a", 1, 0}, {"b", 1, 0}, {"c", 1, 0}}
	four := append(three, member{"d", 1, 0})
	moved, toD := 0, 0
	for i := 0; i < 3000; i++ {
		cam := fmt.Sprint(i)
		before, after := winner(cam, three), winner(cam, four)
		if before != after {
			moved++
			if after == "d" {
				toD++
			}
		}
	}
	if moved != toD {
		t.Errorf("%d cameras moved between old nodes; only moves to the new node are expected", moved-toD)
	}
	if f := float64(moved) / 3000; f < 0.2 || f > 0.3 {
		t.Errorf("%.2f of cameras moved to the new node, want about 0.25", f)
	}
}
