package agent

import (
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"runtime/trace"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Version is the agent's wire-format version, reported by the index endpoint.
// It changes when a JSON document's meaning changes.
const Version = "1"

// Options configures an Agent. The zero value is safe and cheap: loopback
// clients only, no token, GOMAXPROCS read-only, the flight recorder on demand
// (off until a client arms it) with the runtime's default size and age,
// captures bounded at 60 s.
type Options struct {
	// Token, when not empty, is required as "Authorization: Bearer TOKEN" on
	// every endpoint (401 without it), and by Guard on the handlers it
	// wraps. Read it from a file or the environment, not the command line,
	// where ps and /debug/pprof/cmdline show it.
	Token string

	// AllowRemote serves clients whose address is not loopback. Off by
	// default: then such clients get 403.
	AllowRemote bool

	// AllowSetGOMAXPROCS lets POST /gomaxprocs change GOMAXPROCS. Off by
	// default: then POST gets 403 and GOMAXPROCS is read-only.
	AllowSetGOMAXPROCS bool

	// FlightRecorder configures the agent's flight recorder: on demand
	// (the zero value), always on, or disabled.
	FlightRecorder FlightRecorderOptions

	// MaxCapture bounds every duration parameter (trace window, fgprof,
	// sleep probe). Zero means 60 s.
	MaxCapture time.Duration

	// BlockProfileRate and MutexProfileFraction, when positive, are passed to
	// runtime.SetBlockProfileRate and runtime.SetMutexProfileFraction by New,
	// so the block and mutex profiles are not empty. They are process-wide
	// settings and stay set after Close. Zero leaves them as they are.
	BlockProfileRate     int
	MutexProfileFraction int

	// Exposition, when set, serves metrics?format=prometheus, behind the
	// agent's guard like every endpoint. It is meant for a Prometheus
	// handler, such as the Handler of
	// github.com/schedscope/schedscope/collect/agent/prom (which also
	// answers in OpenMetrics when the scraper asks for it): the agent
	// itself does not depend on Prometheus' libraries. Without it,
	// format=prometheus answers 404.
	Exposition http.Handler
}

// FlightRecorderOptions configures the agent's runtime/trace.FlightRecorder.
//
// The zero value is on demand: no recorder runs until a client arms one with
// POST /flightrecorder/arm?for=D (as `schedscope run --snapshot-when` does),
// and it stops by itself when that period ends. AlwaysOn runs it from New to
// Close instead; Disabled never runs it.
type FlightRecorderOptions struct {
	// Disabled leaves the flight recorder off for good: arming it and
	// /flightrecorder then answer 503. Trace windows (/trace) still work.
	Disabled bool
	// AlwaysOn starts the flight recorder in New and keeps it running until
	// Close, so that a snapshot of the last seconds is there whenever
	// something goes wrong. The recorder is continuous execution tracing and
	// costs the target CPU on every request, 2 to 6 % per request on
	// schedscope's fixture (see "Flight recorder" in the package
	// documentation). Off by default. New rejects AlwaysOn together with
	// Disabled or OnDemand.
	AlwaysOn bool
	// OnDemand asks for the default: the recorder starts only when a client
	// arms it. New rejects it together with AlwaysOn.
	//
	// Deprecated: on demand is the zero value of FlightRecorderOptions, so
	// OnDemand changes nothing; it is kept so that callers that set it
	// still compile. Use AlwaysOn for a recorder that runs from New on.
	OnDemand bool
	// MinAge is how much recent history the recorder keeps (at least); zero
	// means the runtime's default (about 10 s).
	MinAge time.Duration
	// MaxBytes caps the recorder's window and wins over MinAge; zero means the
	// runtime's default (about 10 MiB).
	MaxBytes uint64
}

// onDemand reports whether the recorder starts only when armed.
func (o FlightRecorderOptions) onDemand() bool { return !o.Disabled && !o.AlwaysOn }

// Agent serves the endpoints listed in the package documentation. It is safe
// for concurrent use. Create it with New and stop it with Close.
type Agent struct {
	opts    Options
	pools   *Pools
	started time.Time

	// capture holds one token: a capture runs only while it holds it.
	capture chan struct{}

	snapshotting sync.Mutex // held while a flight-recorder snapshot is written

	frMu    sync.Mutex
	fr      *trace.FlightRecorder // nil when disabled, failed to start, or not armed
	frErr   error                 // why fr is nil, when it is not disabled or on demand
	frUntil time.Time             // on demand: when the armed period ends
	frTimer *time.Timer           // on demand: stops the recorder at frUntil
	closed  bool

	// For Status: flight-recorder arms and snapshots served, and the last
	// sleep probe that ran to its end.
	arms, snapshots atomic.Int64
	probeMu         sync.Mutex
	lastProbe       *ProbeResult
	lastProbeAt     time.Time
}

// Status is the agent's state that neither runtime/metrics nor the pools
// hold, read by exporters such as the Prometheus collector in
// github.com/schedscope/schedscope/collect/agent/prom.
type Status struct {
	// FlightRecorder is Index.FlightRecorder: "on", "off",
	// FlightRecorderOnDemand, or why the recorder is unavailable.
	FlightRecorder string
	// FlightRecorderOn is whether a recorder runs now.
	FlightRecorderOn bool
	// FlightRecorderUntil is when an armed on-demand recorder stops; zero
	// when none is armed.
	FlightRecorderUntil time.Time
	// Arms counts successful POST /flightrecorder/arm since New.
	Arms int64
	// Snapshots counts flight-recorder windows served by /flightrecorder
	// since New: each is one trigger (schedscope run --snapshot-when, or a
	// user's own fetch).
	Snapshots int64
	// LastProbe is the result of the last sleep probe that ran to its end,
	// and LastProbeAt when it ended; nil and zero before the first.
	LastProbe   *ProbeResult
	LastProbeAt time.Time
}

// Status reads the agent's state now. It is safe for concurrent use.
func (a *Agent) Status() Status {
	st := Status{FlightRecorder: a.flightRecorderState(), Arms: a.arms.Load(), Snapshots: a.snapshots.Load()}
	st.FlightRecorderOn = st.FlightRecorder == "on"
	if u := a.armedUntil(); u != nil {
		st.FlightRecorderUntil = *u
	}
	a.probeMu.Lock()
	if a.lastProbe != nil {
		p := *a.lastProbe
		st.LastProbe, st.LastProbeAt = &p, a.lastProbeAt
	}
	a.probeMu.Unlock()
	return st
}

// FlightRecorderOnDemand is Index.FlightRecorder for an on-demand recorder
// that is not armed.
const FlightRecorderOnDemand = "on demand"

// MaxArm bounds the period of POST /flightrecorder/arm.
const MaxArm = 24 * time.Hour

// DefaultMaxCapture is the bound on duration parameters when Options.MaxCapture is zero.
const DefaultMaxCapture = 60 * time.Second

// New returns an Agent. With FlightRecorderOptions.AlwaysOn it starts the
// flight recorder too; by default the recorder waits to be armed. A flight
// recorder that cannot start (only one may run per process) does not make
// New fail: the index endpoint reports why, and /flightrecorder answers 503.
// New returns an error only for invalid options.
func New(opts Options) (*Agent, error) {
	if opts.MaxCapture < 0 {
		return nil, fmt.Errorf("agent options: negative MaxCapture %v", opts.MaxCapture)
	}
	if opts.MaxCapture == 0 {
		opts.MaxCapture = DefaultMaxCapture
	}
	if opts.FlightRecorder.MinAge < 0 {
		return nil, fmt.Errorf("agent options: negative flight recorder MinAge %v", opts.FlightRecorder.MinAge)
	}
	if fro := opts.FlightRecorder; fro.AlwaysOn && (fro.Disabled || fro.OnDemand) {
		return nil, errors.New("agent options: flight recorder AlwaysOn together with Disabled or OnDemand")
	}
	if opts.BlockProfileRate < 0 || opts.MutexProfileFraction < 0 {
		return nil, errors.New("agent options: negative block profile rate or mutex profile fraction")
	}
	a := &Agent{
		opts:    opts,
		pools:   &Pools{},
		started: time.Now(),
		capture: make(chan struct{}, 1),
	}
	if opts.BlockProfileRate > 0 {
		runtime.SetBlockProfileRate(opts.BlockProfileRate)
	}
	if opts.MutexProfileFraction > 0 {
		runtime.SetMutexProfileFraction(opts.MutexProfileFraction)
	}
	if opts.FlightRecorder.AlwaysOn {
		a.frMu.Lock()
		a.startRecorderLocked()
		a.frMu.Unlock()
	}
	return a, nil
}

// startRecorderLocked starts a flight recorder; a.frMu is held.
func (a *Agent) startRecorderLocked() {
	fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{
		MinAge:   a.opts.FlightRecorder.MinAge,
		MaxBytes: a.opts.FlightRecorder.MaxBytes,
	})
	if err := fr.Start(); err != nil {
		a.frErr = fmt.Errorf("flight recorder: %w", err)
		return
	}
	a.fr, a.frErr = fr, nil
}

// arm starts an on-demand recorder, or keeps it running, until at least
// now+d. It returns when the armed period ends.
func (a *Agent) arm(d time.Duration) (time.Time, error) {
	a.frMu.Lock()
	defer a.frMu.Unlock()
	if a.closed {
		return time.Time{}, errors.New("flight recorder: agent closed")
	}
	if a.fr == nil {
		a.startRecorderLocked()
		if a.fr == nil {
			return time.Time{}, a.frErr
		}
	}
	a.arms.Add(1)
	if until := time.Now().Add(d); until.After(a.frUntil) {
		a.frUntil = until
	}
	if a.frTimer == nil {
		a.frTimer = time.AfterFunc(time.Until(a.frUntil), a.disarm)
	} else {
		a.frTimer.Reset(time.Until(a.frUntil))
	}
	return a.frUntil, nil
}

// disarm stops an on-demand recorder whose armed period has ended (the
// timer's func; a later arm may have extended the period).
func (a *Agent) disarm() {
	a.frMu.Lock()
	fr := a.fr
	if a.closed || fr == nil || time.Now().Before(a.frUntil) {
		a.frMu.Unlock()
		return
	}
	a.fr = nil
	a.frMu.Unlock()
	a.snapshotting.Lock() // a snapshot in progress finishes first
	fr.Stop()
	a.snapshotting.Unlock()
}

// Close stops the flight recorder, waiting for a snapshot in progress. Other
// requests in flight finish on their own (a trace window or probe stops when
// its client goes away). Close is idempotent and always returns nil.
func (a *Agent) Close() error {
	a.frMu.Lock()
	fr := a.fr
	a.fr = nil
	a.closed = true
	if a.frTimer != nil {
		a.frTimer.Stop()
	}
	if fr != nil {
		a.frErr = errors.New("flight recorder: agent closed")
	}
	a.frMu.Unlock()
	if fr != nil {
		a.snapshotting.Lock()
		fr.Stop()
		a.snapshotting.Unlock()
	}
	return nil
}

// Pools returns the agent's pool registry, for the user to fill.
func (a *Agent) Pools() *Pools { return a.pools }

// Mount registers the agent on mux under prefix (for example
// "/debug/schedscope/"), stripping the prefix before routing.
func (a *Agent) Mount(mux *http.ServeMux, prefix string) {
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	mux.Handle(prefix, http.StripPrefix(strings.TrimSuffix(prefix, "/"), a))
}

// ServeHTTP routes a request whose path is relative to the mount point.
// Every path is behind the agent's guard (see Guard).
func (a *Agent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !admit(a.opts, w, r) {
		return
	}
	path := strings.TrimSuffix(r.URL.Path, "/")
	switch {
	case path == "" || path == "/index":
		a.serveIndex(w, r)
	case path == "/metrics":
		a.serveMetrics(w, r)
	case path == "/pools":
		a.servePools(w, r)
	case path == "/trace":
		a.captured(w, r, a.serveTrace)
	case path == "/flightrecorder":
		a.serveFlightRecorder(w, r)
	case path == "/flightrecorder/arm":
		a.serveArm(w, r)
	case strings.HasPrefix(path, "/profile/"):
		a.serveProfile(w, r)
	case path == "/fgprof":
		a.captured(w, r, a.serveFgprof)
	case path == "/sleepprobe":
		a.captured(w, r, a.serveSleepProbe)
	case path == "/gomaxprocs":
		a.serveGOMAXPROCS(w, r)
	default:
		httpError(w, http.StatusNotFound, "schedscope agent: no endpoint %q", r.URL.Path)
	}
}

// captured runs serve while it holds the capture slot, or answers 429.
func (a *Agent) captured(w http.ResponseWriter, r *http.Request, serve func(http.ResponseWriter, *http.Request)) {
	select {
	case a.capture <- struct{}{}:
		defer func() { <-a.capture }()
	default:
		w.Header().Set("Retry-After", "1")
		httpError(w, http.StatusTooManyRequests, "schedscope agent: another capture is running; one at a time")
		return
	}
	serve(w, r)
}

// Guard returns h behind the agent's guard, built from opts as New builds
// it: a client whose address is not loopback gets 403 unless
// opts.AllowRemote is set, and, when opts.Token is set, a request without
// "Authorization: Bearer TOKEN" gets 401 (the token is compared in
// constant time). Only Token and AllowRemote are read.
//
// Use it to give the other debug handlers of a process the protection of
// the agent's, so that a token protects every capture path, not only the
// agent's:
//
//	mux.Handle("/debug/pprof/", agent.Guard(opts, http.HandlerFunc(pprof.Index)))
//	mux.Handle("/debug/pprof/profile", agent.Guard(opts, http.HandlerFunc(pprof.Profile)))
//	mux.Handle("/debug/pprof/trace", agent.Guard(opts, http.HandlerFunc(pprof.Trace)))
//
// net/http/pprof's /debug/pprof/cmdline serves the process's command line
// as it is: keep secrets out of it (read them from a file or the
// environment), or do not mount it.
func Guard(opts Options, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if admit(opts, w, r) {
			h.ServeHTTP(w, r)
		}
	})
}

// Guard returns h behind this agent's guard: Guard with the agent's options.
func (a *Agent) Guard(h http.Handler) http.Handler { return Guard(a.opts, h) }

// admit applies the guard to r, answering 403 or 401 itself; it reports
// whether r may be served.
func admit(opts Options, w http.ResponseWriter, r *http.Request) bool {
	if !opts.AllowRemote && !isLoopback(r.RemoteAddr) {
		httpError(w, http.StatusForbidden, "schedscope agent serves loopback clients only (remote address %s)", r.RemoteAddr)
		return false
	}
	if !authorized(opts.Token, r) {
		w.Header().Set("WWW-Authenticate", `Bearer realm="schedscope"`)
		httpError(w, http.StatusUnauthorized, "schedscope agent: missing or wrong bearer token")
		return false
	}
	return true
}

// authorized reports whether r carries "Authorization: Bearer token"; any
// request is when token is empty.
func authorized(token string, r *http.Request) bool {
	if token == "" {
		return true
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) == 1
}

// isLoopback reports whether a RemoteAddr ("host:port") is a loopback address.
// An unparsable address is not loopback.
func isLoopback(remoteAddr string) bool {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		host = remoteAddr
	}
	ip, err := netip.ParseAddr(host)
	if err != nil {
		return false
	}
	return ip.Unmap().IsLoopback()
}

// Index is the JSON document served at the mount point.
type Index struct {
	Agent          string    `json:"agent"`           // "schedscope"
	Version        string    `json:"version"`         // wire-format Version
	GoVersion      string    `json:"go_version"`      // runtime.Version() of the target
	Started        time.Time `json:"started"`         // when New ran
	GOMAXPROCS     int       `json:"gomaxprocs"`      // at the time of the request
	NumCPU         int       `json:"num_cpu"`         // runtime.NumCPU()
	FlightRecorder string    `json:"flight_recorder"` // "on", "off", FlightRecorderOnDemand, or why it is unavailable
	// FlightRecorderUntil is when an armed on-demand recorder stops.
	FlightRecorderUntil *time.Time `json:"flight_recorder_until,omitempty"`
	TokenRequired       bool       `json:"token_required"` // Options.Token is set
	SetGOMAXPROCS       bool       `json:"set_gomaxprocs"` // POST /gomaxprocs allowed
	MaxCapture          string     `json:"max_capture"`    // bound on duration parameters
	Pools               []string   `json:"pools"`          // registered pool names, sorted
	Endpoints           []string   `json:"endpoints"`      // paths relative to the mount point
}

func (a *Agent) serveIndex(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, Index{
		Agent:               "schedscope",
		Version:             Version,
		GoVersion:           runtime.Version(),
		Started:             a.started,
		GOMAXPROCS:          runtime.GOMAXPROCS(0),
		NumCPU:              runtime.NumCPU(),
		FlightRecorder:      a.flightRecorderState(),
		FlightRecorderUntil: a.armedUntil(),
		TokenRequired:       a.opts.Token != "",
		SetGOMAXPROCS:       a.opts.AllowSetGOMAXPROCS,
		MaxCapture:          a.opts.MaxCapture.String(),
		Pools:               a.pools.Names(),
		Endpoints:           a.endpoints(),
	})
}

// endpoints lists the agent's paths for the index.
func (a *Agent) endpoints() []string {
	e := []string{"metrics"}
	if a.opts.Exposition != nil {
		e = append(e, "metrics?format=prometheus")
	}
	return append(e, "pools", "trace", "flightrecorder", "flightrecorder/arm", "profile/goroutine", "profile/block",
		"profile/mutex", "profile/threadcreate", "fgprof", "sleepprobe", "gomaxprocs")
}

func (a *Agent) flightRecorderState() string {
	a.frMu.Lock()
	defer a.frMu.Unlock()
	switch {
	case a.fr != nil:
		return "on"
	case a.frErr != nil:
		return a.frErr.Error()
	case a.opts.FlightRecorder.onDemand():
		return FlightRecorderOnDemand
	default:
		return "off"
	}
}

// armedUntil is when an armed on-demand recorder stops, or nil.
func (a *Agent) armedUntil() *time.Time {
	a.frMu.Lock()
	defer a.frMu.Unlock()
	if a.fr == nil || a.frUntil.IsZero() {
		return nil
	}
	t := a.frUntil
	return &t
}

// ArmState is the JSON document POST /flightrecorder/arm answers.
type ArmState struct {
	FlightRecorder string     `json:"flight_recorder"` // "on"
	Until          *time.Time `json:"until,omitempty"` // when it stops; absent when it runs for good
}

// serveArm starts an on-demand flight recorder for ?for=D (default 10m,
// at most MaxArm). On an agent whose recorder runs for good it changes
// nothing and says so.
func (a *Agent) serveArm(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		httpError(w, http.StatusMethodNotAllowed, "schedscope agent: POST /flightrecorder/arm?for=D")
		return
	}
	fro := a.opts.FlightRecorder
	if fro.Disabled {
		httpError(w, http.StatusServiceUnavailable, "schedscope agent: flight recorder disabled in the agent's options")
		return
	}
	if fro.AlwaysOn {
		if state := a.flightRecorderState(); state != "on" {
			httpError(w, http.StatusServiceUnavailable, "schedscope agent: %s", state)
			return
		}
		writeJSON(w, ArmState{FlightRecorder: "on"})
		return
	}
	d := 10 * time.Minute
	if v := r.URL.Query().Get("for"); v != "" {
		var err error
		if d, err = time.ParseDuration(v); err != nil || d <= 0 || d > MaxArm {
			httpError(w, http.StatusBadRequest, "schedscope agent: for=%q: want a duration in (0, %v]", v, MaxArm)
			return
		}
	}
	until, err := a.arm(d)
	if err != nil {
		httpError(w, http.StatusServiceUnavailable, "schedscope agent: %v", err)
		return
	}
	writeJSON(w, ArmState{FlightRecorder: "on", Until: &until})
}

func (a *Agent) serveMetrics(w http.ResponseWriter, r *http.Request) {
	switch f := r.URL.Query().Get("format"); f {
	case "", "json":
	case "prometheus":
		if a.opts.Exposition == nil {
			httpError(w, http.StatusNotFound, "schedscope agent: no Prometheus exposition configured (agent.Options.Exposition; see github.com/schedscope/schedscope/collect/agent/prom)")
			return
		}
		a.opts.Exposition.ServeHTTP(w, r)
		return
	default:
		httpError(w, http.StatusBadRequest, "schedscope agent: format=%q: want json or prometheus", f)
		return
	}
	snap := ReadSnapshot()
	snap.Pools = a.pools.Stats()
	snap.FlightRecorder = a.flightRecorderState() == "on"
	writeJSON(w, snap)
}

func (a *Agent) servePools(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, a.pools.Stats())
}

// GOMAXPROCSState is the JSON document served by /gomaxprocs.
type GOMAXPROCSState struct {
	GOMAXPROCS int  `json:"gomaxprocs"`         // after a POST, the new value
	NumCPU     int  `json:"num_cpu"`            // runtime.NumCPU()
	Settable   bool `json:"settable"`           // Options.AllowSetGOMAXPROCS
	Previous   int  `json:"previous,omitempty"` // set by POST: the value before
}

// maxGOMAXPROCS bounds what POST /gomaxprocs accepts.
const maxGOMAXPROCS = 4096

func (a *Agent) serveGOMAXPROCS(w http.ResponseWriter, r *http.Request) {
	st := GOMAXPROCSState{NumCPU: runtime.NumCPU(), Settable: a.opts.AllowSetGOMAXPROCS}
	switch r.Method {
	case http.MethodGet, http.MethodHead:
	case http.MethodPost, http.MethodPut:
		if !a.opts.AllowSetGOMAXPROCS {
			httpError(w, http.StatusForbidden, "schedscope agent: setting GOMAXPROCS is not enabled (Options.AllowSetGOMAXPROCS)")
			return
		}
		arg := r.URL.Query().Get("n")
		if arg == "default" {
			st.Previous = runtime.GOMAXPROCS(0)
			runtime.SetDefaultGOMAXPROCS()
			break
		}
		n, err := strconv.Atoi(arg)
		if err != nil || n < 1 || n > maxGOMAXPROCS {
			httpError(w, http.StatusBadRequest, "schedscope agent: n=%q: want an integer in [1, %d] or \"default\"", arg, maxGOMAXPROCS)
			return
		}
		st.Previous = runtime.GOMAXPROCS(n)
	default:
		httpError(w, http.StatusMethodNotAllowed, "schedscope agent: /gomaxprocs takes GET or POST")
		return
	}
	st.GOMAXPROCS = runtime.GOMAXPROCS(0)
	writeJSON(w, st)
}

// durationParam reads a duration parameter given as seconds ("2", "0.5") or a
// Go duration ("500ms"), defaulting to def when absent, and bounded to
// (0, max].
func durationParam(r *http.Request, name string, def, max time.Duration) (time.Duration, error) {
	arg := r.URL.Query().Get(name)
	if arg == "" {
		if def > max {
			return max, nil
		}
		return def, nil
	}
	var d time.Duration
	if secs, err := strconv.ParseFloat(arg, 64); err == nil {
		if secs != secs || secs > max.Seconds()*2 { // NaN or clearly too big: avoid overflow
			return 0, fmt.Errorf("%s=%q: above the bound of %v", name, arg, max)
		}
		d = time.Duration(secs * float64(time.Second))
	} else if d, err = time.ParseDuration(arg); err != nil {
		return 0, fmt.Errorf("%s=%q: want seconds or a Go duration", name, arg)
	}
	if d <= 0 {
		return 0, fmt.Errorf("%s=%q: must be positive", name, arg)
	}
	if d > max {
		return 0, fmt.Errorf("%s=%q: above the bound of %v", name, arg, max)
	}
	return d, nil
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	// An encoding error here means the client went away; nothing to report to.
	_ = enc.Encode(v)
}

// httpError writes a one-line plain-text error.
func httpError(w http.ResponseWriter, code int, format string, args ...any) {
	w.Header().Del("Content-Disposition")
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	fmt.Fprintf(w, format+"\n", args...)
}
