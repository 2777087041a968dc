package load

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// PhaseKind says what a phase is for.
type PhaseKind string

const (
	// Warmup phases load the target but are excluded from Result.Phases.
	Warmup PhaseKind = "warmup"
	// Steady phases are measured: one per offered rate (or one for Users).
	Steady PhaseKind = "steady"
	// Pause phases schedule nothing while stragglers finish.
	Pause PhaseKind = "pause"
)

// Result is what Run measured. After an interrupted run (context cancelled)
// it holds every phase that started, measured up to the interruption.
type Result struct {
	// Target through Client describe the run as Run made it: the Config's
	// values with defaults applied (ThinkMS in milliseconds, TimeoutS in
	// seconds). Target is the URL with its secrets (a password in its user
	// information, secret query parameters) redacted, so a Result can be
	// shared.
	Target      string   `json:"target"`
	Method      string   `json:"method"`
	Model       string   `json:"model"` // "open" or "closed"
	Arrivals    Arrivals `json:"arrivals,omitempty"`
	Seed        uint64   `json:"seed,omitempty"`
	Users       int      `json:"users,omitempty"`
	ThinkMS     float64  `json:"think_ms,omitempty"`
	MaxInflight int      `json:"max_inflight"`
	TimeoutS    float64  `json:"timeout_s"`
	Client      Client   `json:"client"`
	// Engine says how requests were sent: "event-loop" (one goroutine owns
	// every connection; Linux, plain HTTP, lean client) or "goroutines" (one
	// per connection or user: https, net/http, other systems).
	Engine string `json:"engine"`
	// ResponseTime says when a response counts as complete: "kernel" (when
	// the kernel received its last byte, SO_TIMESTAMPNS: the event loop in
	// the open model) or "read" (when the generator read it, which adds the
	// generator's own wake-up to every latency); a merge of shards that
	// differed says "mixed".
	ResponseTime string `json:"response_time,omitempty"`
	// GOMAXPROCS and NumCPU are the generator process's.
	GOMAXPROCS int       `json:"gomaxprocs"`
	NumCPU     int       `json:"num_cpu"`
	Start      time.Time `json:"start"` // the load's clock: every offset is from here
	// ElapsedS is the run's wall time in seconds, from Start; 0 for a run
	// interrupted before Start (while waiting for Config.StartAt).
	ElapsedS float64 `json:"elapsed_s"`
	// Interrupted is true when the context was cancelled before the plan ended.
	Interrupted bool `json:"interrupted"`
	// CPUIncludesTarget copies Config.CPUIncludesTarget.
	CPUIncludesTarget bool `json:"cpu_includes_target,omitempty"`
	// Warmup is the warm-up phase, or nil when there was none.
	Warmup *PhaseResult `json:"warmup,omitempty"`
	// Phases are the steady phases, in order.
	Phases []PhaseResult `json:"phases"`

	// RequestTag copies Config.RequestTag: the tag in every request's
	// RequestHeader.
	RequestTag string `json:"request_tag,omitempty"`
	// Requests are the records of the finished requests, sorted by Seq,
	// when Config.RecordRequests is set: every request with an outcome
	// (those counted in PhaseResult.Completed), in every phase. At most
	// MaxRecordedRequests are kept; past that, each shard of the recorder
	// overwrites its oldest record, so the requests kept are about the
	// latest, and RequestsDropped counts the others. Requests that were
	// not sent (NotSent) or were still in flight when the run stopped
	// (Unfinished) have no record. Not serialised (there may be a
	// million); package rundir writes them as requests.tsv.
	Requests []RequestRecord `json:"-"`
	// RequestsDropped counts the finished requests whose records were not
	// kept.
	RequestsDropped int64 `json:"requests_dropped,omitempty"`

	// Shard describes the shard this run was (Config.Shard), or its shared
	// start (Config.StartAt); nil for a whole run started at once.
	Shard *ShardRun `json:"shard,omitempty"`
	// Merged describes the shards a merged result (Merge) was made from;
	// nil for one generator's run.
	Merged *MergeInfo `json:"merged,omitempty"`
}

// RequestRecord is the generator's view of one finished request
// (Config.RecordRequests), to be joined with the target's view of it
// through its RequestHeader.
type RequestRecord struct {
	// Seq is the request's number in the run, from 1, as its RequestHeader
	// says. In the open model the numbers follow the intended send times.
	// A request retried once on a fresh connection (a kept-alive one was
	// closed under it) keeps its number, so a target may see it twice.
	Seq uint64 `json:"seq"`
	// IntendedUnixNs is when the request should have been sent, in Unix
	// ns, as its RequestHeader says; a closed-model request's is its send
	// time.
	IntendedUnixNs int64 `json:"intended_unix_ns"`
	// LatencyNs runs from the intended send time to the end of the response
	// (or the failure), as PhaseResult.Latency measures it, in ns; the
	// latency histograms hold it only for OK, Status and Timeout outcomes.
	LatencyNs int64 `json:"latency_ns"`
	// SentUnixNs is when the request was handed to its connection (its
	// dial begun, for a new connection), in Unix ns.
	SentUnixNs int64 `json:"sent_unix_ns"`
	// Status is the response's HTTP status; 0 when no response came.
	Status int `json:"status"`
	// Outcome classifies the request as PhaseResult counts it.
	Outcome Outcome `json:"outcome"`
}

// PhaseResult is one phase's figures. Requests belong to the phase of their
// intended send time, so a phase's figures include its stragglers that
// finished after the phase ended.
type PhaseResult struct {
	// Name is "warmup", "steady", or "step i/n" in a ladder of rates.
	Name string    `json:"name"`
	Kind PhaseKind `json:"kind"`
	// OfferedRate is the open model's target rate, req/s; 0 in closed model.
	OfferedRate float64 `json:"offered_rate"`
	Users       int     `json:"users,omitempty"` // closed model's users; 0 in open model
	// StartS and EndS are offsets in seconds from Result.Start of the
	// phase's scheduling window [start, end); DurationS is its length.
	StartS    float64 `json:"start_s"`
	EndS      float64 `json:"end_s"`
	DurationS float64 `json:"duration_s"`
	// Planned counts the intended sends whose time came during the phase.
	Planned int64 `json:"planned"`
	// Sent counts requests handed to a connection (connecting included).
	Sent int64 `json:"sent"`
	// NotSent counts planned requests dropped because MaxInflight requests
	// were already in flight (Planned = Sent + NotSent).
	NotSent int64 `json:"not_sent"`
	// Completed counts sent requests that ended: a response, a timeout or an
	// error (Sent = Completed + Unfinished).
	Completed int64 `json:"completed"`
	// Unfinished counts sent requests still in flight when the run stopped.
	Unfinished int64 `json:"unfinished"`
	// OK counts 2xx responses.
	OK int64 `json:"ok"`
	// Errors counts completed requests that were not 2xx, by class.
	Errors ErrorCounts `json:"errors"`
	// StatusCodes counts responses by HTTP status (2xx included).
	StatusCodes map[int]int64 `json:"status_codes,omitempty"`
	// OKPerS is the rate at which the target answered this phase's requests
	// with 2xx: completions per second from the phase's first completion to
	// its last, times the 2xx share. Below capacity it equals the offered
	// rate; above it, requests still queued when the phase ended are
	// answered later at the target's own pace, so a saturated target shows
	// its ceiling here even though OK eventually reaches Sent.
	OKPerS float64 `json:"ok_per_s"`
	// CompletedPerS is the same rate for every completion, any outcome.
	CompletedPerS float64 `json:"completed_per_s"`
	// Latency is measured from each request's intended send time to the end
	// of its response (or its timeout), in milliseconds; responses of any
	// status and timeouts are included, connection and other errors are not.
	Latency Percentiles `json:"latency_ms"`
	// Service is Latency measured from the actual send instead.
	Service Percentiles `json:"service_ms"`
	// SendLag is actual send time minus intended send time, milliseconds.
	SendLag LagPercentiles `json:"send_lag_ms"`
	// MeanInFlight is the time-average number of the phase's requests in
	// flight during the phase: their time in flight (from the actual send
	// to the response, timeout or error, or to the phase's end), summed,
	// over the phase's duration. Not sampled: a sampler in the generator
	// wakes when the generator does, i.e. right after sends, and at 500
	// req/s of 1.2-ms requests read 1.0 in flight where the time average
	// was 0.6.
	MeanInFlight float64 `json:"mean_inflight"`
	// PeakInFlight is the highest number in flight seen by the samples.
	PeakInFlight int64 `json:"peak_inflight"`
	// GeneratorCPUUSPerReq is this process's CPU time (user+system) during
	// the phase divided by the requests sent, in microseconds.
	GeneratorCPUUSPerReq float64 `json:"generator_cpu_us_per_req"`
	// GeneratorCPUCores is the same CPU time divided by the phase's wall time.
	GeneratorCPUCores float64 `json:"generator_cpu_cores"`
	// GC is this process's garbage collection during the phase.
	GC GCStats `json:"gc"`
	// Verdicts are the rendered VerdictDetails.
	Verdicts []string `json:"verdicts"`
	// VerdictDetails are the verdicts as data.
	VerdictDetails []Verdict `json:"verdict_details"`

	// LatencyHist, ServiceHist and SendLagHist hold the phase's histograms in
	// nanoseconds. Not serialised (use an HLog for that).
	LatencyHist *hdrhistogram.Histogram `json:"-"`
	ServiceHist *hdrhistogram.Histogram `json:"-"`
	SendLagHist *hdrhistogram.Histogram `json:"-"`
}

// ErrorCounts counts failed requests by class.
type ErrorCounts struct {
	// Status counts responses with a non-2xx status.
	Status int64 `json:"status"`
	// Timeout counts requests that hit Config.Timeout.
	Timeout int64 `json:"timeout"`
	// Connection counts refused or reset connections (and EOF before a
	// response).
	Connection int64 `json:"connection"`
	// Other counts anything else (malformed response, ...).
	Other int64 `json:"other"`
}

// Total is the sum of every class.
func (e ErrorCounts) Total() int64 { return e.Status + e.Timeout + e.Connection + e.Other }

// Plus is e and o added class by class.
func (e ErrorCounts) Plus(o ErrorCounts) ErrorCounts {
	return ErrorCounts{Status: e.Status + o.Status, Timeout: e.Timeout + o.Timeout, Connection: e.Connection + o.Connection, Other: e.Other + o.Other}
}

// Percentiles summarises a latency distribution, in milliseconds.
type Percentiles struct {
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
	P999 float64 `json:"p999"`
	Max  float64 `json:"max"`
	Mean float64 `json:"mean"`
	// Count is how many values the percentiles cover.
	Count int64 `json:"count"`
}

// LagPercentiles summarises the send lag, in milliseconds.
type LagPercentiles struct {
	P50 float64 `json:"p50"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// GCStats is the process's garbage collection over a phase, from
// runtime/metrics.
type GCStats struct {
	Cycles uint64 `json:"cycles"`
	// PauseTotalMS and PauseMaxMS are stop-the-world GC pauses; the max is
	// the upper bound of the runtime's histogram bucket.
	PauseTotalMS float64 `json:"pause_total_ms"`
	PauseMaxMS   float64 `json:"pause_max_ms"`
}

// Progress is a live snapshot, delivered to Config.Progress. It is a value:
// the receiver may keep it.
type Progress struct {
	// Phase indexes the run's plan (warm-up, steady phases and pauses);
	// Phases is the plan's length.
	Phase, Phases int
	// Step indexes Result.Phases for a steady phase, -1 otherwise.
	Step int
	Name string
	Kind PhaseKind
	// OfferedRate is the phase's rate (0 in closed model and pauses).
	OfferedRate float64
	Users       int
	// Elapsed of Total of the phase; RunElapsed since Result.Start.
	Elapsed, Total, RunElapsed time.Duration

	// Counts so far in this phase.
	Planned, Sent, NotSent, Completed, OK int64
	Errors                                ErrorCounts
	// InFlight is the number of requests in flight now (all phases).
	InFlight int64

	// Latency percentiles from intended send time, over the last progress
	// interval and over the phase so far; zero when nothing completed.
	IntervalP50, IntervalP95, IntervalP99 time.Duration
	PhaseP50, PhaseP95, PhaseP99          time.Duration
	// OKPerS is 2xx responses received per second over the last progress
	// interval (any phase's requests).
	OKPerS float64
	// Done is true in the last snapshot of a phase.
	Done bool
}

// Interval is the latency histograms (nanoseconds) of one interval of one
// phase, delivered to Config.Interval. The histograms carry start and end
// times in Unix milliseconds and belong to the receiver.
type Interval struct {
	// Phase indexes the plan; Kind and Name describe it.
	Phase int
	Kind  PhaseKind
	Name  string
	// Start and End are offsets from Result.Start.
	Start, End time.Duration
	// Latency from intended send, service time from actual send, send lag.
	Latency, Service, SendLag *hdrhistogram.Histogram
}

// WriteJSON writes res as indented JSON.
func WriteJSON(w io.Writer, res *Result) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		return fmt.Errorf("writing load result JSON: %w", err)
	}
	return nil
}
