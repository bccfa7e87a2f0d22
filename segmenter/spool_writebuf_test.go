package segmenter

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// writeBufModel drives a spool file's writes from ops and checks the file,
// and what ReadAt sees, against the bytes written (the model).
type writeBufModel struct {
	t     testing.TB
	f     *spoolFile
	model []byte
}

func newWriteBufModel(t testing.TB) *writeBufModel {
	path := filepath.Join(t.TempDir(), "seg.part")
	file, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = file.Close() })
	return &writeBufModel{t: t, f: &spoolFile{s: &Spool{}, path: path, f: file, fd: fileFD(file)}}
}

// write writes n bytes of pattern seed at off, split into parts buffers.
func (m *writeBufModel) write(off int64, n, parts int, seed byte) {
	data := make([]byte, n)
	for i := range data {
		data[i] = seed + byte(i*7)
	}
	var bufs [][]byte
	for rest := data; len(rest) > 0; {
		k := len(rest)
		if parts > 1 {
			k = max(1, len(rest)/parts)
		}
		bufs = append(bufs, rest[:k])
		rest = rest[k:]
	}
	if err := m.f.writeAt(off, bufs...); err != nil {
		m.t.Fatalf("write %d bytes at %d: %v", n, off, err)
	}
	if end := off + int64(n); end > int64(len(m.model)) {
		m.model = append(m.model, make([]byte, end-int64(len(m.model)))...)
	}
	copy(m.model[off:], data)
}

// check compares ReadAt and, after a flush, the file with the model.
func (m *writeBufModel) check(flush bool, rnd *rand.Rand) {
	m.t.Helper()
	if m.f.size != int64(len(m.model)) {
		m.t.Fatalf("size %d, model %d", m.f.size, len(m.model))
	}
	for range 4 {
		if len(m.model) == 0 {
			break
		}
		off := rnd.IntN(len(m.model))
		n := rnd.IntN(len(m.model)-off) + 1
		p := make([]byte, n)
		if k, err := m.f.ReadAt(p, int64(off)); k != n || err != nil || !bytes.Equal(p, m.model[off:off+n]) {
			m.t.Fatalf("ReadAt(%d bytes at %d) = %d, %v; differs from what was written", n, off, k, err)
		}
	}
	if !flush {
		return
	}
	m.f.mu.Lock()
	err := m.f.wb.flush(m.f)
	m.f.mu.Unlock()
	if err != nil {
		m.t.Fatal(err)
	}
	b, err := os.ReadFile(m.f.path)
	if err != nil {
		m.t.Fatal(err)
	}
	if !bytes.Equal(b, m.model) {
		m.t.Fatalf("file of %d bytes differs from the %d written", len(b), len(m.model))
	}
	if m.f.wb.buf != nil && m.f.wb.off%spoolPage != 0 {
		m.t.Fatalf("buffer starts at %d, not on a page", m.f.wb.off)
	}
}

// run plays the operations encoded in ops: appends of frame-like sizes,
// gaps (a header region skipped) filled later, writes over earlier bytes,
// flushes.
func (m *writeBufModel) run(ops []byte, rnd *rand.Rand) {
	var holes []int64 // starts of skipped regions of 64 bytes
	for len(ops) >= 3 {
		op, arg := ops[0]%6, int(binary.BigEndian.Uint16(ops[1:]))
		ops = ops[3:]
		end := int64(len(m.model))
		switch op {
		case 0, 1: // a frame at the end
			m.write(end, arg%40000+1, 1+arg%4, byte(arg))
		case 2: // a header region left for later
			holes = append(holes, end)
			m.write(end+64, arg%3000+1, 2, byte(arg))
		case 3: // the header written
			if len(holes) > 0 {
				m.write(holes[0], 64, 1, 0xa5)
				holes = holes[1:]
			}
		case 4: // over earlier bytes
			if end > 0 {
				off := int64(arg) % end
				m.write(off, int(min(int64(arg%5000+1), end-off+100)), 3, byte(arg>>3))
			}
		case 5:
			m.check(true, rnd)
			continue
		}
		m.check(false, rnd)
	}
	m.check(true, rnd)
}

func TestWriteBufModel(t *testing.T) {
	for seed := range uint64(20) {
		rnd := rand.New(rand.NewPCG(seed, 1))
		ops := make([]byte, 3*200)
		for i := range ops {
			ops[i] = byte(rnd.Uint32())
		}
		newWriteBufModel(t).run(ops, rnd)
	}
}

// TestWriteBufAlignedWrites checks what the buffer is for: frames written
// one after another reach the file in page-aligned runs of at least
// spoolWriteChunk bytes, and a flush writes the rest.
func TestWriteBufAlignedWrites(t *testing.T) {
	m := newWriteBufModel(t)
	for i := range 50 {
		m.write(int64(len(m.model)), 17000+i, 2, byte(i))
		fi, err := os.Stat(m.f.path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size()%spoolPage != 0 {
			t.Fatalf("after frame %d: the file ends at %d, not on a page", i, fi.Size())
		}
		if waiting := int64(len(m.model)) - fi.Size(); waiting >= spoolWriteChunk || waiting < 0 {
			t.Fatalf("after frame %d: %d bytes wait", i, waiting)
		}
	}
	m.check(true, rand.New(rand.NewPCG(1, 2)))
}

func FuzzWriteBuf(f *testing.F) {
	f.Add([]byte{0, 0x40, 0, 2, 0, 9, 1, 0x10, 0, 3, 0, 0, 5, 0, 0, 4, 0x12, 0x34})
	f.Add(bytes.Repeat([]byte{1, 0x7f, 0xff}, 20))
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 3*64 {
			ops = ops[:3*64]
		}
		newWriteBufModel(t).run(ops, rand.New(rand.NewPCG(uint64(len(ops)), 3)))
	})
}
