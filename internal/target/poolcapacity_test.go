package target

import (
	"math"
	"testing"
	"time"

	"github.com/schedscope/schedscope/collect/agent"
)

func TestPoolCapacity(t *testing.T) {
	for _, tc := range []struct {
		name       string
		p0, p1     agent.PoolStats
		dt         float64
		hold, perS float64
	}{
		{
			name: "counted hold time: 50 connections held 200 ms each -> 250/s",
			p0:   agent.PoolStats{Size: 50, Acquired: 100, HoldDuration: 20 * time.Second, Known: agent.Known{Acquired: true}},
			p1:   agent.PoolStats{Size: 50, Acquired: 350, HoldDuration: 70 * time.Second, Known: agent.Known{Acquired: true}},
			dt:   1, hold: 200, perS: 250,
		},
		{
			name: "inferred: 200 workers all busy, 1000 acquired per second -> hold 200 ms, 1000/s",
			p0:   agent.PoolStats{Size: 200, InUse: 200, Acquired: 1000},
			p1:   agent.PoolStats{Size: 200, InUse: 200, Acquired: 2000},
			dt:   1, hold: 200, perS: 1000,
		},
		{name: "unbounded", p0: agent.PoolStats{Acquired: 1}, p1: agent.PoolStats{InUse: 5, Acquired: 9}, dt: 1},
		{name: "nothing acquired", p0: agent.PoolStats{Size: 4, InUse: 4}, p1: agent.PoolStats{Size: 4, InUse: 4}, dt: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hold, perS := PoolCapacity(tc.p0, tc.p1, tc.dt)
			if math.Abs(hold-tc.hold) > 1e-6 || math.Abs(perS-tc.perS) > 1e-6 {
				t.Fatalf("got hold %.3f ms, %.3f/s; want %.3f ms, %.3f/s", hold, perS, tc.hold, tc.perS)
			}
		})
	}
}
