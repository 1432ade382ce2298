package ingest

import (
	"bufio"
	"bytes"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
)

// gzipReader decompresses each gzip member in turn, as gzip -d does, and
// stops at bytes that do not start another member, noting where: such a
// file was appended to or padded after it was written, and saying so is
// clearer than a decompressor's "unexpected EOF" or "invalid header".
type gzipReader struct {
	zr *gzip.Reader
	br *bufio.Reader
	cr *countingReader
	// garbageAt is the compressed offset of the first byte after the last
	// member that is not gzip data (-1 if none).
	garbageAt int64
}

func (g *gzipReader) Read(p []byte) (int, error) {
	for {
		n, err := g.zr.Read(p)
		if err == nil || err == io.EOF && n > 0 {
			return n, nil
		}
		if err != io.EOF {
			return n, gzipError{err}
		}
		next, _ := g.br.Peek(2)
		switch {
		case len(next) == 0:
			return 0, io.EOF
		case bytes.Equal(next, []byte{0x1f, 0x8b}):
			if err := g.zr.Reset(g.br); err != nil {
				return 0, gzipError{err}
			}
			g.zr.Multistream(false)
		default:
			g.garbageAt = g.cr.n.Load() - int64(g.br.Buffered())
			return 0, io.EOF
		}
	}
}

// garbage describes the bytes after the gzip data.
func (g *gzipReader) garbage() string {
	if g.cr.total > g.garbageAt {
		return fmt.Sprintf("%d bytes after the gzip data at compressed byte %d that are not gzip data", g.cr.total-g.garbageAt, g.garbageAt)
	}
	return fmt.Sprintf("bytes after the gzip data at compressed byte %d that are not gzip data", g.garbageAt)
}

// gzipError marks errors from the decompressor so they are reported as a
// corrupt file rather than as a JSON problem.
type gzipError struct{ err error }

func (g gzipError) Error() string { return g.err.Error() }
