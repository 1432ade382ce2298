package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer/html"
)

// renderUnsafe renders Markdown the way the most permissive renderer
// would: raw HTML passed through. Escaped names must stay inert even then.
func renderUnsafe(t *testing.T, md string) string {
	t.Helper()
	var b bytes.Buffer
	gm := goldmark.New(goldmark.WithExtensions(extension.GFM), goldmark.WithRendererOptions(html.WithUnsafe()))
	if err := gm.Convert([]byte(md), &b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestCode(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"aten::mm", "`aten::mm`"},
		{"", "—"},
		{"a`b", "``a`b``"},
		{"`x`", "`` `x` ``"},
		{"a``b`", "``` a``b` ```"},
		{" padded ", "`  padded  `"},
		{"line\nbreak\x1b[31m", "`line␊break␛[31m`"},
		{"bidi\u202eevil", "`bidi\uFFFDevil`"},
		{"bad\xffutf8", "`bad\uFFFDutf8`"},
	} {
		if got := Code(tc.in); got != tc.want {
			t.Errorf("Code(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCodeRendersVerbatim(t *testing.T) {
	for _, name := range []string{"<script>alert(1)</script>|x`y\x1b[31m", "a``b`", "`x`", "**bold** _it_ [l](http://x)", " padded "} {
		out := renderUnsafe(t, "| k |\n|---|\n| "+cell(Code(name))+" |\n")
		if strings.Contains(out, "<script") || strings.Contains(out, "<strong>") || strings.Contains(out, "<a ") {
			t.Errorf("Code(%q) rendered markup: %s", name, out)
		}
		if strings.Count(out, "<td>") != 1 {
			t.Errorf("Code(%q) split the cell: %s", name, out)
		}
	}
}

func TestText(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain words 12.5%", "plain words 12.5%"},
		{"a_b*c", `a\_b\*c`},
		{"<b>&amp;", `\<b\>\&amp;`},
		{"[x](y) ![i](j)", `\[x\](y) \!\[i\](j)`},
		{"`code`", "\\`code\\`"},
		{"back\\slash", `back\\slash`},
		{"two\nlines", "two␊lines"},
	} {
		if got := Text(tc.in); got != tc.want {
			t.Errorf("Text(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	out := renderUnsafe(t, "- "+Text("<script>x</script> **b** [l](http://e) &lt; \\")+"\n")
	for _, bad := range []string{"<script", "<strong>", "<a "} {
		if strings.Contains(out, bad) {
			t.Errorf("Text rendered %s: %s", bad, out)
		}
	}
}

func TestTableColumns(t *testing.T) {
	tb := newTable(left("Name"), right("Count"))
	tb.add(Code("a|b"), "1")
	tb.add(Text("x\\|y"), "2")
	tb.add("", "3")
	var b strings.Builder
	if err := tb.write(&b); err != nil {
		t.Fatal(err)
	}
	checkTables(t, "unit", b.String())
	if !strings.Contains(b.String(), "|---|---:|") {
		t.Errorf("alignment row wrong:\n%s", b.String())
	}
	out := renderUnsafe(t, b.String())
	if n := strings.Count(out, "<td"); n != 6 {
		t.Errorf("rendered %d cells, want 6:\n%s", n, out)
	}

	bad := newTable(left("A"), left("B"))
	bad.add("only one")
	if err := bad.write(&b); err == nil {
		t.Error("a row with the wrong cell count was accepted")
	}
}

func TestShorten(t *testing.T) {
	if got := shorten("abcdefghij", 6); got != "abc…ij" {
		t.Errorf("shorten = %q", got)
	}
	if got := shorten("short", 10); got != "short" {
		t.Errorf("shorten = %q", got)
	}
}

func TestAllowedHTML(t *testing.T) {
	for s, want := range map[string]bool{
		"<details><summary>Full kernel names</summary>": true,
		"</details>":                           true,
		"<details><summary><b>x</b></summary>": false,
		"<details open onclick=x>":             false,
		"<script>":                             false,
	} {
		if allowedHTML(s) != want {
			t.Errorf("allowedHTML(%q) = %v", s, !want)
		}
	}
}

// checkTables asserts that every row of every GFM table in md has the
// header's number of cells, counting only unescaped pipes outside fenced
// code blocks.
func checkTables(t *testing.T, name, md string) int {
	t.Helper()
	tables := 0
	want := -1
	fenced := false
	for i, line := range strings.Split(md, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "|") {
			want = -1
			continue
		}
		n := cells(line)
		if want < 0 {
			want = n
			tables++
			continue
		}
		if n != want {
			t.Errorf("%s:%d: table row has %d cells, header has %d: %s", name, i+1, n, want, line)
		}
	}
	return tables
}

// cells counts the cells of a table row: pipes preceded by an even number
// of backslashes separate cells.
func cells(line string) int {
	pipes := 0
	for i := 0; i < len(line); i++ {
		if line[i] != '|' {
			continue
		}
		bs := 0
		for j := i - 1; j >= 0 && line[j] == '\\'; j-- {
			bs++
		}
		if bs%2 == 0 {
			pipes++
		}
	}
	return pipes - 1
}
