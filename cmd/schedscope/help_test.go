package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
)

// TestHelpTexts runs every command's -h and checks each flag's text: its
// value name is the flag package's type name (a word in backquotes in a usage
// string becomes the value name instead: `-rederive schedscope run`), and
// it states its default once (a usage that states a default the flag package
// prints again reads "default max(...) (default 200)").
func TestHelpTexts(t *testing.T) {
	// The names flag.UnquoteUsage gives a flag without backquotes.
	typeNames := map[string]bool{"": true, "value": true, "string": true, "int": true, "int64": true,
		"uint": true, "uint64": true, "float": true, "duration": true}
	header := regexp.MustCompile(`^  -(\S+)(?: (.*))?$`)
	// A stated default: "(default 10s)", "(default: none)", "; default max(...)".
	stated := regexp.MustCompile(`(\(|; )default\b`)
	invocations := [][]string{{"fixture", "downstream", "-h"}}
	for _, c := range commands() {
		invocations = append(invocations, []string{c.name, "-h"})
	}
	for _, args := range invocations {
		code, out, errOut := runCLI(t, context.Background(), args...)
		if code != 0 || !strings.Contains(out, "\nflags") {
			t.Errorf("%v: exit %d, stderr %q, no flag list in\n%s", args, code, errOut, out)
			continue
		}
		var flags []string // each flag's text: its header line and usage lines
		for line := range strings.Lines(out) {
			switch {
			case header.MatchString(strings.TrimSuffix(line, "\n")):
				flags = append(flags, line)
			case strings.HasPrefix(line, "    \t") && len(flags) > 0:
				flags[len(flags)-1] += line
			}
		}
		if len(flags) == 0 {
			t.Errorf("%v: no flags found in\n%s", args, out)
		}
		for _, f := range flags {
			head, _, _ := strings.Cut(f, "\n")
			m := header.FindStringSubmatch(head)
			if !typeNames[m[2]] {
				t.Errorf("%v: -%s shows the value name %q, from backquotes in its usage:\n%s", args, m[1], m[2], f)
			}
			if n := len(stated.FindAllString(f, -1)); n > 1 {
				t.Errorf("%v: -%s states its default %d times:\n%s", args, m[1], n, f)
			}
		}
	}
}

func TestSleepProbeFlag(t *testing.T) {
	for _, v := range []string{"5", "0:1ms", "5:1ns", "5:11s", "x:1ms", "5:soon"} {
		code, _, errOut := runCLI(t, context.Background(), "run", "--sleep-probe", v, "--rate", "1", "http://127.0.0.1:1/")
		if code != 2 || !strings.Contains(errOut, "--sleep-probe") {
			t.Errorf("--sleep-probe %s: exit %d, %q; want 2 naming the flag", v, code, errOut)
		}
	}
}
