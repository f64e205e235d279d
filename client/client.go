// Package client is a small typed Go client for dpbandit's HTTP decision
// service (`dpbandit serve`, contract in api/openapi.yaml).
//
// A Client is safe for concurrent use by many goroutines and reuses its
// connections (HTTP keep-alive): make one per service and share it. Every
// call takes a context for cancellation and deadlines. Errors returned by the
// service are *APIError values carrying the HTTP status and the service's
// {"error": {"code", "message"}} body; test them with errors.As, with
// IsNotFound, IsConflict and friends, or with ErrorCode and the Code
// constants (e.g. CodeExperimentStopped).
//
// The client only ever sees what the service releases: for a client key,
// that is the chosen arm (a differentially private output) and nothing
// computed from raw rewards.
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Client talks to one dpbandit service with one API key.
type Client struct {
	base      string // scheme://host[:port][/prefix], without a trailing slash
	key       string
	hc        *http.Client
	timeout   time.Duration
	userAgent string
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient makes the client send its requests through hc (for custom
// transports, proxies or timeouts). hc should keep connections alive.
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithUserAgent sets the User-Agent header of every request.
func WithUserAgent(ua string) Option { return func(c *Client) { c.userAgent = ua } }

// WithTimeout sets the overall timeout of each request (default 30s). It
// has no effect together with WithHTTPClient, whose client's own Timeout
// applies.
func WithTimeout(d time.Duration) Option { return func(c *Client) { c.timeout = d } }

// sharedTransport is shared by clients made without WithHTTPClient, so that
// many clients to one service share one connection pool. It keeps up to 256
// idle connections per host: net/http's default of 2 would close and reopen
// connections under any concurrency.
var sharedTransport = func() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = 1024
	t.MaxIdleConnsPerHost = 256
	t.IdleConnTimeout = 90 * time.Second
	t.DialContext = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	return t
}()

// New returns a client for the service at baseURL (e.g.
// "http://127.0.0.1:8080") that authenticates with key (sent as
// "Authorization: Bearer key"). It returns an error when baseURL is not an
// absolute http(s) URL or key is empty.
func New(baseURL, key string, opts ...Option) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("client: base URL %q must be an absolute http:// or https:// URL such as http://127.0.0.1:8080", baseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("client: base URL %q must not have a query or fragment", baseURL)
	}
	if strings.TrimSpace(key) == "" {
		return nil, errors.New("client: empty API key: pass the admin key or a client key")
	}
	c := &Client{base: strings.TrimRight(u.String(), "/"), key: key, timeout: 30 * time.Second, userAgent: "dpbandit-client"}
	for _, o := range opts {
		o(c)
	}
	if c.hc == nil {
		c.hc = &http.Client{Transport: sharedTransport, Timeout: c.timeout}
	}
	return c, nil
}

// BaseURL returns the service URL the client was made with, without a
// trailing slash.
func (c *Client) BaseURL() string { return c.base }

// APIError is an error answered by the service: a non-2xx status with its
// {"error": {"code", "message"}} body. Message says what to change.
type APIError struct {
	Status  int    // HTTP status code, e.g. 409
	Code    string // machine-readable code from the body, e.g. "conflict"; may be empty
	Message string // human-readable message from the body (or the raw body when it is not JSON)
	Method  string // request method
	Path    string // request path, e.g. /v1/experiments/exp_1/rewards
	// Body is the whole answer (at most 64 KiB), e.g. with the per-item
	// "results" of a batch of rewards that was not wholly accepted.
	Body []byte
}

func (e *APIError) Error() string {
	code := e.Code
	if code == "" {
		code = strings.ToLower(http.StatusText(e.Status))
	}
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	return fmt.Sprintf("dpbandit: %s %s: %d %s: %s", e.Method, e.Path, e.Status, code, msg)
}

// StatusOf returns the HTTP status of an *APIError in err's chain, or 0.
func StatusOf(err error) int {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}

// ErrorCode returns the machine-readable code of an *APIError in err's
// chain (e.g. CodeExperimentStopped), or "" when there is none or the
// service's body carried none.
func ErrorCode(err error) string {
	var ae *APIError
	if errors.As(err, &ae) {
		return ae.Code
	}
	return ""
}

// Error codes (APIError.Code, ErrorCode) that callers commonly act on; the
// service's message says the rest in words. api/openapi.yaml is the
// contract.
const (
	// CodeNotFound (404): no such experiment (never created, or deleted),
	// or no such key.
	CodeNotFound = "not_found"
	// CodeUnknownEvent (404): a reward for an event id the experiment never
	// decided (or lost in a crash before it was logged).
	CodeUnknownEvent = "unknown_event"
	// CodeUnauthorized (401): a missing, wrong or revoked key.
	CodeUnauthorized = "unauthorized"
	// CodeForbidden (403): a client key outside its scope, or on an
	// operation that needs the admin key.
	CodeForbidden = "forbidden"
	// CodeBudgetExhausted (409): a decision refused because the privacy
	// budget is spent and the experiment's on_exhausted is "stop".
	CodeBudgetExhausted = "budget_exhausted"
	// CodeExperimentStopped (409): a decision on an experiment its operator
	// stopped (StopExperiment). Rewards for its past decisions are still
	// accepted.
	CodeExperimentStopped = "experiment_stopped"
	// CodeExperimentArchived (409): a decision or a reward on an archived
	// experiment (ArchiveExperiment), which is read-only.
	CodeExperimentArchived = "experiment_archived"
	// CodeRewardConflict (409): a second, different reward for one event.
	CodeRewardConflict = "reward_conflict"
	// CodeRewardPurged (409): a repeat of a reward whose value was deleted
	// after the experiment's reward_retention, so it cannot be compared.
	CodeRewardPurged = "reward_purged"
)

// IsNotFound reports whether err is a 404 from the service (unknown or
// deleted experiment, unknown event, unknown key).
func IsNotFound(err error) bool { return StatusOf(err) == http.StatusNotFound }

// IsConflict reports whether err is a 409 from the service: a second,
// different reward for one event, an experiment stopped by its budget or by
// its operator, or an archived one. ErrorCode tells them apart.
func IsConflict(err error) bool { return StatusOf(err) == http.StatusConflict }

// IsUnauthorized reports whether err is a 401 (missing, wrong or revoked
// key).
func IsUnauthorized(err error) bool { return StatusOf(err) == http.StatusUnauthorized }

// IsForbidden reports whether err is a 403 (a key outside its scope).
func IsForbidden(err error) bool { return StatusOf(err) == http.StatusForbidden }

var bufPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxErrorBody bounds how much of an error body is read, and maxBody how
// much of a successful one (a long experiment list).
const (
	maxErrorBody = 64 << 10
	maxBody      = 256 << 20
)

// do sends method path with in (JSON-encoded, unless nil) and decodes a 2xx
// body into out (unless nil). Non-2xx answers become *APIError.
func (c *Client) do(ctx context.Context, method, path string, in, out any) error {
	var body io.Reader
	var buf *bytes.Buffer
	if in != nil {
		buf = bufPool.Get().(*bytes.Buffer)
		buf.Reset()
		defer bufPool.Put(buf)
		if err := json.NewEncoder(buf).Encode(in); err != nil {
			return fmt.Errorf("client: encoding %s %s: %w", method, path, err)
		}
		body = bytes.NewReader(buf.Bytes())
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, body)
	if err != nil {
		return fmt.Errorf("client: %s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+c.key)
	req.Header.Set("Accept", "application/json")
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.userAgent != "" {
		req.Header.Set("User-Agent", c.userAgent)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return fmt.Errorf("client: %s %s: %w", method, path, err)
	}
	defer func() {
		// Drain so the connection goes back to the pool.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		resp.Body.Close()
	}()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return decodeError(resp, method, path)
	}
	if out == nil || resp.StatusCode == http.StatusNoContent {
		return nil
	}
	// Read the whole body into a pooled buffer (this also reaches EOF, so the
	// connection goes back to the pool at once), then decode it.
	rb := bufPool.Get().(*bytes.Buffer)
	rb.Reset()
	defer bufPool.Put(rb)
	if _, err := rb.ReadFrom(io.LimitReader(resp.Body, maxBody)); err != nil {
		return fmt.Errorf("client: reading the answer to %s %s (status %d): %w", method, path, resp.StatusCode, err)
	}
	if rb.Len() == 0 {
		return nil
	}
	if err := json.Unmarshal(rb.Bytes(), out); err != nil {
		return fmt.Errorf("client: decoding the answer to %s %s (status %d): %w", method, path, resp.StatusCode, err)
	}
	return nil
}

func decodeError(resp *http.Response, method, path string) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	ae := &APIError{Status: resp.StatusCode, Method: method, Path: path, Body: raw}
	var env struct {
		Error *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &env) == nil && env.Error != nil {
		ae.Code, ae.Message = env.Error.Code, env.Error.Message
	} else {
		ae.Message = strings.TrimSpace(string(raw))
	}
	return ae
}

func expPath(id string, rest string) string {
	return "/v1/experiments/" + url.PathEscape(id) + rest
}
