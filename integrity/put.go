package integrity

import (
	"context"
	"io"
	"os"

	"github.com/vigia/vigia/storage"
)

// Put stores body (size bytes) at key and returns the SHA-256 of the bytes
// stored, reading body once where it can: through the upload when the
// store reads it, before the upload when linksFiles says the store takes
// an immutable *os.File without reading it (the fs store links spool
// files). A store that read the body out of order has it hashed again.
func Put(ctx context.Context, st storage.Store, key string, body io.ReadSeeker, size int64, opts storage.PutOptions, linksFiles bool) ([32]byte, error) {
	if f, ok := body.(*os.File); ok && opts.Immutable && linksFiles {
		sum, _, err := HashAll(f)
		if err != nil {
			return sum, err
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return sum, err
		}
		return sum, st.Put(ctx, key, f, size, opts)
	}
	hr := NewHashReader(body)
	if err := st.Put(ctx, key, hr, size, opts); err != nil {
		return [32]byte{}, err
	}
	if sum, ok := hr.Sum(size); ok {
		return sum, nil
	}
	if _, err := body.Seek(0, io.SeekStart); err != nil {
		return [32]byte{}, err
	}
	sum, _, err := HashAll(body)
	return sum, err
}
