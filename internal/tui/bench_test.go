package tui

import (
	"io"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
)

// BenchmarkDashboardFrame measures what the dashboard costs per Frame: one
// Update with a new Frame plus one View at 120x40, with a minute of history
// in the charts (the program calls View once per message; at 4 Frames a
// second that is 4 renders a second). Besides ns/op (wall time, inflated
// when other processes share the CPU) it reports the process's CPU time per
// frame (GC included) and what that is as a share of one core at 4 Frames/s:
// the budget is 3 %.
func BenchmarkDashboardFrame(b *testing.B) {
	frames := sampleFrames(240)
	var m tea.Model = sized(NewDashboard(b.Context(), DashboardConfig{}), 120, 40)
	for _, f := range frames {
		m, _ = m.Update(frameMsg(f))
	}
	last := frames[len(frames)-1]
	b.ReportAllocs()
	cpu0 := processCPU(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		last.Phase.RunElapsed += 250 * time.Millisecond
		last.Load.P99 += time.Millisecond
		m, _ = m.Update(frameMsg(last))
		_ = m.View()
	}
	b.StopTimer()
	perFrame := float64(processCPU(b)-cpu0) / float64(b.N)
	b.ReportMetric(perFrame, "cpu-ns/frame")
	b.ReportMetric(100*4*perFrame/1e9, "%core@4fps")
}

// processCPU is the process's user+system CPU time.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkDashboardProgram runs the whole program (model, renderer and
// output to io.Discard, 120x40) at the dashboard's real pace: one Frame
// every 250 ms, so each op takes 250 ms of wall time. It reports the
// process's CPU time over wall time as a share of one core: the budget is
// 3 %. Run it with a fixed count, e.g. -benchtime 40x (10 s).
func BenchmarkDashboardProgram(b *testing.B) {
	frames := make(chan Frame)
	in, keys := io.Pipe()
	defer keys.Close()
	done := make(chan error, 1)
	go func() {
		_, err := RunDashboard(b.Context(), Terminal{In: in, Out: io.Discard, Env: []string{"TERM=xterm-256color", "COLORTERM=truecolor"}},
			DashboardConfig{Frames: frames})
		done <- err
	}()
	sample := sampleFrames(240)
	for _, f := range sample[:200] { // a minute of history first
		frames <- f
	}
	last := sample[239]
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	b.ResetTimer()
	cpu0, wall0 := processCPU(b), time.Now()
	for i := 0; i < b.N; i++ {
		<-tick.C
		last.Phase.RunElapsed += 250 * time.Millisecond
		last.Load.P99 += time.Millisecond
		frames <- last
	}
	cpu, wall := processCPU(b)-cpu0, time.Since(wall0)
	b.StopTimer()
	b.ReportMetric(100*float64(cpu)/float64(wall), "%core")
	keys.Write([]byte("q"))
	if err := <-done; err != nil {
		b.Fatal(err)
	}
}
