package main

import (
	"context"
	"strings"
	"testing"
)

const cgoTrace = "../../analyze/testdata/go1.26/cgo.trace"

// A bad --fail-on is a usage error, one line that says what to write.
func TestAnalyzeBadFailOn(t *testing.T) {
	for _, tc := range []struct {
		cond string
		want string
	}{
		{"pinned>>0", `condition "pinned>>0": more than one operator`},
		{"sched.p99>5", `condition "sched.p99>5": sched.p99 is a duration: write a unit: 5ms`},
		{"sched-p99>5ms", `metric "sched-p99" is now spelled "sched.p99"`},
		{"pinned>5ms", `pinned is a count, not a duration`},
		{"pinned>NaN", `value "NaN" is not a finite number`},
		{"p99>5ms", `metric "p99" is not available in a trace, only in a live run`},
		{"pinned>0,bogus>1", `unknown metric "bogus" (a trace has: creation.p99, `},
	} {
		code, _, errOut := runCLI(t, context.Background(), "analyze", "--fail-on", tc.cond, cgoTrace)
		if code != 2 || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("--fail-on %q: exit %d, stderr %q; want exit 2 and one line with %q", tc.cond, code, errOut, tc.want)
		}
	}
}

// Out-of-range numeric flags are usage errors naming the range.
func TestAnalyzeBadBounds(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--sleep", "-1s"}, "--sleep -1s: must be in [0, 1h0m0s] (0: not known)"},
		{[]string{"--sleep", "2h"}, "--sleep 2h0m0s: must be in [0, 1h0m0s]"},
		{[]string{"--top", "-1"}, "--top -1: must be in [1, 10000]"},
		{[]string{"--top", "0"}, "--top 0: must be in [1, 10000]"},
		{[]string{"--top", "100001"}, "--top 100001: must be in [1, 10000]"},
		{[]string{"--pin-threshold", "0s"}, "--pin-threshold 0s: must be in (0, 1h0m0s]"},
		{[]string{"--pin-threshold", "2h"}, "--pin-threshold 2h0m0s: must be in (0, 1h0m0s]"},
	} {
		code, _, errOut := runCLI(t, context.Background(), append(append([]string{"analyze"}, tc.args...), cgoTrace)...)
		if code != 2 || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 and one line with %q", tc.args, code, errOut, tc.want)
		}
	}
	if code, _, errOut := runCLI(t, context.Background(), "analyze", "--top", "1", "--sleep", "0s", cgoTrace); code != 0 {
		t.Errorf("--top 1 --sleep 0s: exit %d, stderr %q", code, errOut)
	}
}

// A condition that holds exits 4 with one line per breach, naming it and
// its figure in the metric's unit; one that does not exits 0.
func TestAnalyzeFailOn(t *testing.T) {
	code, out, errOut := runCLI(t, context.Background(), "analyze",
		"--fail-on", "pinned>0, pinned.syscall>0", "--fail-on", "sched.p99>=1ns", cgoTrace)
	want := []string{
		"schedscope analyze: --fail-on pinned = 3 > 0 (trace " + cgoTrace + ")",
		"schedscope analyze: --fail-on sched.p99 = ",
	}
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	if code != 4 || len(lines) != 2 || lines[0] != want[0] || !strings.HasPrefix(lines[1], want[1]) || !strings.HasSuffix(lines[1], " >= 1ns (trace "+cgoTrace+")") {
		t.Errorf("exit %d, stderr %q; want exit 4 and one line per breach: %q", code, errOut, want)
	}
	if !strings.Contains(out, "Scheduling latency") {
		t.Errorf("the report was not printed before the verdict: %q", out)
	}
	if code, _, errOut := runCLI(t, context.Background(), "analyze", "--fail-on", "pinned>100,lost.pct>0%", cgoTrace); code != 0 {
		t.Errorf("conditions that do not hold: exit %d, stderr %q", code, errOut)
	}
}

// -h lists the metrics each command's conditions may use, with unit and
// doc, each context in its own section, holding no metric of another.
func TestConditionHelp(t *testing.T) {
	for _, tc := range []struct {
		args          []string
		section       string // the section checked, up to the next blank line
		want, notWant []string
	}{
		{[]string{"analyze", "-h"}, "--fail-on conditions: METRIC OP VALUE",
			[]string{"  pinned.cgo ", "  lost.pct ", "percent", "exact from the trace"},
			[]string{"not_sent", "ok_per_s"}},
		{[]string{"analyze", "-h"}, "and on a run directory",
			[]string{"  not_sent ", "  errors ", "load.hlog"},
			[]string{"lost.pct", "creation.p99"}},
		{[]string{"analyze", "-h"}, "and on a sweep directory",
			[]string{"  knee ", "  ceiling "},
			[]string{"not_sent"}},
		{[]string{"run", "-h"}, "--snapshot-when conditions: METRIC OP VALUE",
			[]string{"  not_sent ", "  ok_per_s ", "per second", "sampled"},
			[]string{"pinned", "lost.pct"}},
		{[]string{"compare", "-h"}, "--fail-on conditions on runs",
			[]string{"  p99 ", "  pool.saturated ", "p99>+10%"},
			[]string{"lost.pct", "  knee "}},
	} {
		code, out, _ := runCLI(t, context.Background(), tc.args...)
		if code != 0 {
			t.Errorf("%v: exit %d", tc.args, code)
		}
		i := strings.Index(out, tc.section)
		if i < 0 {
			t.Errorf("%v: no section %q in\n%s", tc.args, tc.section, out)
			continue
		}
		section, _, _ := strings.Cut(out[i:], "\n\n")
		for _, w := range tc.want {
			if !strings.Contains(section, w) {
				t.Errorf("%v: no %q in\n%s", tc.args, w, section)
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(section, w) {
				t.Errorf("%v: section %q lists %q, a metric of another context", tc.args, tc.section, w)
			}
		}
	}
}
