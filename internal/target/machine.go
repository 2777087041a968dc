package target

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/schedscope/schedscope/internal/rundir"
)

// DescribeMachine reads what it can about this machine; fields it cannot
// read are left empty.
func DescribeMachine() rundir.Machine {
	m := rundir.Machine{CPUs: runtime.NumCPU(), AllowedCPUs: FormatCPUList(AllowedCPUs()),
		GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, GoVersion: runtime.Version(), LoadAverage: LoadAverage()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if name, value, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(name) == "model name" {
				m.CPUModel = strings.TrimSpace(value)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	return m
}

// LoadAverage is /proc/loadavg's first three fields ("0.52 0.61 0.70"), ""
// when it cannot be read.
func LoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// AllowedCPUs returns the CPUs this process may run on, ascending, from
// sched_getaffinity; nil when that fails.
func AllowedCPUs() []int {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil
	}
	var cpus []int
	for i := 0; i < len(set)*64; i++ {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return cpus
}

// FormatCPUList writes ascending CPU numbers as taskset's list: "0-3,6".
func FormatCPUList(cpus []int) string {
	var parts []string
	for i := 0; i < len(cpus); {
		j := i
		for j+1 < len(cpus) && cpus[j+1] == cpus[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(cpus[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", cpus[i], cpus[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, ",")
}

// ParseCPUList parses a taskset-style CPU list ("0-3,8,10-11") into
// ascending CPU numbers, each once.
func ParseCPUList(s string) ([]int, error) {
	seen := map[int]bool{}
	var cpus []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		b := a
		if err == nil && isRange {
			b, err = strconv.Atoi(hi)
		}
		if err != nil || a < 0 || b < a || b > 4095 {
			return nil, fmt.Errorf("CPU list %q: bad element %q (want e.g. 0-3,8)", s, part)
		}
		for c := a; c <= b; c++ {
			if !seen[c] {
				seen[c] = true
				cpus = append(cpus, c)
			}
		}
	}
	if len(cpus) == 0 {
		return nil, fmt.Errorf("CPU list %q: empty", s)
	}
	sort.Ints(cpus)
	return cpus, nil
}

// MachineCPU is the machine's CPU time since boot, from /proc/stat's first
// line, in clock ticks.
type MachineCPU struct {
	Busy, Idle int64 // busy: user, nice, system, irq, softirq, steal; idle: idle, iowait
}

// ReadMachineCPU reads /proc/stat (Linux only).
func ReadMachineCPU() (MachineCPU, error) {
	b, err := os.ReadFile(procRoot + "/stat")
	if err != nil {
		return MachineCPU{}, fmt.Errorf("machine CPU: %w", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return MachineCPU{}, fmt.Errorf("machine CPU: unexpected /proc/stat line %q", line)
	}
	var v [9]int64
	for i := 1; i < len(f) && i < 9; i++ {
		v[i], _ = strconv.ParseInt(f[i], 10, 64)
	}
	// user nice system idle iowait irq softirq steal
	return MachineCPU{Busy: v[1] + v[2] + v[3] + v[6] + v[7] + v[8], Idle: v[4] + v[5]}, nil
}

// BusyShare is the share of the machine's CPU time that was busy between
// two readings, 0 when nothing elapsed.
func (m MachineCPU) BusyShare(since MachineCPU) float64 {
	busy, idle := m.Busy-since.Busy, m.Idle-since.Idle
	if busy+idle <= 0 {
		return 0
	}
	return float64(busy) / float64(busy+idle)
}

// FreeLoopbackAddr returns a 127.0.0.1 address with a port that was free a
// moment ago, for a target that needs its address on the command line. The
// port is chosen below the kernel's ephemeral range
// (/proc/sys/net/ipv4/ip_local_port_range), so that the client side of some
// other connection on a busy machine cannot take it between this check and
// the target's bind; when that range is unknown, any free port is used.
func FreeLoopbackAddr() (string, error) {
	low := ephemeralLow()
	for try := 0; low > 10000 && try < 50; try++ {
		if addr, err := listenAndClose(fmt.Sprintf("127.0.0.1:%d", 10000+rand.IntN(low-10000))); err == nil {
			return addr, nil
		}
	}
	addr, err := listenAndClose("127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("finding a free port: %w", err)
	}
	return addr, nil
}

// listenAndClose binds addr and releases it, returning the address bound.
func listenAndClose(addr string) (string, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	bound := l.Addr().String()
	if err := l.Close(); err != nil {
		return "", err
	}
	return bound, nil
}

// ephemeralLow is the first port of the kernel's ephemeral range, 0 when
// unknown.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) < 1 {
		return 0
	}
	n, err := strconv.Atoi(f[0])
	if err != nil {
		return 0
	}
	return n
}
