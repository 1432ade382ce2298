// Package export turns traces into small, typed, columnar tables that
// engines built for fleets of data (DuckDB, Spark, Trino, BigQuery) query
// directly, so no single tracelens process has to hold hundreds of GB of
// traces.
//
// Each input trace is read, analyzed and written as one Parquet file per
// table (kernels, ops, steps, findings, runs) under the output
// directory's table subdirectories; the schema (row types in schema.go,
// documented in docs/parquet-schema.md) is versioned by SchemaVersion.
// Run exports many inputs in parallel, holding one trace at a time per
// worker, and skips inputs whose tables already exist for the same
// content hash, so an interrupted export resumes where it stopped.
//
// Row builders only read the trace model and analyze's Result: every
// figure in the tables is the one `tracelens report` prints, in integer
// nanoseconds instead of microseconds.
package export
