package load

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Arrivals names how an open-model phase spaces its intended send times.
type Arrivals string

const (
	// Uniform spaces arrivals at exactly 1/rate apart (the default).
	Uniform Arrivals = "uniform"
	// Poisson draws exponential inter-arrival gaps with mean 1/rate from a
	// generator seeded with Config.Seed, so a seed reproduces the schedule.
	Poisson Arrivals = "poisson"
)

// Client names the HTTP client implementation that sends requests.
type Client string

const (
	// Lean is schedscope's own HTTP/1.1 client on net.Conn: one pre-built
	// request, a minimal response parser (status line, Content-Length,
	// chunked). It is the default because it is the cheapest per request
	// (see bench/README.md).
	Lean Client = "lean"
	// NetHTTP is net/http's client, tuned for load (one connection per
	// worker, keep-alive, no compression). Kept for comparison and for
	// targets the lean client cannot talk to.
	NetHTTP Client = "net/http"
)

// Defaults applied by Run to zero fields of Config.
const (
	DefaultDuration       = 10 * time.Second
	DefaultTimeout        = 10 * time.Second
	DefaultProgressEvery  = 250 * time.Millisecond
	DefaultIntervalEvery  = time.Second
	DefaultMaxInflightCap = 5000
	// DefaultInflightSeconds is how many seconds of the offered rate may be
	// in flight by default: MaxInflight = min(10 s x rate, 5,000).
	DefaultInflightSeconds = 10
	// DefaultSeed seeds Poisson arrivals when Config.Seed is zero.
	DefaultSeed = 1
)

// Bounds Validate holds a Config to, so that a typo costs a one-line error
// rather than the machine's memory or a run that never ends. Each error
// names its bound; docs/readme-load.md lists them.
const (
	// MaxRate bounds each offered rate, in requests per second.
	MaxRate = 10_000_000
	// MaxSteps bounds the rates of a ladder (one phase each; every phase
	// keeps its own histograms).
	MaxSteps = 100
	// MaxUsers bounds the closed model's users: each is a connection (and,
	// without the event loop, a goroutine) with its buffers.
	MaxUsers = 100_000
	// MaxConns bounds the open model's in-flight cap, MaxInflight: each
	// request in flight holds a connection as a user does.
	MaxConns = 100_000
	// MaxPhase bounds the length of each measured phase and of the warm-up.
	MaxPhase = 24 * time.Hour
	// MaxWait bounds a pause between phases, a user's think time and a
	// request's timeout.
	MaxWait = time.Hour
	// MaxHeaders bounds the extra request headers.
	MaxHeaders = 100
	// MaxRequestHead bounds the request line and headers together, in bytes.
	MaxRequestHead = 64 << 10
	// MaxBody bounds the request body, in bytes.
	MaxBody = 64 << 20
	// MinEvery is the shortest progress or interval period.
	MinEvery = 10 * time.Millisecond
	// MaxEvery is the longest progress or interval period.
	MaxEvery = time.Minute
	// MaxRequestTag bounds Config.RequestTag, in characters.
	MaxRequestTag = 32
	// MaxRecordedRequests bounds Result.Requests; Result.RequestsDropped
	// counts the requests beyond it.
	MaxRecordedRequests = 1 << 20
)

// RequestHeader is the request header a tagged run (Config.RequestTag)
// sends on every request, with the value "<tag>-<seq> <intended-unix-ns>":
// the run's tag, the request's number in the run (RequestRecord.Seq, a
// decimal uint64 from 1) and its intended send time in Unix nanoseconds (a
// decimal int64; RequestRecord.IntendedUnixNs). The target's middleware
// reads it so that a request in the target's execution trace can be
// joined with the generator's record of it.
const RequestHeader = "Schedscope-Request"

// Config describes one load run. The zero value of every optional field has
// the documented default; Run never modifies the caller's Config.
//
// Exactly one of Rate, Rates (open model) or Users (closed model) must be
// set. Every size, count and duration has a bound (MaxRate, MaxSteps, ...
// above); Validate names the one a Config passes.
type Config struct {
	// URL is the target, http:// or https://. Required.
	URL string
	// Method is the HTTP method; "" means GET.
	Method string
	// Header holds extra request headers, sent on every request in the
	// order given. Host overrides the URL's host; Content-Length is computed.
	// At most MaxHeaders, and MaxRequestHead bytes with the request line.
	// A RequestHeader among them is refused: the generator sets it.
	Header []Header
	// Body is sent with every request (Content-Length set); nil sends none.
	// At most MaxBody bytes.
	Body []byte

	// Rate is the offered rate in requests per second of a single steady
	// phase (open model). Must be in (0, MaxRate] when set.
	Rate float64
	// Rates is a ladder of offered rates, one steady phase per rate, in order
	// (open model), at most MaxSteps of them. Mutually exclusive with Rate.
	Rates []float64
	// Arrivals spaces open-model send times; "" means Uniform.
	Arrivals Arrivals
	// Seed seeds Poisson arrivals; 0 means DefaultSeed.
	Seed uint64

	// Users selects the closed model: Users goroutines each send a request,
	// wait for its response, wait Think, and repeat. At most MaxUsers.
	Users int
	// Think is each closed-model user's pause between a response and its
	// next request; 0 means none.
	Think time.Duration

	// Warmup is a phase run before the measured phases (at the first rate,
	// or with Users), reported apart and excluded from the steady results;
	// 0 means no warm-up.
	Warmup time.Duration
	// Duration is the length of each steady phase; 0 means DefaultDuration.
	Duration time.Duration
	// Pause separates consecutive load phases (warm-up included); no
	// requests are scheduled during a pause, while stragglers finish.
	// 0 means no pause.
	Pause time.Duration

	// MaxInflight caps requests in flight at once (open model): a request
	// due while every slot is busy is not sent and is counted as NotSent.
	// 0 means min(10 s x the highest rate, 5,000); at most MaxConns. It
	// also bounds the generator's goroutines and connections. Ignored in the
	// closed model, where Users is the cap.
	MaxInflight int
	// Timeout is the client timeout of one request, from its actual send
	// (connecting included); 0 means DefaultTimeout.
	Timeout time.Duration

	// Client selects the HTTP client; "" means Lean.
	Client Client
	// Goroutines makes the generator use a goroutine per connection (per
	// user in the closed model) even where the event loop can run: to
	// compare the engines (Result.Engine says which one ran).
	Goroutines bool
	// InsecureTLS skips verifying an https target's certificate (a local
	// target with a self-signed one). By default the system's roots verify it.
	InsecureTLS bool

	// Progress, when set, receives a snapshot of the phase being driven
	// (pauses included) about every ProgressEvery, and one last snapshot per
	// load phase, with Done set, once its last request has finished. All
	// calls come from one goroutine owned by Run; it must return quickly and
	// is never called after Run returns.
	Progress func(Progress)
	// ProgressEvery is the progress period; 0 means DefaultProgressEvery.
	ProgressEvery time.Duration
	// Interval, when set, receives the latency histograms of each interval
	// of every load phase as they are measured (about every IntervalEvery,
	// and a last one at each phase's end), from the same goroutine as
	// Progress. The histograms are owned by the receiver. HLog.Write fits
	// here, so an interrupted run keeps the intervals measured so far.
	Interval func(Interval)
	// IntervalEvery is the interval period; 0 means DefaultIntervalEvery.
	// It is rounded up to a multiple of ProgressEvery.
	IntervalEvery time.Duration

	// CPUIncludesTarget says the target runs in this process (as in
	// `schedscope demo`): the measured CPU is then the target's plus the
	// generator's, so no generator-bound verdict is drawn from it.
	CPUIncludesTarget bool

	// RequestTag, when set, tags every request with a RequestHeader line
	// naming the run (this tag), the request's number and its intended send
	// time (a closed-model request's is its send time), in every engine
	// and with either client. It is 1 to MaxRequestTag characters of A-Z,
	// a-z, 0-9, '_' and '.' (CheckRequestTag), and should be unique to the
	// run. "" sends no such header and costs nothing.
	RequestTag string
	// RecordRequests makes Run keep a RequestRecord of every finished
	// request in Result.Requests, for joining with what the target saw.
	RecordRequests bool

	// Shard makes this generator send one share of the open-model schedule
	// that Rate or Rates describe (the whole schedule's rates), so that
	// several generators, one per shard, send it together: see Shard. Each
	// phase's OfferedRate is then the shard's share of the rate, and the
	// default MaxInflight is taken from that share. The zero value sends
	// the whole schedule. Not for the closed model.
	Shard Shard
	// StartAt, when set, is the wall-clock instant the first phase begins:
	// Run waits until then (the context cancels the wait), so that shards
	// on several machines begin together. It may be at most MaxStartLate
	// in the past when Run is called (Validate checks it against the
	// clock) and at most MaxWait ahead. Result.Start is StartAt, and
	// Result.Shard.StartLateMS says how late the run actually began.
	StartAt time.Time
}

// CheckRequestTag reports whether tag is a valid Config.RequestTag: 1 to
// MaxRequestTag characters of A-Z, a-z, 0-9, '_' and '.'. The error is one
// line.
func CheckRequestTag(tag string) error {
	if tag == "" || len(tag) > MaxRequestTag {
		return fmt.Errorf("request tag of %d bytes: want 1 to %d", len(tag), MaxRequestTag)
	}
	for i := 0; i < len(tag); i++ {
		if c := tag[i]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.') {
			return fmt.Errorf("request tag %q: byte %d is %q; want only A-Z, a-z, 0-9, '_' and '.'", tag, i+1, c)
		}
	}
	return nil
}

// Header is one request header line.
type Header struct {
	Name, Value string
}

// ParseHeader parses "Name: value" as given to curl's -H. Its errors quote
// the header's name, never its value, which may be a credential.
func ParseHeader(s string) (Header, error) {
	name, value, ok := strings.Cut(s, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") {
		return Header{}, fmt.Errorf("header %q: want \"Name: value\"", firstWord(s)+"...")
	}
	value = strings.TrimSpace(value)
	if strings.ContainsAny(value, "\r\n") {
		return Header{}, fmt.Errorf("header %q: value contains a line break", name)
	}
	return Header{Name: name, Value: value}, nil
}

// firstWord is s up to its first blank or colon.
func firstWord(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, " \t\r\n:"); i >= 0 {
		return s[:i]
	}
	return s
}

// Model reports "open" or "closed" for a valid Config.
func (c *Config) Model() string {
	if c.Users > 0 {
		return "closed"
	}
	return "open"
}

// Validate reports the first problem with c (wrapped in ErrConfig), or nil
// when Run would accept it.
func (c Config) Validate() error {
	if _, err := c.withDefaults(); err != nil {
		return &configError{err}
	}
	return nil
}

// ErrConfig matches (errors.Is) every error Run or Validate returns for a
// bad Config; nothing was sent. The error's message names the problem.
var ErrConfig = errors.New("bad load config")

type configError struct{ err error }

func (e *configError) Error() string        { return e.err.Error() }
func (e *configError) Unwrap() error        { return e.err }
func (e *configError) Is(target error) bool { return target == ErrConfig }

// withDefaults checks c and returns a copy with defaults applied.
func (c Config) withDefaults() (Config, error) {
	if c.URL == "" {
		return c, errors.New("no target URL")
	}
	u, err := url.Parse(c.URL)
	if err != nil {
		return c, fmt.Errorf("target URL %q: %w", c.URL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return c, fmt.Errorf("target URL %q: scheme must be http or https", c.URL)
	}
	if u.Host == "" || u.Hostname() == "" {
		return c, fmt.Errorf("target URL %q: no host", c.URL)
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return c, fmt.Errorf("target URL %q: port %s: must be in [1, 65535]", c.URL, p)
		}
	}
	if c.Method == "" {
		c.Method = "GET"
	}
	if strings.ContainsAny(c.Method, " \t\r\n") {
		return c, fmt.Errorf("method %q: contains white space", c.Method)
	}
	if len(c.Header) > MaxHeaders {
		return c, fmt.Errorf("%d headers: at most %d", len(c.Header), MaxHeaders)
	}
	if c.RequestTag != "" {
		if err := CheckRequestTag(c.RequestTag); err != nil {
			return c, err
		}
	}
	head := len(c.Method) + len(c.URL) + tagLineLen(c.RequestTag)
	for _, h := range c.Header {
		if h.Name == "" || strings.ContainsAny(h.Name, " \t\r\n:") || strings.ContainsAny(h.Value, "\r\n") {
			return c, fmt.Errorf("header %q: malformed", h.Name)
		}
		if strings.EqualFold(h.Name, RequestHeader) {
			return c, fmt.Errorf("header %s: set by schedscope itself (each request's id and intended send time, with the run's tag); remove it", h.Name)
		}
		head += len(h.Name) + len(h.Value) + len(": \r\n")
	}
	if head > MaxRequestHead {
		return c, fmt.Errorf("request line and headers of %d bytes: at most %d (64 KiB)", head, MaxRequestHead)
	}
	if len(c.Body) > MaxBody {
		return c, fmt.Errorf("body of %d bytes: at most %d (64 MiB)", len(c.Body), MaxBody)
	}
	open := c.Rate != 0 || len(c.Rates) > 0
	switch {
	case open && c.Users != 0:
		return c, errors.New("both a rate (open model) and users (closed model) given: choose one")
	case !open && c.Users == 0:
		return c, errors.New("neither a rate (open model) nor users (closed model) given")
	case c.Rate != 0 && len(c.Rates) > 0:
		return c, errors.New("both Rate and Rates given: choose one")
	case c.Users < 0 || c.Users > MaxUsers:
		return c, fmt.Errorf("users %d: must be in [1, %d]", c.Users, MaxUsers)
	case len(c.Rates) > MaxSteps:
		return c, fmt.Errorf("%d rates: a ladder has at most %d steps", len(c.Rates), MaxSteps)
	}
	if c.Rate != 0 {
		c.Rates = []float64{c.Rate}
	}
	c.Rates = append([]float64(nil), c.Rates...)
	for _, r := range c.Rates {
		if !(r > 0) || r > MaxRate {
			return c, fmt.Errorf("rate %g: must be > 0 and at most 10,000,000 req/s", r)
		}
	}
	switch c.Arrivals {
	case "":
		c.Arrivals = Uniform
	case Uniform, Poisson:
	default:
		return c, fmt.Errorf("arrivals %q: want uniform or poisson", c.Arrivals)
	}
	if c.Seed == 0 {
		c.Seed = DefaultSeed
	}
	switch c.Client {
	case "":
		c.Client = Lean
	case Lean, NetHTTP:
	default:
		return c, fmt.Errorf("client %q: want lean or net/http", c.Client)
	}
	for _, b := range []struct {
		name     string
		d, limit time.Duration
	}{
		{"warmup", c.Warmup, MaxPhase}, {"duration", c.Duration, MaxPhase},
		{"think", c.Think, MaxWait}, {"pause", c.Pause, MaxWait}, {"timeout", c.Timeout, MaxWait},
		{"progress period", c.ProgressEvery, MaxEvery}, {"interval period", c.IntervalEvery, MaxEvery},
	} {
		if b.d < 0 {
			return c, fmt.Errorf("%s %v: must not be negative", b.name, b.d)
		}
		if b.d > b.limit {
			return c, fmt.Errorf("%s %v: at most %v", b.name, b.d, b.limit)
		}
	}
	for name, d := range map[string]time.Duration{"progress period": c.ProgressEvery, "interval period": c.IntervalEvery} {
		if d != 0 && d < MinEvery {
			return c, fmt.Errorf("%s %v: at least %v", name, d, MinEvery)
		}
	}
	if c.Duration == 0 {
		c.Duration = DefaultDuration
	}
	if c.Timeout == 0 {
		c.Timeout = DefaultTimeout
	}
	if c.ProgressEvery == 0 {
		c.ProgressEvery = DefaultProgressEvery
	}
	if c.IntervalEvery == 0 {
		c.IntervalEvery = DefaultIntervalEvery
	}
	if c.IntervalEvery < c.ProgressEvery {
		c.IntervalEvery = c.ProgressEvery
	}
	if c.MaxInflight < 0 || c.MaxInflight > MaxConns {
		return c, fmt.Errorf("max in-flight %d: must be in [1, %d]", c.MaxInflight, MaxConns)
	}
	if err := c.Shard.check(); err != nil {
		return c, err
	}
	if c.Shard.Count == 0 {
		c.Shard.Count = 1
	}
	if c.Shard.sharded() && c.Users > 0 {
		return c, fmt.Errorf("shard %s: sharding deals out an open-model schedule (a rate); the closed model has none", c.Shard)
	}
	if !c.StartAt.IsZero() {
		now := time.Now()
		if late := now.Sub(c.StartAt); late > MaxStartLate {
			return c, fmt.Errorf("start %s is %v in the past: more than %v", c.StartAt.UTC().Format(time.RFC3339Nano), late.Round(time.Millisecond), MaxStartLate)
		}
		if ahead := c.StartAt.Sub(now); ahead > MaxWait {
			return c, fmt.Errorf("start %s is %v ahead: at most %v", c.StartAt.UTC().Format(time.RFC3339Nano), ahead.Round(time.Second), MaxWait)
		}
	}
	if c.Users > 0 {
		c.MaxInflight = c.Users
	} else if c.MaxInflight == 0 {
		c.MaxInflight = DefaultMaxInflight(ownTopRate(&c))
	}
	c.Header = append([]Header(nil), c.Header...)
	return c, nil
}

// DefaultMaxInflight is the default in-flight cap for an offered rate:
// min(10 s x rate, 5,000), and at least 1.
func DefaultMaxInflight(rate float64) int {
	n := int(rate * DefaultInflightSeconds)
	if n > DefaultMaxInflightCap {
		n = DefaultMaxInflightCap
	}
	if n < 1 {
		n = 1
	}
	return n
}

func maxOf(xs []float64) float64 {
	var m float64
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
