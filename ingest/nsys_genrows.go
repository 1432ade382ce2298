package ingest

import (
	"math"
	"strings"

	"github.com/tracelens/tracelens/ingest/internal/sqlfile"
)

// genSource is a source export opened, with how its copies move.
type genSource struct {
	NsysSource
	db *sqlfile.DB
	// strBase is added to its StringIds ids; span is how far in time
	// one copy follows the previous; corrSpan how far its correlation
	// ids move per copy.
	strBase, span, corrSpan int64
}

func newGenSource(s NsysSource) (*genSource, error) {
	db, err := sqlfile.Open(s.R, s.Size)
	if err != nil {
		return nil, err
	}
	gs := &genSource{NsysSource: s, db: db}
	gs.Copies = max(gs.Copies, 1)
	lo, hi, corr := int64(math.MaxInt64), int64(math.MinInt64), int64(0)
	for _, t := range db.Tables() {
		if !nsysReplicated[t.Name] {
			continue
		}
		si, ei, ci := t.Column("start"), t.Column("end"), t.Column("correlationId")
		err := db.Scan(t, func(r *sqlfile.Row) error {
			if v, ok := r.Int(si); ok {
				lo = min(lo, v)
			}
			if v, ok := r.Int(ei); ok {
				hi = max(hi, v)
			}
			if v, ok := r.Int(ci); ok {
				corr = max(corr, v)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if hi >= lo {
		gs.span = hi - lo + 1000
	}
	gs.corrSpan = corr + 1
	return gs, nil
}

// nsysGen is WriteNsys at work.
type nsysGen struct {
	wr    *sqlfile.Writer
	srcs  []*genSource
	stats *NsysStats
	vals  []sqlfile.Value
	rec   []byte
}

// strings writes StringIds: every source's, each after the first moved
// past the largest id before it.
func (g *nsysGen) strings() error {
	t := g.srcs[0].db.Table(tabStrings)
	if t == nil {
		return nil
	}
	tw, err := g.wr.Create(t.Name, t.SQL())
	if err != nil {
		return err
	}
	var base int64
	for _, s := range g.srcs {
		s.strBase = base
		ts := s.db.Table(tabStrings)
		if ts == nil {
			continue
		}
		top := base
		c := copier{g: g, tw: tw, out: t, src: s, in: ts, strings: true}
		err := s.db.Scan(ts, func(r *sqlfile.Row) error {
			top = max(top, r.Rowid+base+1)
			return c.row(r, 0)
		})
		if err != nil {
			return err
		}
		base = top
	}
	return nil
}

// table writes table t of the first source: the event tables' rows from
// every source and copy, the per-process tables' from every source, any
// other table's from the first source.
func (g *nsysGen) table(t *sqlfile.Table) error {
	tw, err := g.wr.Create(t.Name, t.SQL())
	if err != nil {
		return err
	}
	srcs := g.srcs
	if !nsysReplicated[t.Name] && !nsysPerProcess[t.Name] {
		srcs = srcs[:1]
	}
	var rowid int64
	for _, s := range srcs {
		ts := s.db.Table(t.Name)
		if ts == nil {
			continue
		}
		copies := 1
		if nsysReplicated[t.Name] {
			copies = s.Copies
		}
		c := copier{g: g, tw: tw, out: t, src: s, in: ts, rowid: &rowid, renumber: len(srcs) > 1 || copies > 1}
		for k := 0; k < copies; k++ {
			if err := s.db.Scan(ts, func(r *sqlfile.Row) error { return c.row(r, int64(k)) }); err != nil {
				return err
			}
		}
	}
	return nil
}

// copier copies rows of table in of one source into table out.
type copier struct {
	g       *nsysGen
	tw      *sqlfile.TableWriter
	out, in *sqlfile.Table
	src     *genSource
	// rowid is the last rowid written: with renumber rows are numbered
	// on from it, else they keep their own; strings marks StringIds,
	// whose rowid is the id and moves by the source's strBase.
	rowid    *int64
	renumber bool
	strings  bool
	cols     []int // out's columns in in (-1: absent)
}

// row writes r as copy k.
func (c *copier) row(r *sqlfile.Row, k int64) error {
	if c.cols == nil {
		for _, name := range c.out.Columns {
			c.cols = append(c.cols, c.in.Column(name))
		}
	}
	g, s := c.g, c.src
	g.vals = g.vals[:0]
	for j, i := range c.cols {
		v := sqlfile.Value{}
		if i >= 0 && j != c.out.RowidColumn {
			v = r.Value(i)
		}
		if v.Type == sqlfile.Integer {
			v.Int = s.move(c.out.Columns[j], v.Int, k)
		}
		g.vals = append(g.vals, v)
	}
	rowid := r.Rowid
	switch {
	case c.strings:
		rowid += s.strBase
	case c.renumber:
		rowid = *c.rowid + 1
	}
	if c.rowid != nil {
		*c.rowid = rowid
	}
	g.rec = sqlfile.AppendRecord(g.rec[:0], g.vals)
	g.stats.Rows[c.out.Name]++
	return c.tw.Append(rowid, g.rec)
}

// move gives an integer of column col its value in copy k of s.
func (s *genSource) move(col string, v, k int64) int64 {
	switch {
	case col == "start" || col == "end":
		return v + k*s.span
	case col == "correlationId" && v != 0:
		return v + k*s.corrSpan
	case nsysStringCols[col]:
		return v + s.strBase
	case s.PID > 0 && (col == "globalPid" || strings.HasSuffix(col, "lobalTid")):
		return v&^(0xFFFFFF<<24) | s.PID<<24
	case s.PID > 0 && (col == "pid" || col == "processId"):
		return s.PID
	}
	return v
}
