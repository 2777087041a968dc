package sweep

import (
	"fmt"
	"strconv"
	"strings"
)

// FixtureTarget is a target built from the --fixture shorthand.
type FixtureTarget struct {
	Argv     []string // exe fixture ARGS --addr ADDR
	URL      string   // http://ADDR/SCENARIO[?QUERY]
	Agent    string   // http://ADDR/debug/schedscope/
	Scenario string
	Model    string // "" when the spec does not say (the fixture's default)
	// Workers is the --workers value given in the spec, 0 when absent.
	Workers int
}

// fixtureScenarios are the fixture's scenario paths a sweep can load.
var fixtureScenarios = map[string]bool{"sleep": true, "cpu": true, "fanout": true, "db": true, "split": true, "pinned": true}

// ParseFixture turns the shorthand "SCENARIO[?QUERY] [FIXTURE FLAGS...]"
// (such as "sleep --model pool --workers 8" or "cpu?rounds=20000") into a
// target that runs `exe fixture FLAGS --addr ADDR` and loads
// http://ADDR/SCENARIO?QUERY. exe is normally os.Executable(), addr a free
// loopback address. Words are split on white space; quotes are not
// interpreted.
func ParseFixture(spec, exe, addr string) (FixtureTarget, error) {
	words := strings.Fields(spec)
	if len(words) == 0 {
		return FixtureTarget{}, fmt.Errorf("--fixture %q: want 'SCENARIO [--model M] [fixture flags]'", spec)
	}
	scenario, query, _ := strings.Cut(words[0], "?")
	if !fixtureScenarios[scenario] {
		return FixtureTarget{}, fmt.Errorf("--fixture %q: unknown scenario %q (known: sleep, cpu, fanout, db, split, pinned)", spec, scenario)
	}
	ft := FixtureTarget{Scenario: scenario}
	args := words[1:]
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") {
			continue
		}
		if name == "addr" {
			return FixtureTarget{}, fmt.Errorf("--fixture %q: do not give --addr, the sweep picks a free port", spec)
		}
		if name != "model" && name != "workers" {
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				return FixtureTarget{}, fmt.Errorf("--fixture %q: --%s needs a value", spec, name)
			}
			value = args[i+1]
		}
		switch name {
		case "model":
			ft.Model = value
		case "workers":
			n, err := strconv.Atoi(value)
			if err != nil || n < 1 {
				return FixtureTarget{}, fmt.Errorf("--fixture %q: --workers %q: want a positive integer", spec, value)
			}
			ft.Workers = n
		}
	}
	ft.Argv = append([]string{exe, "fixture"}, args...)
	ft.Argv = append(ft.Argv, "--addr", addr)
	ft.URL = "http://" + addr + "/" + scenario
	if query != "" {
		ft.URL += "?" + query
	}
	ft.Agent = "http://" + addr + "/debug/schedscope/"
	return ft, nil
}

// Bounded reports whether the fixture's model caps requests in service.
func (f FixtureTarget) Bounded() bool {
	return f.Model == "pool" || f.Model == "threads" || f.Model == "bulkhead"
}

// ConcurrencyLimit is the fixture's cap on requests in service for a bounded
// model: the --workers given, or the fixture's default max(8 x GOMAXPROCS,
// 200) when that is the same for every swept value (maxGOMAXPROCS <= 25);
// 0 for an unbounded model or when the default varies.
func (f FixtureTarget) ConcurrencyLimit(maxGOMAXPROCS int) int {
	switch {
	case !f.Bounded():
		return 0
	case f.Workers > 0:
		return f.Workers
	case 8*maxGOMAXPROCS <= 200:
		return 200
	}
	return 0
}
