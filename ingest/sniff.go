package ingest

import "bytes"

// sniffContainer names what a file that is not JSON text is, from its
// first bytes, for the message that refuses it: a UTF-16 or UTF-32 JSON
// file (Windows tools write them; the text is JSON but not UTF-8), or an
// archive or compressor tracelens does not open (zip, bzip2, zstd, xz,
// a gzip file cut to its first byte). "" when the bytes say nothing.
// An "invalid JSON at byte 0, found 'P'" left users guessing (issue 27).
func sniffContainer(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte{0xff, 0xfe, 0, 0}), len(b) >= 4 && b[0] != 0 && b[1] == 0 && b[2] == 0 && b[3] == 0:
		return "the file is UTF-32 (little-endian) text, not UTF-8 JSON; convert it to UTF-8 (e.g. iconv -f UTF-32LE -t UTF-8)"
	case bytes.HasPrefix(b, []byte{0, 0, 0xfe, 0xff}), len(b) >= 4 && b[0] == 0 && b[1] == 0 && b[2] == 0 && b[3] != 0:
		return "the file is UTF-32 (big-endian) text, not UTF-8 JSON; convert it to UTF-8 (e.g. iconv -f UTF-32BE -t UTF-8)"
	case bytes.HasPrefix(b, []byte{0xff, 0xfe}), len(b) >= 2 && b[0] != 0 && b[1] == 0:
		return "the file is UTF-16 (little-endian) text, not UTF-8 JSON; convert it to UTF-8 (e.g. iconv -f UTF-16LE -t UTF-8)"
	case bytes.HasPrefix(b, []byte{0xfe, 0xff}), len(b) >= 2 && b[0] == 0 && b[1] != 0:
		return "the file is UTF-16 (big-endian) text, not UTF-8 JSON; convert it to UTF-8 (e.g. iconv -f UTF-16BE -t UTF-8)"
	case bytes.HasPrefix(b, []byte("PK\x03\x04")), bytes.HasPrefix(b, []byte("PK\x05\x06")):
		return "the file is a zip archive; unzip it and give tracelens the trace inside (.json or .json.gz)"
	case bytes.HasPrefix(b, []byte("BZh")) && len(b) >= 4 && b[3] >= '1' && b[3] <= '9':
		return "the file is bzip2-compressed; tracelens reads plain or gzip JSON: decompress it (bunzip2) or recompress with gzip"
	case bytes.HasPrefix(b, []byte{0x28, 0xb5, 0x2f, 0xfd}):
		return "the file is zstd-compressed; tracelens reads plain or gzip JSON: decompress it (zstd -d) or recompress with gzip"
	case bytes.HasPrefix(b, []byte{0xfd, '7', 'z', 'X', 'Z', 0}):
		return "the file is xz-compressed; tracelens reads plain or gzip JSON: decompress it (xz -d) or recompress with gzip"
	case len(b) == 1 && b[0] == 0x1f:
		return "the file is one byte, the start of a gzip header: a gzip file cut short (a download or copy that did not finish?)"
	}
	return ""
}

// badEscape returns the index in s of the first backslash, at or after
// i, that does not begin a JSON escape (\" \\ \/ \b \f \n \r \t or \u
// and four hex digits), or -1. JSON has backslashes only inside strings,
// so an event's text can be checked whole. gjson decoded "\q" by
// cutting the string short there: a kernel name silently lost its tail.
func badEscape(s string, i int) int {
	for ; i < len(s); i++ {
		if s[i] != '\\' {
			continue
		}
		if i+1 >= len(s) {
			return i
		}
		switch s[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i++
		case 'u':
			if i+6 > len(s) || !isHex4(s[i+2:i+6]) {
				return i
			}
			i += 5
		default:
			return i
		}
	}
	return -1
}

// isHex4 reports whether s is four hexadecimal digits.
func isHex4(s string) bool {
	for k := range 4 {
		c := s[k]
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}
