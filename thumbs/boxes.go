package thumbs

import "encoding/binary"

// boxOffset returns the offset of the first top-level ISO BMFF box of type
// typ in data, or -1. It stops at the first malformed box header.
func boxOffset(data []byte, typ string) int {
	off := 0
	for off+8 <= len(data) {
		size := uint64(binary.BigEndian.Uint32(data[off:]))
		hdr := uint64(8)
		switch size {
		case 0:
			size = uint64(len(data) - off)
		case 1:
			if off+16 > len(data) {
				return -1
			}
			size = binary.BigEndian.Uint64(data[off+8:])
			hdr = 16
		}
		if string(data[off+4:off+8]) == typ {
			return off
		}
		if size < hdr || size > uint64(len(data)-off) {
			return -1
		}
		off += int(size)
	}
	return -1
}
