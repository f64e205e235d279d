package server

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/dpbandit/dpbandit/store"
	"golang.org/x/time/rate"
)

// auth holds the API keys: only SHA-256 hashes are stored and kept; a
// presented key is hashed and compared in constant time.
type auth struct {
	st    store.Store
	admin []byte // hash of the admin key

	mu      sync.RWMutex
	clients map[[32]byte]*principal // by hash

	limit float64
	burst int
	lmu   sync.Mutex
	lims  map[string]*rate.Limiter

	metrics []byte // hash of the metrics token (nil: none)

	// Failed authentications are limited per client address (fails):
	// failBurst attempts at once, then one per failEvery.
	fmu   sync.Mutex
	fails map[string]*rate.Limiter
}

// Limits of failed authentication per client address: a burst of 20 wrong
// keys, then one a second. A key is 256 random bits, so this is not what
// makes guessing hopeless; it bounds the CPU an attacker spends of ours and
// makes a scan visible (429s in the latency metric).
const (
	failBurst = 20
	failEvery = time.Second
	maxFails  = 100_000 // addresses tracked; beyond it, the recovered ones are dropped
)

// principal is an authenticated caller.
type principal struct {
	id    string
	admin bool
	hash  []byte
	scope map[string]bool // client keys: experiment ids
	exps  []string
}

const adminMeta = "admin_key_sha256"

func newAuth(ctx context.Context, st store.Store, log *slog.Logger, adminKey, metricsToken string, limit float64, burst int) (*auth, string, error) {
	a := &auth{st: st, clients: map[[32]byte]*principal{}, limit: limit, burst: burst, lims: map[string]*rate.Limiter{}, fails: map[string]*rate.Limiter{}}
	if a.burst <= 0 {
		a.burst = max(1, int(2*limit))
	}
	if metricsToken != "" {
		if len(metricsToken) < 16 {
			return nil, "", errors.New("the metrics token must have at least 16 characters")
		}
		a.metrics = hashKey(metricsToken)
	}
	generated := ""
	switch {
	case adminKey != "":
		if len(adminKey) < 16 {
			return nil, "", errors.New("the admin key must have at least 16 characters")
		}
		a.admin = hashKey(adminKey)
		old, err := st.Meta(ctx, adminMeta)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, "", err
		}
		if len(old) > 0 && subtle.ConstantTimeCompare(old, a.admin) != 1 {
			// The recovery path for a lost admin key (README): the old
			// key stops working now.
			log.Warn("the admin key given with --admin-key / DPBANDIT_ADMIN_KEY replaces the admin key stored in the database: the previous admin key no longer works")
		}
		if err := st.SetMeta(ctx, adminMeta, a.admin); err != nil {
			return nil, "", err
		}
	default:
		h, err := st.Meta(ctx, adminMeta)
		switch {
		case err == nil && len(h) == 32:
			a.admin = h
		case err == nil || errors.Is(err, store.ErrNotFound):
			generated = newKey()
			a.admin = hashKey(generated)
			if err := st.SetMeta(ctx, adminMeta, a.admin); err != nil {
				return nil, "", err
			}
		default:
			return nil, "", err
		}
	}
	keys, err := st.Keys(ctx)
	if err != nil {
		return nil, "", err
	}
	for _, k := range keys {
		a.add(k)
	}
	return a, generated, nil
}

func newPrincipal(k store.Key) *principal {
	p := &principal{id: k.ID, admin: k.Role == store.RoleAdmin, hash: k.Hash, scope: map[string]bool{}, exps: slices.Clone(k.Experiments)}
	for _, e := range k.Experiments {
		p.scope[e] = true
	}
	return p
}

func (a *auth) add(k store.Key) {
	p := newPrincipal(k)
	a.mu.Lock()
	a.clients[[32]byte(k.Hash)] = p
	a.mu.Unlock()
}

// newKey returns a fresh secret API key: "dpb_" and 43 characters (32 bytes
// from crypto/rand).
func newKey() string {
	var b [32]byte
	rand.Read(b[:])
	return "dpb_" + base64.RawURLEncoding.EncodeToString(b[:])
}

// newID returns a public identifier with the prefix.
func newID(prefix string) string {
	var b [9]byte
	rand.Read(b[:])
	return prefix + strings.ToLower(strings.TrimRight(base32Enc.EncodeToString(b[:]), "="))
}

var adminPrincipal = &principal{id: "admin", admin: true}

// authenticate returns the caller or a 401 error (429 when the caller's
// address has failed too often).
//
// A valid key always passes. A failed attempt counts against the client's
// address; once the address has used up its failed attempts (failBurst,
// then one per failEvery), its failures are answered 429 instead of 401.
func (a *auth) authenticate(r *http.Request) (*principal, *apiError) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, errf(http.StatusUnauthorized, "unauthorized", "missing API key: send the header \"Authorization: Bearer KEY\" with the admin key or a client key")
	}
	tok, ok := strings.CutPrefix(h, "Bearer ")
	if !ok || strings.TrimSpace(tok) == "" {
		return nil, a.fail(r, errf(http.StatusUnauthorized, "unauthorized", "malformed Authorization header: use \"Authorization: Bearer KEY\""))
	}
	sum := hashKey(strings.TrimSpace(tok))
	if subtle.ConstantTimeCompare(sum, a.admin) == 1 {
		return a.limited(adminPrincipal)
	}
	a.mu.RLock()
	p := a.clients[[32]byte(sum)]
	a.mu.RUnlock()
	if p == nil || subtle.ConstantTimeCompare(sum, p.hash) != 1 {
		return nil, a.fail(r, errf(http.StatusUnauthorized, "unauthorized", "the API key is not valid: use the admin key printed at the first start (or set with --admin-key / DPBANDIT_ADMIN_KEY) or a client key created with POST /v1/keys"))
	}
	return a.limited(p)
}

// metricsAccess decides what a /metrics scrape sees: with no Authorization
// header, the process-level series (ok false); with the metrics token or
// the admin key, everything (ok true); with anything else, a 401 (or 429)
// is written (answered true).
func (a *auth) metricsAccess(w http.ResponseWriter, r *http.Request) (ok, answered bool) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return false, false
	}
	tok, _ := strings.CutPrefix(h, "Bearer ")
	sum := hashKey(strings.TrimSpace(tok))
	if subtle.ConstantTimeCompare(sum, a.admin) == 1 || (a.metrics != nil && subtle.ConstantTimeCompare(sum, a.metrics) == 1) {
		return true, false
	}
	writeErr(w, a.fail(r, errf(http.StatusUnauthorized, "unauthorized", "the metrics credential is not valid: send \"Authorization: Bearer TOKEN\" with the metrics token (serve --metrics-token) or the admin key for the per-experiment series, or no Authorization header for the process-level ones")))
	return false, true
}

// clientAddr is the request's remote address without the port. (Behind a
// proxy every client shares the proxy's address: the limit then applies
// to all of them together.)
func clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// fail counts a failed authentication from r's address and returns e, or
// a 429 when the address has used up its failed attempts.
func (a *auth) fail(r *http.Request, e *apiError) *apiError {
	addr := clientAddr(r)
	a.fmu.Lock()
	l := a.fails[addr]
	if l == nil {
		if len(a.fails) >= maxFails {
			for k, v := range a.fails {
				if v.Tokens() >= failBurst {
					delete(a.fails, k)
				}
			}
		}
		l = rate.NewLimiter(rate.Every(failEvery), failBurst)
		a.fails[addr] = l
	}
	ok := l.Allow()
	a.fmu.Unlock()
	if !ok {
		return errf(http.StatusTooManyRequests, "auth_rate_limited", fmt.Sprintf("too many failed authentications from %s: wait a second between attempts (a burst of %d is allowed), and check the key", addr, failBurst))
	}
	return e
}

func (a *auth) limited(p *principal) (*principal, *apiError) {
	if a.limit <= 0 {
		return p, nil
	}
	a.lmu.Lock()
	l := a.lims[p.id]
	if l == nil {
		l = rate.NewLimiter(rate.Limit(a.limit), a.burst)
		a.lims[p.id] = l
	}
	a.lmu.Unlock()
	if !l.Allow() {
		return nil, errf(http.StatusTooManyRequests, "rate_limited", fmt.Sprintf("this key exceeded its rate limit of %g requests/s; slow down or ask the operator to raise --rate-limit", a.limit))
	}
	return p, nil
}

var errNoKey = errors.New("no such key")

// revoke deletes a client key from the store and from memory: it stops
// authenticating at once.
func (a *auth) revoke(ctx context.Context, id string) error {
	a.mu.RLock()
	var hash [32]byte
	found := false
	for h, p := range a.clients {
		if p.id == id {
			hash, found = h, true
		}
	}
	a.mu.RUnlock()
	if !found {
		return errNoKey
	}
	if err := a.st.DeleteKey(ctx, id); err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return errNoKey
		}
		return err
	}
	a.mu.Lock()
	delete(a.clients, hash)
	a.mu.Unlock()
	return nil
}

// reload replaces the keys in memory by the store's (after a deletion
// changed their scopes).
func (a *auth) reload(ctx context.Context) error {
	keys, err := a.st.Keys(ctx)
	if err != nil {
		return err
	}
	m := make(map[[32]byte]*principal, len(keys))
	for _, k := range keys {
		m[[32]byte(k.Hash)] = newPrincipal(k)
	}
	a.mu.Lock()
	a.clients = m
	a.mu.Unlock()
	return nil
}

// createKey stores a client key scoped to experiments and returns it once.
func (a *auth) createKey(ctx context.Context, exps []string) (store.Key, string, error) {
	key := newKey()
	k := store.Key{ID: newID("key_"), Hash: hashKey(key), Role: store.RoleClient, Experiments: slices.Clone(exps), CreatedAt: time.Now().UTC()}
	if err := a.st.CreateKey(ctx, k); err != nil {
		return k, "", err
	}
	a.add(k)
	return k, key, nil
}
