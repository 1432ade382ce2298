package sqlfile

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
)

// Type is the storage class of one value.
type Type uint8

// The storage classes of SQLite values.
const (
	Null Type = iota
	Integer
	Float
	Text
	Blob
)

func (t Type) String() string {
	return [...]string{"NULL", "INTEGER", "REAL", "TEXT", "BLOB"}[t]
}

// Row is one decoded record. Its byte slices alias the scanner's buffers.
type Row struct {
	Rowid int64
	// Offset is the byte offset of the row's cell in the file.
	Offset int64
	table  *Table
	data   []byte
	types  []uint64 // serial type per stored column
	starts []int    // offset of each stored column's value in data
}

func (r *Row) decode(payload []byte) error {
	hlen, k := uvarint(payload)
	if k == 0 || hlen > uint64(len(payload)) || int(hlen) < k {
		return &CorruptError{Offset: r.Offset, Msg: fmt.Sprintf("table %s: record header length %d does not fit its %d-byte payload", r.table.Name, hlen, len(payload))}
	}
	r.data = payload
	r.types, r.starts = r.types[:0], r.starts[:0]
	body := int(hlen)
	for p := k; p < int(hlen); {
		st, n := uvarint(payload[p:hlen])
		if n == 0 {
			return &CorruptError{Offset: r.Offset, Msg: fmt.Sprintf("table %s: bad serial type in a record header", r.table.Name)}
		}
		p += n
		sz := serialSize(st)
		if sz < 0 || body+sz > len(payload) {
			return &CorruptError{Offset: r.Offset, Msg: fmt.Sprintf("table %s: record value of serial type %d runs past its payload", r.table.Name, st)}
		}
		r.types = append(r.types, st)
		r.starts = append(r.starts, body)
		body += sz
	}
	return nil
}

// serialSize is the size of a value of serial type st, -1 if reserved.
func serialSize(st uint64) int {
	switch {
	case st <= 4:
		return [...]int{0, 1, 2, 3, 4}[st]
	case st == 5:
		return 6
	case st == 6, st == 7:
		return 8
	case st == 8, st == 9:
		return 0
	case st >= 12:
		if st > math.MaxInt32 {
			return -1
		}
		return int(st-12) / 2
	}
	return -1
}

// Len is the number of values the record stores (a row written before an
// ALTER TABLE ADD COLUMN stores fewer than the table has; the missing
// trailing ones read as NULL).
func (r *Row) Len() int { return len(r.types) }

// Type returns the storage class of column i.
func (r *Row) Type(i int) Type {
	if i == r.table.RowidColumn {
		return Integer
	}
	if i < 0 || i >= len(r.types) {
		return Null
	}
	switch st := r.types[i]; {
	case st == 0:
		return Null
	case st <= 6 || st == 8 || st == 9:
		return Integer
	case st == 7:
		return Float
	case st >= 13 && st%2 == 1:
		return Text
	default:
		return Blob
	}
}

// Int returns column i as an integer; ok is false for NULL, text and
// blobs. A REAL with an integral value converts.
func (r *Row) Int(i int) (v int64, ok bool) {
	if i == r.table.RowidColumn && i >= 0 {
		return r.Rowid, true
	}
	if i < 0 || i >= len(r.types) {
		return 0, false
	}
	b := r.data[r.starts[i]:]
	switch st := r.types[i]; st {
	case 1:
		return int64(int8(b[0])), true
	case 2:
		return int64(int16(binary.BigEndian.Uint16(b))), true
	case 3:
		return int64(int32(uint32(b[0])<<16|uint32(b[1])<<8|uint32(b[2]))<<8) >> 8, true
	case 4:
		return int64(int32(binary.BigEndian.Uint32(b))), true
	case 5:
		u := uint64(binary.BigEndian.Uint16(b))<<32 | uint64(binary.BigEndian.Uint32(b[2:]))
		return int64(u<<16) >> 16, true
	case 6:
		return int64(binary.BigEndian.Uint64(b)), true
	case 7:
		f := math.Float64frombits(binary.BigEndian.Uint64(b))
		if f == math.Trunc(f) && math.Abs(f) < 1<<62 {
			return int64(f), true
		}
		return 0, false
	case 8:
		return 0, true
	case 9:
		return 1, true
	}
	return 0, false
}

// Float returns column i as a float; ok is false for NULL, text and blobs.
func (r *Row) Float(i int) (float64, bool) {
	if i >= 0 && i < len(r.types) && r.types[i] == 7 {
		return math.Float64frombits(binary.BigEndian.Uint64(r.data[r.starts[i]:])), true
	}
	v, ok := r.Int(i)
	return float64(v), ok
}

// Text returns the bytes of a TEXT or BLOB column i (nil otherwise). They
// are valid only until the scan moves on; copy to keep them.
func (r *Row) Text(i int) []byte {
	if i < 0 || i >= len(r.types) || r.types[i] < 12 {
		return nil
	}
	s := r.starts[i]
	return r.data[s : s+serialSize(r.types[i])]
}

// parseCreate reads the column names out of a CREATE TABLE statement, the
// column that aliases the rowid (a column of type INTEGER declared PRIMARY
// KEY, or named alone in a table PRIMARY KEY clause), and whether the
// table is WITHOUT ROWID.
func parseCreate(sql string) (cols []string, rowid int, withoutRowid bool) {
	rowid = -1
	toks := tokenize(sql)
	open := -1
	for i, t := range toks {
		if t == "(" {
			open = i
			break
		}
	}
	if open < 0 {
		return nil, -1, false
	}
	depth := 0
	var def []string
	var pkCols [][]string
	flush := func() {
		if len(def) == 0 {
			return
		}
		switch strings.ToUpper(def[0]) {
		case "CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN":
			up := strings.ToUpper(strings.Join(def, " "))
			if strings.Contains(up, "PRIMARY KEY") {
				pkCols = append(pkCols, def)
			}
		default:
			cols = append(cols, unquote(def[0]))
			up := strings.ToUpper(strings.Join(def[1:], " "))
			if len(def) > 1 && strings.EqualFold(def[1], "INTEGER") && strings.Contains(up, "PRIMARY KEY") && !strings.Contains(up, "PRIMARY KEY DESC") {
				rowid = len(cols) - 1
			}
		}
		def = def[:0]
	}
	end := len(toks)
	for i := open + 1; i < len(toks); i++ {
		t := toks[i]
		switch t {
		case "(":
			depth++
		case ")":
			if depth == 0 {
				flush()
				end = i
				i = len(toks)
				continue
			}
			depth--
		case ",":
			if depth == 0 {
				flush()
				continue
			}
		}
		def = append(def, t)
	}
	for _, t := range toks[min(end+1, len(toks)):] {
		if strings.EqualFold(t, "ROWID") {
			withoutRowid = true
		}
	}
	if rowid < 0 && len(pkCols) == 1 {
		rowid = tablePK(pkCols[0], sql, cols)
	}
	return cols, rowid, withoutRowid
}

// tablePK finds the rowid alias named by a table constraint
// "PRIMARY KEY (col)" over one column of type INTEGER.
func tablePK(def []string, sql string, cols []string) int {
	var names []string
	in := false
	for _, t := range def {
		switch {
		case t == "(":
			in = true
		case t == ")":
			in = false
		case in && t != ",":
			names = append(names, unquote(t))
		}
	}
	if len(names) != 1 {
		return -1
	}
	toks := tokenize(sql)
	for i := 0; i+1 < len(toks); i++ {
		if strings.EqualFold(unquote(toks[i]), names[0]) && strings.EqualFold(toks[i+1], "INTEGER") {
			for j, c := range cols {
				if strings.EqualFold(c, names[0]) {
					return j
				}
			}
		}
	}
	return -1
}

// tokenize splits SQL into identifiers, words, quoted names and
// punctuation, dropping comments and whitespace.
func tokenize(sql string) []string {
	var toks []string
	for i := 0; i < len(sql); {
		c := sql[i]
		switch {
		case c == '-' && i+1 < len(sql) && sql[i+1] == '-':
			for i < len(sql) && sql[i] != '\n' {
				i++
			}
		case c == '/' && i+1 < len(sql) && sql[i+1] == '*':
			j := strings.Index(sql[i+2:], "*/")
			if j < 0 {
				return toks
			}
			i += j + 4
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '"' || c == '`' || c == '\'' || c == '[':
			closer := c
			if c == '[' {
				closer = ']'
			}
			j := i + 1
			for j < len(sql) {
				if sql[j] == closer {
					if closer != ']' && j+1 < len(sql) && sql[j+1] == closer {
						j += 2
						continue
					}
					break
				}
				j++
			}
			toks = append(toks, sql[i:min(j+1, len(sql))])
			i = j + 1
		case c == '(' || c == ')' || c == ',':
			toks = append(toks, string(c))
			i++
		default:
			j := i
			for j < len(sql) && !strings.ContainsRune(" \t\n\r\f(),\"`'[", rune(sql[j])) && !(sql[j] == '-' && j+1 < len(sql) && sql[j+1] == '-') {
				j++
			}
			if j == i {
				j++
			}
			toks = append(toks, sql[i:j])
			i = j
		}
	}
	return toks
}

// unquote strips SQL identifier quotes.
func unquote(s string) string {
	if len(s) >= 2 {
		switch s[0] {
		case '"', '`', '\'':
			if s[len(s)-1] == s[0] {
				return strings.ReplaceAll(s[1:len(s)-1], string(s[0])+string(s[0]), string(s[0]))
			}
		case '[':
			if s[len(s)-1] == ']' {
				return s[1 : len(s)-1]
			}
		}
	}
	return s
}
