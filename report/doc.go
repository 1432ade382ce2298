// Package report writes the investigation report an engineer would
// otherwise write by hand after hours with a profiler: an executive
// summary with numbers, the step breakdown, where GPU time goes by
// category and by module, the top kernels with the operation and Python
// line behind each, findings grouped into tiers by expected saving, a
// roofline table and an appendix, as Markdown (pasteable into a pull
// request or issue), as one self-contained HTML file (the same Markdown
// through goldmark, with inline SVG charts and no JavaScript) or as
// analyze's Result JSON.
//
// Every string that comes from a trace (kernel, op, annotation and file
// names) is untrusted: it goes through Code or Text before it reaches the
// Markdown, and tables are built with a helper that guarantees every row
// has the header's column count.
package report
