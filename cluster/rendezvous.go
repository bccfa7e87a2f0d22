package cluster

import (
	"hash/fnv"
	"math"
	"sort"
)

// member is a live node as the assignment sees it.
type member struct {
	ID       string
	Capacity int
	Max      int // cameras it can hold, 0 for no limit
}

// mix64 is the splitmix64 finalizer: it spreads FNV's output over all bits.
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// score is the weighted rendezvous score of node for camera: the node with
// the highest score wins, and a node's share of cameras is proportional to
// its capacity.
func score(node string, capacity int, camera string) float64 {
	h := fnv.New64a()
	h.Write([]byte(node))
	h.Write([]byte{0})
	h.Write([]byte(camera))
	u := (float64(mix64(h.Sum64())>>11) + 0.5) / float64(uint64(1)<<53) // in (0, 1)
	w := float64(capacity)
	if w <= 0 {
		w = 1
	}
	return -w / math.Log(u)
}

// better reports whether a with score sa ranks before b with score sb.
func better(sa float64, a string, sb float64, b string) bool {
	return sa > sb || (sa == sb && a < b)
}

// winner returns the node that should record camera, "" with no members.
func winner(camera string, members []member) string {
	best, bestScore := "", math.Inf(-1)
	for _, m := range members {
		s := score(m.ID, m.Capacity, camera)
		if best == "" || better(s, m.ID, bestScore, best) {
			best, bestScore = m.ID, s
		}
	}
	return best
}

// ranked returns members from the one camera prefers most to the least.
func ranked(camera string, members []member) []member {
	type scored struct {
		m member
		s float64
	}
	list := make([]scored, len(members))
	for i, m := range members {
		list[i] = scored{m, score(m.ID, m.Capacity, camera)}
	}
	sort.Slice(list, func(i, j int) bool { return better(list[i].s, list[i].m.ID, list[j].s, list[j].m.ID) })
	out := make([]member, len(list))
	for i, x := range list {
		out[i] = x.m
	}
	return out
}

func sortedMembers(ms map[string]member) []member {
	out := make([]member, 0, len(ms))
	for _, m := range ms {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
