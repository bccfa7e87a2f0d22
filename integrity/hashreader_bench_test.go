package integrity

import (
	"crypto/sha256"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkHashAllFile hashes a spooled segment's worth of file (10 s of a
// 2 Mbit/s camera) from the page cache, as the fs backend's uploads do:
// HashAll against io.Copy's own 32 KiB buffer.
func BenchmarkHashAllFile(b *testing.B) {
	path := filepath.Join(b.TempDir(), "segment.mp4")
	data := make([]byte, 2500_000)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	want := sha256.Sum256(data)
	run := func(b *testing.B, hash func(io.Reader) [32]byte) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				b.Fatal(err)
			}
			if hash(f) != want {
				b.Fatal("wrong sum")
			}
		}
	}
	b.Run("HashAll", func(b *testing.B) {
		run(b, func(r io.Reader) [32]byte {
			s, _, err := HashAll(r)
			if err != nil {
				b.Fatal(err)
			}
			return s
		})
	})
	b.Run("io.Copy", func(b *testing.B) {
		run(b, func(r io.Reader) [32]byte {
			h := sha256.New()
			if _, err := io.Copy(h, r); err != nil {
				b.Fatal(err)
			}
			var s [32]byte
			copy(s[:], h.Sum(nil))
			return s
		})
	})
}
