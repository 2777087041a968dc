package layout

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// A quote claim is a paragraph that says where what follows comes from and
// ends with a colon, such as "From its report
// ([sweep-split/report.md](sweep-split/report.md)):". The block after it
// (up to the next blank line, or a whole fenced code block) quotes that file.
var (
	quoteClaim = regexp.MustCompile(`(?i)\bfrom\b[^\n]*\]\(([^)#\s]+)\)[^\n]*:$`)
	figure     = regexp.MustCompile(`\d+(?:[.,]\d+)*`)
)

// quote is one block of a Markdown file that claims to come from a file.
type quote struct {
	doc, file string // the Markdown file and the file it quotes (a path from the repository root)
	line      int    // of the claim in doc
	block     []string
	fenced    bool // block is a fenced code block's lines
}

// quotes returns the quote claims of the Markdown file at path (from the
// repository root) whose target is a file of the repository.
func quotes(t *testing.T, path string) []quote {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var out []quote
	for i, l := range lines {
		m := quoteClaim.FindStringSubmatch(l)
		if m == nil || strings.Contains(m[1], "://") {
			continue
		}
		q := quote{doc: path, file: filepath.Join(filepath.Dir(path), m[1]), line: i + 1}
		j := i + 1
		for j < len(lines) && strings.TrimSpace(lines[j]) == "" {
			j++
		}
		if j < len(lines) && strings.HasPrefix(lines[j], "```") {
			q.fenced = true
			for j++; j < len(lines) && !strings.HasPrefix(lines[j], "```"); j++ {
				q.block = append(q.block, lines[j])
			}
		} else {
			// Up to a blank line, or past it while what follows is more
			// of a report's tables (a row, or a bold line naming a table).
			for ; j < len(lines); j++ {
				if strings.TrimSpace(lines[j]) == "" {
					k := j
					for k < len(lines) && strings.TrimSpace(lines[k]) == "" {
						k++
					}
					if k == len(lines) || !(strings.HasPrefix(lines[k], "|") || strings.HasPrefix(lines[k], "**")) {
						break
					}
					j = k
				}
				q.block = append(q.block, lines[j])
			}
		}
		out = append(out, q)
	}
	return out
}

// TestDocsQuotesMatchTheirFiles checks every quote claim of README.md and
// docs/*.md against the file it names: a table row or a line of a code
// block, or a bold line heading a quoted table, must be a line of the file
// (after trimming spaces; a "[...]" line
// and a "$ command" line are the doc's own), and the figures of a bullet
// (with its wrapped lines) or a prose line must all be on one line of the
// file, so that a quoted report is never reshuffled or invented.
func TestDocsQuotesMatchTheirFiles(t *testing.T) {
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"README.md"}
	for _, d := range docs {
		rel, err := filepath.Rel(root, d)
		if err != nil {
			t.Fatal(err)
		}
		paths = append(paths, rel)
	}
	n := 0
	for _, path := range paths {
		for _, q := range quotes(t, path) {
			b, err := os.ReadFile(filepath.Join(root, q.file))
			if err != nil {
				t.Errorf("%s:%d quotes %s: %v", q.doc, q.line, q.file, err)
				continue
			}
			n++
			for _, p := range checkQuote(q, string(b)) {
				t.Error(p)
			}
		}
	}
	if n == 0 {
		t.Fatal("no quote claim found in the docs: this test would pass vacuously")
	}
}

// checkQuote checks one quote against the text of its file and returns
// what does not match, one line each.
func checkQuote(q quote, file string) []string {
	if len(q.block) == 0 {
		return []string{fmt.Sprintf("%s:%d claims to quote %s but nothing follows", q.doc, q.line, q.file)}
	}
	var problems []string
	fileLines := strings.Split(file, "\n")
	verbatim := map[string]bool{}
	for _, l := range fileLines {
		verbatim[strings.TrimSpace(l)] = true
	}
	// items are the bullets (with their wrapped lines) and prose lines.
	var items []string
	for _, l := range q.block {
		raw := l
		l = strings.TrimSpace(l)
		switch {
		case l == "" || l == "[...]" || strings.HasPrefix(l, "$ "):
		case q.fenced || strings.HasPrefix(l, "|") || strings.HasPrefix(l, "**") && strings.HasSuffix(l, "**"):
			if !verbatim[l] {
				problems = append(problems, fmt.Sprintf("%s:%d: %q is not a line of %s", q.doc, q.line, l, q.file))
			}
		case len(items) > 0 && strings.HasPrefix(raw, " "): // a bullet's wrapped line
			items[len(items)-1] += " " + l
		default:
			items = append(items, l)
		}
	}
	for _, it := range items {
		if !onOneLine(figure.FindAllString(it, -1), fileLines) {
			problems = append(problems, fmt.Sprintf("%s:%d: no line of %s has every figure of %q", q.doc, q.line, q.file, it))
		}
	}
	return problems
}

// onOneLine reports whether some line holds every one of figures, each as a
// whole number (not part of a longer one).
func onOneLine(figures []string, lines []string) bool {
	for _, l := range lines {
		have := map[string]bool{}
		for _, f := range figure.FindAllString(l, -1) {
			have[f] = true
		}
		all := true
		for _, f := range figures {
			all = all && have[f]
		}
		if all {
			return true
		}
	}
	return false
}

// TestCheckQuoteFindsMismatches is checkQuote's positive control: a
// relabelled table row (the old 004 table's "serial 1" over offload's
// figures), a figure the file does not print, and an empty quote are
// caught; a faithful quote is not.
func TestCheckQuoteFindsMismatches(t *testing.T) {
	file := "| offered | 2xx/s |\n|---:|---:|\n| 100 | 99 |\n- **knee**: 100 req/s, p99 52.0 ms, served\n- **over**: 200 req/s, p99 99.0 ms\n"
	for _, tc := range []struct {
		name  string
		q     quote
		wrong int
	}{
		{"faithful", quote{block: []string{"| 100 | 99 |", "- **knee**: 100 req/s,", "  p99 52.0 ms"}}, 0},
		{"relabelled row", quote{block: []string{"| 100 | 99 |", "| 100  | 99 |"}}, 1},
		{"invented figure", quote{block: []string{"- **knee**: 100 req/s, p99 53.0 ms"}}, 1},
		{"code line", quote{fenced: true, block: []string{"$ schedscope sweep", "[...]", "| 100 | 99 |", "| 200 | 99 |"}}, 1},
		{"nothing quoted", quote{}, 1},
		{"bold heading", quote{block: []string{"**GOMAXPROCS 2**", "| 100 | 99 |"}}, 1},
		{"figures from two lines", quote{block: []string{"- **knee**: 100 req/s, p99 99.0 ms"}}, 1},
	} {
		if got := checkQuote(tc.q, file); len(got) != tc.wrong {
			t.Errorf("%s: %d problems %q, want %d", tc.name, len(got), got, tc.wrong)
		}
	}
}
