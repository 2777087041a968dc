package layout

import (
	"bufio"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// root is the repository root, from this package's directory.
const root = "../.."

// goCommand returns the go command on PATH, skipping the test without one.
func goCommand(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command on PATH: %v", err)
	}
	return gobin
}

// workspacePackages returns every package of the workspace, as the README's
// Architecture section names them: the import path without the module
// prefix ("analyze", "collect/agent/prom").
func workspacePackages(t *testing.T) []string {
	t.Helper()
	work, err := filepath.Abs(filepath.Join(root, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goCommand(t), "list", "./...", "./collect/agent/...", "./collect/agent/prom/...")
	cmd.Dir = root
	// The workspace's own go.work, even when the caller set GOWORK=off
	// (as .ci/run does for a module alone): the list is the workspace's.
	cmd.Env = append(os.Environ(), "GOWORK="+work)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []string
	for _, line := range strings.Fields(string(out)) {
		rest, ok := strings.CutPrefix(line, module)
		if !ok {
			t.Fatalf("go list printed %q, outside module %s", line, module)
		}
		pkgs = append(pkgs, rest)
	}
	slices.Sort(pkgs)
	return pkgs
}

// readmePackages returns the package names of the README's Architecture
// section: the first word, without its trailing slash, of every line of
// the section's first code block.
func readmePackages(t *testing.T, readme string) []string {
	t.Helper()
	f, err := os.Open(readme)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var pkgs []string
	section, block := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "## "):
			if section && block {
				t.Fatalf("%s: the Architecture section's code block is not closed", readme)
			}
			section = line == "## Architecture"
		case !section:
		case strings.HasPrefix(line, "```"):
			if block {
				slices.Sort(pkgs)
				return pkgs
			}
			block = true
		case block && strings.TrimSpace(line) != "":
			pkgs = append(pkgs, strings.TrimSuffix(strings.Fields(line)[0], "/"))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("%s: no code block in a \"## Architecture\" section", readme)
	return nil
}

// TestREADMEListsEveryPackage keeps the README's Architecture list equal to
// `go list ./... ./collect/agent/... ./collect/agent/prom/...`: one line per
// package, its path (with a trailing slash) first. A package added, moved
// or removed without its line fails here.
func TestREADMEListsEveryPackage(t *testing.T) {
	want := workspacePackages(t)
	got := readmePackages(t, filepath.Join(root, "README.md"))
	for _, p := range want {
		if !slices.Contains(got, p) {
			t.Errorf("README.md's Architecture section does not list %s/ (go list does)", p)
		}
	}
	for i, p := range got {
		if !slices.Contains(want, p) {
			t.Errorf("README.md's Architecture section lists %s/, which go list does not print", p)
		}
		if i > 0 && got[i-1] == p {
			t.Errorf("README.md's Architecture section lists %s/ twice", p)
		}
	}
}

// folderRef matches a folder named in prose: a path of lower-case words
// ending in a slash ("internal/tui/", "collect/").
var folderRef = regexp.MustCompile(`(?:^|[\s(` + "`" + `])([a-z][a-z0-9_-]*(?:/[a-z][a-z0-9_-]*)*/)`)

// TestMainPackageCommentNamesRealFolders checks that every folder
// cmd/schedscope's package comment names exists.
func TestMainPackageCommentNamesRealFolders(t *testing.T) {
	path := filepath.Join(root, "cmd", "schedscope", "main.go")
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil {
		t.Fatalf("%s has no package comment", path)
	}
	refs := folderRef.FindAllStringSubmatch(f.Doc.Text(), -1)
	if len(refs) == 0 {
		t.Fatalf("%s's package comment names no folder; this test would pass vacuously", path)
	}
	for _, m := range refs {
		if fi, err := os.Stat(filepath.Join(root, m[1])); err != nil || !fi.IsDir() {
			t.Errorf("%s's package comment names %s, which is not a folder of the repository", path, m[1])
		}
	}
}
