package sweep

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/schedscope/schedscope/internal/rundir"
)

// AgentClient talks to schedscope's in-target agent (package collect/agent,
// mounted at /debug/schedscope/). Its methods are safe for concurrent use.
type AgentClient struct {
	base  string // ends with "/"
	token string
	http  *http.Client
}

// NewAgentClient returns a client for the agent at base (such as
// "http://127.0.0.1:8080/debug/schedscope/"); token, when not empty, is sent
// as a bearer token.
func NewAgentClient(base, token string) (*AgentClient, error) {
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("agent URL %q: want http://host:port/debug/schedscope/", base)
	}
	if !strings.HasSuffix(base, "/") {
		base += "/"
	}
	return &AgentClient{base: base, token: token, http: &http.Client{Timeout: 5 * time.Second}}, nil
}

// Close releases the client's idle connections.
func (a *AgentClient) Close() { a.http.CloseIdleConnections() }

// agentSnapshot is the part of the agent's /metrics document the sweep reads.
type agentSnapshot struct {
	GOMAXPROCS int                `json:"gomaxprocs"`
	Values     map[string]float64 `json:"values"`
}

// Figures reads the agent's /metrics and returns the scheduler figures. The
// created-goroutines count is cumulative since the target started.
func (a *AgentClient) Figures(ctx context.Context) (*rundir.AgentFigures, error) {
	var snap agentSnapshot
	if err := a.do(ctx, http.MethodGet, "metrics", &snap); err != nil {
		return nil, err
	}
	return &rundir.AgentFigures{
		GOMAXPROCS:        float64(snap.GOMAXPROCS),
		Goroutines:        snap.Values["/sched/goroutines:goroutines"],
		Threads:           snap.Values["/sched/threads/total:threads"],
		GoroutinesCreated: snap.Values["/sched/goroutines-created:goroutines"],
	}, nil
}

// SetGOMAXPROCS sets the target's GOMAXPROCS through POST /gomaxprocs and
// checks that the target reports the new value. The target must have enabled
// it (agent.Options.AllowSetGOMAXPROCS): otherwise the agent answers 403.
func (a *AgentClient) SetGOMAXPROCS(ctx context.Context, n int) error {
	var st struct {
		GOMAXPROCS int `json:"gomaxprocs"`
	}
	if err := a.do(ctx, http.MethodPost, "gomaxprocs?n="+strconv.Itoa(n), &st); err != nil {
		return err
	}
	if st.GOMAXPROCS != n {
		return fmt.Errorf("agent %s: GOMAXPROCS is %d after setting %d", a.base, st.GOMAXPROCS, n)
	}
	return nil
}

func (a *AgentClient) do(ctx context.Context, method, path string, into any) error {
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, nil)
	if err != nil {
		return fmt.Errorf("agent %s%s: %w", a.base, path, err)
	}
	if a.token != "" {
		req.Header.Set("Authorization", "Bearer "+a.token)
	}
	resp, err := a.http.Do(req)
	if err != nil {
		return fmt.Errorf("agent: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("agent %s %s%s: %w", method, a.base, path, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("agent %s %s%s: %s: %s", method, a.base, path, resp.Status, strings.TrimSpace(string(body)))
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("agent %s %s%s: %w", method, a.base, path, err)
	}
	return nil
}
