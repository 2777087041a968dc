package anatomytest

import (
	"testing"

	"github.com/schedscope/schedscope/analyze"
	"github.com/schedscope/schedscope/collect/agent"
	"github.com/schedscope/schedscope/collect/load"
)

// The agent (its own module), the generator and the analyzer each spell the
// request-anatomy contract; they must agree.
func TestContractAgrees(t *testing.T) {
	for _, c := range []struct{ name, agent, other string }{
		{"task type", agent.RequestTaskType, analyze.RequestTaskType},
		{"handler region", agent.HandlerRegionType, analyze.HandlerRegionType},
		{"log category", agent.RequestLogCategory, analyze.RequestLogCategory},
		{"wait region prefix", agent.WaitRegionPrefix, analyze.WaitRegionPrefix},
		{"request header", agent.RequestHeader, load.RequestHeader},
	} {
		if c.agent != c.other {
			t.Errorf("%s: the agent writes %q, the other side reads %q", c.name, c.agent, c.other)
		}
	}
}
