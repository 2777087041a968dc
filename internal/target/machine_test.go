package target

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

func TestFreeLoopbackAddrAvoidsEphemeralPorts(t *testing.T) {
	low := ephemeralLow()
	if low <= 10000 {
		t.Skipf("ephemeral range starts at %d: nothing to avoid", low)
	}
	addr, err := FreeLoopbackAddr()
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := strings.Cut(addr, ":")
	if n, _ := strconv.Atoi(port); n < 10000 || n >= low {
		t.Errorf("port %d: want one in [10000, %d), below the ephemeral range", n, low)
	}
}

func TestCPUList(t *testing.T) {
	got, err := ParseCPUList("4-6, 1,5")
	if err != nil || fmt.Sprint(got) != "[1 4 5 6]" {
		t.Errorf("ParseCPUList = %v, %v; want [1 4 5 6]", got, err)
	}
	for _, bad := range []string{"", "x", "3-1", "-2", "1-"} {
		if _, err := ParseCPUList(bad); err == nil {
			t.Errorf("ParseCPUList(%q): no error", bad)
		}
	}
	for _, s := range []string{"0", "0-3", "0-1,3,5-7", "2,4"} {
		cpus, err := ParseCPUList(s)
		if err != nil || FormatCPUList(cpus) != s {
			t.Errorf("FormatCPUList(ParseCPUList(%q)) = %q, %v", s, FormatCPUList(cpus), err)
		}
	}
}

func TestBusyShare(t *testing.T) {
	a, b := MachineCPU{Busy: 100, Idle: 300}, MachineCPU{Busy: 130, Idle: 370}
	if got := b.BusyShare(a); got != 0.3 {
		t.Errorf("BusyShare = %v, want 0.3", got)
	}
	if got := a.BusyShare(a); got != 0 {
		t.Errorf("BusyShare over nothing = %v, want 0", got)
	}
	if _, err := ReadMachineCPU(); err != nil {
		t.Logf("no /proc/stat here: %v", err)
	}
}
