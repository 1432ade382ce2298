package ingest

import "fmt"

// SyntaxError reports input that is not the JSON a trace must be. Offset is
// the byte offset in the (decompressed) JSON text where reading failed.
type SyntaxError struct {
	Offset int64
	Msg    string
	// Compressed is true when Offset counts bytes of decompressed gzip data.
	Compressed bool
}

func (e *SyntaxError) Error() string {
	where := "byte"
	if e.Compressed {
		where = "decompressed byte"
	}
	return fmt.Sprintf("invalid JSON at %s %d: %s", where, e.Offset, e.Msg)
}

// FormatError reports valid JSON that is not a trace tracelens can read.
type FormatError struct {
	Msg string
}

func (e *FormatError) Error() string { return e.Msg }
