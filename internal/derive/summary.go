package derive

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/schedscope/schedscope/analyze"
	"github.com/schedscope/schedscope/collect/load"
	"github.com/schedscope/schedscope/internal/rundir"
)

// summaryTop is how many rows per profile summary.txt lists.
const summaryTop = 5

// SummaryText is summary.txt's text for a run's manifest m, load result res
// (nil: none was written) and analysis an (nil: none was derived), as Dir
// writes it; it reads no file, so a caller can render fixed data.
func SummaryText(m *rundir.Manifest, res *load.Result, an *rundir.Analysis) string {
	var b strings.Builder
	writeSummary(&b, m, res, an)
	return b.String()
}

// writeSummary renders summary.txt. Write errors surface when the buffer
// is written to the file.
func writeSummary(w io.Writer, m *rundir.Manifest, res *load.Result, an *rundir.Analysis) {
	p := func(format string, args ...any) { fmt.Fprintf(w, format, args...) }
	status := m.Status
	if m.Reason != "" {
		status += ": " + m.Reason
	}
	p("schedscope run against %s (%s)\n", m.Config.TargetURL, status)
	p("started %s, ended %s\n", m.Start.Format("2006-01-02 15:04:05 MST"), m.End.Format("15:04:05"))
	t := m.Target
	p("target: %s", t.Source)
	if t.GoVersion != "" {
		p(", %s, GOMAXPROCS %d of %d CPUs", t.GoVersion, t.GOMAXPROCS, t.NumCPU)
	}
	if t.PID != 0 {
		p(", pid %d", t.PID)
	}
	if len(t.Pools) > 0 {
		p(", pools %s", strings.Join(t.Pools, ", "))
	}
	p("\ngenerator: %s, GOMAXPROCS %d on %d CPUs", m.Generator.GoVersion, m.Generator.GOMAXPROCS, m.Machine.CPUs)
	if m.Machine.LoadAverage != "" {
		p(", load average %s at the start", m.Machine.LoadAverage)
	}
	p("\n\n")

	if an != nil {
		writeDiagnosis(p, an.Diagnosis)
		if an.Trace != nil && an.Trace.Requests != nil {
			writeAnatomy(p, an.Trace.Requests)
		}
	}

	if res != nil {
		p("== load (results.json, load.hlog)\n")
		if err := load.Table(w, res); err != nil {
			p("(table: %v)\n", err)
		}
		p("\n")
	}

	if an != nil && an.MetricsSkipped > 0 {
		p("== %s: lines skipped\n", rundir.MetricsFile)
		shown := an.MetricsProblems[:min(len(an.MetricsProblems), summaryTop)]
		for _, pr := range shown {
			p("- %s\n", pr)
		}
		if n := an.MetricsSkipped - len(shown); n > 0 {
			p("- %d more lines skipped\n", n)
		}
		p("\n")
	}

	if an != nil && len(an.Phases) > 0 {
		p("== target during the steady phases (metrics.jsonl)\n")
		tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "phase\toffered\t2xx/s during\tCPU us/req\tcores\tpeak goroutines\tpeak threads\tsched p99 (sampled)\t")
		for _, f := range an.Phases {
			cpuSrc := ""
			if f.CPUUSPerReq > 0 && !f.CPUFromProc {
				cpuSrc = " (est.)"
			}
			sched := "-"
			if f.SchedLatencyP99MS > 0 {
				sched = fmt.Sprintf("%.2f ms", f.SchedLatencyP99MS)
			}
			fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.0f%s\t%.2f\t%.0f at %.0fs\t%.0f at %.0fs\t%s\t\n",
				f.Name, offered(f, res), f.AchievedPerS, f.CPUUSPerReq, cpuSrc, f.CPUCores,
				f.PeakGoroutines, f.PeakGoroutinesAtS, f.PeakThreads, f.PeakThreadsAtS, sched)
		}
		tw.Flush()
		var pools bool
		for _, f := range an.Phases {
			pools = pools || len(f.Pools) > 0
		}
		if pools {
			p("\npools (saturated = in use == size; capacity = size / mean hold, Little's law)\n")
			tw = tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "phase\tpool\tkind\tsize\tmean in use\tmax\tsaturated\tmean waiting\tmean hold\tcapacity/s\t")
			for _, f := range an.Phases {
				for _, pl := range f.Pools {
					size := fmt.Sprint(pl.Size)
					if pl.Size == 0 {
						size = "unbounded"
					}
					hold, capacity := "-", "-"
					if pl.MeanHoldMS > 0 {
						hold = fmt.Sprintf("%.1f ms (%s)", pl.MeanHoldMS, pl.HoldFrom)
					}
					if pl.CapacityPerS > 0 {
						capacity = fmt.Sprintf("%.0f", pl.CapacityPerS)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.1f\t%d\t%.0f%%\t%.1f\t%s\t%s\t\n", f.Name, pl.Name, pl.Kind, size,
						pl.MeanInUse, pl.MaxInUse, 100*pl.SaturatedShare, pl.MeanWaiting, hold, capacity)
				}
			}
			tw.Flush()
		}
		writeCgroupTable(w, p, an.Phases)
		p("\n")
	}

	if an != nil && len(an.Findings) > 0 {
		p("== findings\n")
		for _, f := range an.Findings {
			p("- %s: %s\n", f.Title, f.Detail)
		}
		p("\n")
	}

	for _, f := range m.Files {
		if f.Name == rundir.SleepProbeFile {
			p("== sleep probe (%s)\n%s\n\n", rundir.SleepProbeFile, strings.TrimSuffix(f.What, " (agent.ProbeResult)"))
		}
	}

	if an != nil {
		for _, s := range an.Profiles {
			p("== %s profile (%s, %s)\n", s.Name, s.File, s.Window)
			if s.Note != "" {
				p("%s\n\n", s.Note)
				continue
			}
			for _, site := range s.Top[:min(len(s.Top), summaryTop)] {
				p("%5.1f%%  %s\n", 100*site.Share, site.Site)
				if s.Name == "fgprof" {
					for _, fr := range site.Stack[:min(len(site.Stack), 4)] {
						p("        %s\n", fr)
					}
				}
			}
			p("\n")
		}
		p("== trace (%s)\n", rundir.TraceFile)
		switch {
		case an.Trace != nil:
			p("%s: %s\n", an.TraceCapture, an.TraceReason)
			if an.TraceError != "" {
				p("(%s)\n", an.TraceError)
			}
			if err := analyze.WriteText(w, an.Trace, summaryTop); err != nil {
				p("(trace report: %v)\n", err)
			}
		default:
			p("%s\n", an.TraceError)
		}
		p("\n")
	}

	if len(m.Missing) > 0 {
		p("== not collected\n")
		for _, x := range m.Missing {
			p("- %s: %s\n", x.What, x.Why)
		}
		p("\n")
	}
	p("== files\n")
	for _, f := range m.Files {
		if f.Name == rundir.SummaryFile {
			continue // this file, written after its listing
		}
		p("%-18s %9d  %s\n", f.Name, f.Bytes, f.What)
	}
}

// offered says what a steady phase offered the target: its rate (open
// model), or its users and think time (closed model, whose offered rate is
// whatever the users' responses allow).
func offered(f rundir.PhaseFigures, res *load.Result) string {
	if res != nil && res.Model == "closed" {
		for _, ph := range res.Phases {
			if ph.Name == f.Name && ph.Users > 0 {
				return fmt.Sprintf("%d users, think %s", ph.Users, time.Duration(res.ThinkMS*float64(time.Millisecond)))
			}
		}
	}
	return fmt.Sprintf("%.0f/s", f.OfferedRate)
}

// writeCgroupTable renders each steady phase's cgroup CPU limit and
// throttling, when a poll read the target's cgroup.
func writeCgroupTable(w io.Writer, p func(format string, args ...any), phases []rundir.PhaseFigures) {
	if !slices.ContainsFunc(phases, func(f rundir.PhaseFigures) bool { return f.Cgroup != nil }) {
		return
	}
	p("\ncgroup CPU limit (cores = quota / period; throttled = periods that ran out of quota; the tightest limit of the cgroup and its parents)\n")
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "phase\tcgroup\tlimit\tset on\tperiods\tthrottled\tthrottled s/s\tcores used\tof limit\t")
	for _, f := range phases {
		cg := f.Cgroup
		if cg == nil {
			continue
		}
		limit, on, of := "none", "-", "-"
		if cg.TightestCores > 0 {
			limit, on, of = fmtCores(cg.TightestCores), cg.TightestPath, fmt.Sprintf("%.0f%%", 100*cg.UseOfLimit)
			if cg.ParentLimit {
				on += " (parent: the runtime does not see it)"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d (%.0f%%)\t%.2f\t%.2f\t%s\t\n", f.Name, cg.Path, limit, on,
			cg.Periods, cg.ThrottledPeriods, 100*cg.ThrottledShare, cg.ThrottledPerS, f.CPUCores, of)
	}
	tw.Flush()
}
