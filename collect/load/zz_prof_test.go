package load

import (
	"context"
	"os"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"
)

func TestZZProfile(t *testing.T) {
	url := os.Getenv("PROF_URL")
	if url == "" {
		t.Skip()
	}
	cfg := Config{URL: url, Duration: 5 * time.Second}
	if u, _ := strconv.Atoi(os.Getenv("PROF_USERS")); u > 0 {
		cfg.Users = u
	}
	if r, _ := strconv.ParseFloat(os.Getenv("PROF_RATE"), 64); r > 0 {
		cfg.Rate = r
	}
	if os.Getenv("PROF_CLIENT") != "" {
		cfg.Client = Client(os.Getenv("PROF_CLIENT"))
	}
	f, _ := os.Create("/tmp/prof/cpu.pprof")
	pprof.StartCPUProfile(f)
	res, err := Run(context.Background(), cfg)
	pprof.StopCPUProfile()
	if err != nil {
		t.Fatal(err)
	}
	p := res.Phases[0]
	t.Logf("ok/s %.0f sent %d notsent %d cpu/req %.1f us cores %.2f lag p50 %.3f p99 %.3f max %.3f lat p99 %.2f", p.OKPerS, p.Sent, p.NotSent, p.GeneratorCPUUSPerReq, p.GeneratorCPUCores, p.SendLag.P50, p.SendLag.P99, p.SendLag.Max, p.Latency.P99)
}
