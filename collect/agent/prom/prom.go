// Package prom exports a schedscope agent's figures in Prometheus'
// exposition format: the figures no standard collector has — the
// registered pools' usage and waits, the CPU quota and its throttling
// beside GOMAXPROCS, the flight recorder's state and triggers, the last
// sleep probe's overshoot.
//
// It is a module of its own, so that a server that mounts the agent
// without Prometheus does not build github.com/prometheus/client_golang.
// The runtime's own metrics (runtime/metrics: scheduler latencies, GC,
// memory) are client_golang's Go collector's business; register both:
//
//	reg := prometheus.NewRegistry()
//	a, err := agent.New(agent.Options{Exposition: prom.Handler(reg)})
//	...
//	reg.MustRegister(
//		prom.NewCollector(a, prom.Options{}),
//		collectors.NewGoCollector(collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsScheduler)),
//		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
//	)
//	a.Mount(mux, "/debug/schedscope/")
//
// Prometheus then scrapes /debug/schedscope/metrics?format=prometheus,
// behind the agent's guard (loopback or AllowRemote, and its token). A
// registry of the user's own is served the same way; Handler may also be
// mounted on a path of its own (mux.Handle("/metrics", prom.Handler(reg))).
//
// Names follow Prometheus' conventions: base units (seconds, cores),
// counters end in _total, and pools are told apart by the labels pool
// (the registered name) and kind (the adapter).
package prom

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"runtime"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/schedscope/schedscope/collect/agent"
)

// Options configures a Collector. The zero value reads the process's own
// cgroup at the standard places.
type Options struct {
	// CgroupRoot is where the cgroup file system is mounted; empty means
	// /sys/fs/cgroup.
	CgroupRoot string
	// ProcCgroup is the file naming the process's cgroups; empty means
	// /proc/self/cgroup.
	ProcCgroup string
	// NoCPULimit leaves the CPU quota and throttling out.
	NoCPULimit bool
}

// Collector is a prometheus.Collector over an agent. It reads the agent
// on every scrape and keeps no state of its own, so it is safe for
// concurrent use and may be registered in any number of registries.
type Collector struct {
	a    *agent.Agent
	opts Options

	poolSize, poolInUse, poolIdle, poolWaiting  *prometheus.Desc
	poolWait, poolAcquired, poolHold            *prometheus.Desc
	gomaxprocs, numCPU                          *prometheus.Desc
	quota, periods, throttled, throttledSeconds *prometheus.Desc
	frOn, frState, frUntil, frArms, frSnapshots *prometheus.Desc
	probeOvershoot, probeSleep, probeSamples    *prometheus.Desc
	probeGoroutines, probeTime                  *prometheus.Desc
}

var _ prometheus.Collector = (*Collector)(nil)

// Flight recorder states, the values of schedscope_flight_recorder_state's
// label state.
const (
	StateOn          = "on"
	StateOff         = "off"
	StateOnDemand    = "on demand"
	StateUnavailable = "unavailable"
)

// NewCollector returns a collector over a.
func NewCollector(a *agent.Agent, opts Options) *Collector {
	if opts.CgroupRoot == "" {
		opts.CgroupRoot = "/sys/fs/cgroup"
	}
	if opts.ProcCgroup == "" {
		opts.ProcCgroup = "/proc/self/cgroup"
	}
	pool := []string{"pool", "kind"}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc("schedscope_"+name, help, labels, nil)
	}
	return &Collector{
		a: a, opts: opts,
		poolSize:         d("pool_size", "Pool capacity (max open connections, workers); 0 means unbounded.", pool...),
		poolInUse:        d("pool_in_use", "Pool members busy now.", pool...),
		poolIdle:         d("pool_idle", "Pool members open but not busy now (connections).", pool...),
		poolWaiting:      d("pool_waiting", "Callers waiting for a pool member now; absent when the pool cannot tell (database/sql).", pool...),
		poolWait:         d("pool_wait_seconds", "Acquisitions that had to wait and how long they waited; buckets where the pool keeps a distribution (agent.TransportPool), else only +Inf (database/sql).", pool...),
		poolAcquired:     d("pool_acquired_total", "Pool acquisitions; absent when the pool does not count them.", pool...),
		poolHold:         d("pool_hold_seconds_total", "Total time pool members were held; absent when the pool does not count it.", pool...),
		gomaxprocs:       d("gomaxprocs", "runtime.GOMAXPROCS(0) now."),
		numCPU:           d("num_cpu", "runtime.NumCPU()."),
		quota:            d("cpu_quota_cores", "CPU limit of the nearest cgroup with one (quota over period, in cores); absent without a limit."),
		periods:          d("cpu_periods_total", "Enforcement periods of the limited cgroup (cpu.stat nr_periods)."),
		throttled:        d("cpu_throttled_periods_total", "Periods in which the limited cgroup was throttled (cpu.stat nr_throttled)."),
		throttledSeconds: d("cpu_throttled_seconds_total", "Time the limited cgroup's threads were throttled (cpu.stat throttled_usec)."),
		frOn:             d("flight_recorder_on", "1 while the agent's flight recorder runs, else 0."),
		frState:          d("flight_recorder_state", "The flight recorder's state: 1 for the current one of on, off, on demand, unavailable.", "state"),
		frUntil:          d("flight_recorder_armed_until_timestamp_seconds", "When an armed on-demand flight recorder stops (Unix time); absent when none is armed."),
		frArms:           d("flight_recorder_arms_total", "Times the on-demand flight recorder was armed (POST /flightrecorder/arm)."),
		frSnapshots:      d("flight_recorder_snapshots_total", "Flight-recorder windows served: each is one trigger (schedscope run --snapshot-when)."),
		probeOvershoot:   d("sleep_probe_overshoot_seconds", "The last sleep probe's overshoot (time asleep minus the sleep asked for) at a quantile; absent before the first probe.", "quantile"),
		probeSleep:       d("sleep_probe_sleep_seconds", "The sleep each of the last probe's goroutines asked for."),
		probeSamples:     d("sleep_probe_samples", "Sleeps the last probe measured."),
		probeGoroutines:  d("sleep_probe_goroutines", "Goroutines the last probe ran."),
		probeTime:        d("sleep_probe_timestamp_seconds", "When the last sleep probe ended (Unix time)."),
	}
}

// Describe sends every descriptor the collector may use.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		c.poolSize, c.poolInUse, c.poolIdle, c.poolWaiting, c.poolWait, c.poolAcquired, c.poolHold,
		c.gomaxprocs, c.numCPU, c.quota, c.periods, c.throttled, c.throttledSeconds,
		c.frOn, c.frState, c.frUntil, c.frArms, c.frSnapshots,
		c.probeOvershoot, c.probeSleep, c.probeSamples, c.probeGoroutines, c.probeTime,
	} {
		ch <- d
	}
}

// Collect reads the agent, the runtime and the cgroup now. A cgroup that
// cannot be read is reported as an invalid metric (the scrape's error log
// names it); the other figures are still sent.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	for name, p := range c.a.Pools().Stats() {
		gauge(c.poolSize, float64(p.Size), name, p.Kind)
		gauge(c.poolInUse, float64(p.InUse), name, p.Kind)
		gauge(c.poolIdle, float64(p.Idle), name, p.Kind)
		if p.Known.Waiting {
			gauge(c.poolWaiting, float64(p.Waiting), name, p.Kind)
		}
		ch <- waitHistogram(c.poolWait, p, name)
		if p.Known.Acquired {
			counter(c.poolAcquired, float64(p.Acquired), name, p.Kind)
			counter(c.poolHold, p.HoldDuration.Seconds(), name, p.Kind)
		}
	}

	gauge(c.gomaxprocs, float64(runtime.GOMAXPROCS(0)))
	gauge(c.numCPU, float64(runtime.NumCPU()))
	if !c.opts.NoCPULimit {
		c.collectCPULimit(ch)
	}

	st := c.a.Status()
	on := 0.0
	if st.FlightRecorderOn {
		on = 1
	}
	gauge(c.frOn, on)
	state := st.FlightRecorder
	switch state {
	case StateOn, StateOff, StateOnDemand:
	default:
		state = StateUnavailable
	}
	for _, s := range []string{StateOn, StateOff, StateOnDemand, StateUnavailable} {
		v := 0.0
		if s == state {
			v = 1
		}
		gauge(c.frState, v, s)
	}
	if !st.FlightRecorderUntil.IsZero() {
		gauge(c.frUntil, float64(st.FlightRecorderUntil.UnixNano())/1e9)
	}
	counter(c.frArms, float64(st.Arms))
	counter(c.frSnapshots, float64(st.Snapshots))

	if p := st.LastProbe; p != nil {
		for _, q := range []struct {
			label string
			v     float64
		}{{"0", p.Min.Seconds()}, {"0.5", p.P50.Seconds()}, {"0.9", p.P90.Seconds()}, {"0.99", p.P99.Seconds()}, {"0.999", p.P999.Seconds()}, {"1", p.Max.Seconds()}} {
			gauge(c.probeOvershoot, q.v, q.label)
		}
		gauge(c.probeSleep, p.Sleep.Seconds())
		gauge(c.probeSamples, float64(p.Samples))
		gauge(c.probeGoroutines, float64(p.Goroutines))
		gauge(c.probeTime, float64(st.LastProbeAt.UnixNano())/1e9)
	}
}

// waitHistogram is p's waits as a histogram: count and sum always, the
// buckets of p.Waits when the pool keeps them.
func waitHistogram(d *prometheus.Desc, p agent.PoolStats, name string) prometheus.Metric {
	count := uint64(max(p.WaitCount, 0))
	var buckets map[float64]uint64
	if w := p.Waits; w != nil && len(w.Bounds) == len(w.Counts) {
		buckets = make(map[float64]uint64, len(w.Bounds))
		var cum uint64
		for i, b := range w.Bounds {
			cum += uint64(max(w.Counts[i], 0))
			buckets[b.Seconds()] = cum
		}
		count = max(count, cum)
	}
	return prometheus.MustNewConstHistogram(d, count, p.WaitDuration.Seconds(), buckets, name, p.Kind)
}

func (c *Collector) collectCPULimit(ch chan<- prometheus.Metric) {
	b, err := os.ReadFile(c.opts.ProcCgroup)
	if errors.Is(err, fs.ErrNotExist) {
		return // not Linux, or no procfs: no limit known
	}
	var lim CPULimit
	var ok bool
	if err == nil {
		lim, ok, err = ReadCPULimit(c.opts.CgroupRoot, b)
	}
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.quota, err)
		return
	}
	if !ok {
		return
	}
	ch <- prometheus.MustNewConstMetric(c.quota, prometheus.GaugeValue, lim.Cores)
	ch <- prometheus.MustNewConstMetric(c.periods, prometheus.CounterValue, float64(lim.Periods))
	ch <- prometheus.MustNewConstMetric(c.throttled, prometheus.CounterValue, float64(lim.ThrottledPeriods))
	ch <- prometheus.MustNewConstMetric(c.throttledSeconds, prometheus.CounterValue, lim.ThrottledSeconds)
}

// Handler serves g's metrics in Prometheus' text exposition format, or
// in OpenMetrics when the scraper asks for it (Accept:
// application/openmetrics-text). A metric that fails to collect is left
// out and the rest served. Give it to agent.Options.Exposition, or mount
// it on a path of its own.
func Handler(g prometheus.Gatherer) http.Handler {
	return promhttp.HandlerFor(g, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		ErrorHandling:     promhttp.ContinueOnError,
	})
}
