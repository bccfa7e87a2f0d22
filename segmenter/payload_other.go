//go:build !unix

package segmenter

func allocMem(n int) []byte { return make([]byte, n) }

func freeMem(r *region) { r.b = nil }
