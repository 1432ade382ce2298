// Package export turns traces into small, typed, columnar tables that
// engines built for fleets of data (DuckDB, Spark, Trino, BigQuery) query
// directly, so no single tracelens process has to hold hundreds of GB of
// traces.
//
// Each input trace is read, analyzed and written as one Parquet file per
// table (kernels, ops, steps, ledger, ledger_segments, memory, collectives,
// findings, runs) under the output directory's table subdirectories; the
// schema (row types in schema.go, ledger.go, memory.go and collectives.go,
// documented in docs/parquet-schema.md) is versioned by SchemaVersion. Run exports many inputs in parallel,
// holding one trace at a time per worker, and skips inputs whose tables
// already exist for the same content hash, so an interrupted export
// resumes where it stopped.
//
// The ranks of a multi-rank run (a directory of rank traces, Input.Job)
// are exported together (job.go): package distributed reads them and
// matches their collectives across ranks once, handing each rank's full
// trace to export as it is read, so every file is still read once; the
// rank columns and the collectives table come from that run.
//
// Row builders only read the trace model, analyze's Result and
// distributed's Run: every figure in the tables is the one `tracelens
// report` prints, in integer nanoseconds instead of microseconds.
package export
