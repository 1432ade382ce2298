package export

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// rowGroupRows bounds a row group: the writer holds one row group's
// compressed pages in memory, so this bounds the memory a big table takes
// while it is written (a million kernel rows compress to a few MB).
const rowGroupRows = 1 << 20

// batchRows is how many rows are handed to the Parquet writer at once.
const batchRows = 4096

// identity is what a table file was exported from: the input's content
// hash and, for a rank of a job, the job's hash (its rows depend on the
// other ranks too). Both go into every file's key/value metadata.
type identity struct {
	ContentHash, JobHash string
}

// writeTable writes the rows fill emits to a new Parquet file at path,
// zstd-compressed, with the table's name, the schema version and the
// input's identity in the file's key/value metadata. On error the file is
// removed.
func writeTable[T any](path, table string, id identity, fill func(emit func(T) error) error) (err error) {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(path)
		}
	}()
	buf := bufio.NewWriterSize(f, 1<<20)
	opts := []parquet.WriterOption{
		parquet.Compression(&zstd.Codec{Level: zstd.SpeedDefault}),
		parquet.MaxRowsPerRowGroup(rowGroupRows),
		parquet.CreatedBy("tracelens", strconv.Itoa(SchemaVersion), ""),
		parquet.KeyValueMetadata(MetaTable, table),
		parquet.KeyValueMetadata(MetaSchemaVersion, strconv.Itoa(SchemaVersion)),
		parquet.KeyValueMetadata(MetaContentHash, id.ContentHash),
		parquet.KeyValueMetadata(MetaColumns, columnsOf[T]()),
	}
	if id.JobHash != "" {
		opts = append(opts, parquet.KeyValueMetadata(MetaJobHash, id.JobHash))
	}
	w := parquet.NewGenericWriter[T](buf, opts...)
	batch := make([]T, 0, batchRows)
	flush := func() error {
		if _, err := w.Write(batch); err != nil {
			return fmt.Errorf("writing %s rows: %w", table, err)
		}
		batch = batch[:0]
		return nil
	}
	err = fill(func(row T) error {
		batch = append(batch, row)
		if len(batch) == cap(batch) {
			return flush()
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := flush(); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("closing %s table: %w", table, err)
	}
	if err := buf.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// readMeta returns the key/value metadata of the Parquet file at path.
func readMeta(path string) (map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	pf, err := parquet.OpenFile(f, st.Size(), parquet.SkipPageIndex(true), parquet.SkipBloomFilters(true))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	meta := map[string]string{}
	for _, kv := range pf.Metadata().KeyValueMetadata {
		meta[kv.Key] = kv.Value
	}
	return meta, nil
}

// columnsOf hashes the Parquet schema of row type T (see MetaColumns).
func columnsOf[T any]() string {
	h := sha256.Sum256([]byte(parquet.SchemaOf(new(T)).String()))
	return hex.EncodeToString(h[:8])
}

// tableColumns returns columnsOf for the row type of table.
func tableColumns(table string) string {
	switch table {
	case TableKernels:
		return columnsOf[KernelRow]()
	case TableOps:
		return columnsOf[OpRow]()
	case TableSteps:
		return columnsOf[StepRow]()
	case TableFindings:
		return columnsOf[FindingRow]()
	case TableRuns:
		return columnsOf[RunRow]()
	case TableCollectives:
		return columnsOf[CollectiveRow]()
	case TableLedger:
		return columnsOf[LedgerRow]()
	case TableLedgerSegments:
		return columnsOf[LedgerSegmentRow]()
	case TableMemory:
		return columnsOf[MemoryRow]()
	}
	return ""
}
