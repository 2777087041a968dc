package layout

import (
	"encoding/json"
	"io"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/schedscope/schedscope/"

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
}

// listPackages runs `go list -deps -json` over the module's packages.
func listPackages(t *testing.T) map[string]pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json", "../../...")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p pkg
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs[strings.TrimPrefix(p.ImportPath, module)] = p
	}
	return pkgs
}

// own returns the module's packages among paths, without the module prefix.
func own(paths []string) []string {
	var out []string
	for _, p := range paths {
		if rest, ok := strings.CutPrefix(p, module); ok {
			out = append(out, rest)
		}
	}
	return out
}

func TestImportsPointOneWay(t *testing.T) {
	pkgs := listPackages(t)
	for _, tc := range []struct {
		pkg string
		// imports lists the only packages of the module it may import
		// directly (nil: any not in banned).
		imports []string
		// banned lists packages it must not depend on, even indirectly.
		banned []string
	}{
		// The leaves. internal/redact, which removes secrets from what is
		// recorded, and internal/regular, which opens input files that must
		// be regular, are below them all: every writer and reader may call
		// them.
		{pkg: "internal/redact", imports: []string{}},
		{pkg: "analyze", imports: []string{}}, // public: imports nothing of schedscope
		{pkg: "internal/regular", imports: []string{}},
		// internal/cgroup, CPU quotas for targets, stands alone.
		{pkg: "internal/cgroup", imports: []string{}},
		{pkg: "collect/load", imports: []string{"internal/redact"}},
		{pkg: "internal/rundir", imports: []string{"analyze", "collect/load", "collect/agent", "internal/redact", "internal/regular"}},
		// The target layer sits on the leaves.
		{pkg: "internal/target", imports: []string{"internal/rundir", "collect/agent", "collect/load", "internal/redact", "internal/regular", "internal/cgroup"}},
		// The collect floor writes raw files: no analysis, no reports, no UI.
		{pkg: "internal/collect", banned: []string{"internal/derive", "internal/report", "internal/capacity", "internal/tui"}},
		{pkg: "internal/sweep", banned: []string{"internal/derive", "internal/report", "internal/capacity", "internal/tui", "internal/collect"}},
		// The analysis floor reads files: no run, no sweep, no UI.
		{pkg: "internal/derive", banned: []string{"internal/collect", "internal/sweep", "internal/tui", "internal/report"}},
		{pkg: "internal/capacity", banned: []string{"internal/collect", "internal/sweep", "internal/tui"}},
		{pkg: "internal/report", banned: []string{"internal/collect", "internal/sweep", "internal/tui"}},
		// The public pinning test helper stands on the public analyzer alone.
		{pkg: "analyze/pintest", imports: []string{"analyze"}},
		// Figures and comparisons read directories: no run, no sweep, no UI.
		{pkg: "internal/figures", banned: []string{"internal/collect", "internal/sweep", "internal/tui"}},
		{pkg: "internal/compare", banned: []string{"internal/collect", "internal/sweep", "internal/tui"}},
		// The TUI is fed frames; it never runs anything itself.
		{pkg: "internal/tui", banned: []string{"internal/collect", "internal/sweep", "internal/target", "internal/fixtures"}},
	} {
		p, ok := pkgs[tc.pkg]
		if !ok {
			t.Errorf("package %s is gone: update this test to the new layout", tc.pkg)
			continue
		}
		if tc.imports != nil {
			for _, imp := range own(p.Imports) {
				if !slices.Contains(tc.imports, imp) {
					t.Errorf("%s imports %s; it may import only %v of this module", tc.pkg, imp, tc.imports)
				}
			}
		}
		deps := own(p.Deps)
		for _, b := range tc.banned {
			if slices.Contains(deps, b) {
				t.Errorf("%s depends on %s (go list -deps)", tc.pkg, b)
			}
		}
	}
	// collect imports no analyze, and analyze no collect, other than the
	// rundir and load types.
	for path, p := range pkgs {
		if strings.HasPrefix(path, "internal/collect") || strings.HasPrefix(path, "internal/sweep") || strings.HasPrefix(path, "internal/target") {
			if slices.Contains(own(p.Imports), "analyze") {
				t.Errorf("%s imports analyze; the collect floor writes files that the analysis floor reads", path)
			}
		}
	}
}
