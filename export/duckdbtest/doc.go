// Package duckdbtest reads tracelens's exported Parquet tables back with a
// real engine, DuckDB, and checks them against the CLI's own figures.
//
// It is a module of its own so that the DuckDB binding (and the 131 MB
// library it downloads) stays out of the main module: `go build` and
// `go test ./...` at the root never fetch it; `go tool task test` runs
// these tests from here.
package duckdbtest
