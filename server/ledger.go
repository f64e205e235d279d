package server

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/dpbandit/dpbandit/privacy"
)

// ledger is an experiment's privacy accounting: the live filter charged
// before each data-reading step, and its write-ahead reservation.
//
// # Write-ahead reservation
//
// Decisions are served from memory and logged asynchronously, so a crash
// can lose decisions that were already released. The budget they spent must
// not be lost with them. The ledger therefore keeps on disk a reservation
// resv, itself a privacy.Filter of the same notion and budget, that is
// always at least what the live filter f has spent:
//
//	spent(f) ≤ spent(resv)   (exact rationals)
//
// resv grows by chunks: an extension spends one chunk c on a copy of the
// durable resv and is committed by the writer; only once that commit is
// durable does the chunk become an allowance, a filter with budget c on
// which the steps it covers are charged too. A step of cost x is taken only
// if f accepts it (the budget) and some durable allowance accepts it (the
// reservation covers it). Because allowances are chunks of resv beyond the
// spent(f) of the previous durable reservation, spent(f) never exceeds
// spent(resv), exactly. When the chunk would exceed the budget, the last
// extension reserves what remains: resv then covers the whole budget (all).
//
// After a crash the experiment restarts with f := resv ("spent := reserved",
// conservative): the recorded spent is at least everything ever released,
// and it never decreases. With all set, the experiment restarts exhausted.
// The waste a crash causes is the unused allowance, at most about two
// chunks; chunks are sized for about half a second of decisions at the
// recent cost (between 16 and 32768 steps, and at most 5% of the horizon),
// and never more than a quarter of the budget not yet reserved. A graceful
// shutdown gives the unused reservation back (writer.release).
//
// Every method is called with the experiment's mutex held.
type ledger struct {
	f    *privacy.Filter // live: exact spent of the steps taken
	resv *privacy.Filter // durable reservation (as last committed)
	all  bool            // resv covers the whole budget
	covs []*allowance    // durable allowances not yet used up
	pend *extension      // requested extension, not yet durable
	maxC float64         // largest step cost since the last request (sizing)
}

type allowance struct {
	f       *privacy.Filter
	planned int // steps the chunk was sized for
	used    int
}

// extension is a requested reservation chunk. next is resv with the chunk
// spent: what the commit writes. done is closed when the commit finished
// (ok reports whether it was durable).
type extension struct {
	chunk    float64
	next     *privacy.Filter
	all      bool
	planned  int
	inflight bool // taken by the writer
	done     chan struct{}
	ok       bool
}

func newFilter(n privacy.Notion, budget float64) (*privacy.Filter, error) {
	return privacy.NewFilter(n, budget)
}

func cloneFilter(f *privacy.Filter) *privacy.Filter {
	b, err := f.MarshalJSON()
	if err != nil {
		panic(err) // programmer error: a filter always marshals
	}
	var g privacy.Filter
	if err := g.UnmarshalJSON(b); err != nil {
		panic(err)
	}
	return &g
}

// ledgerState is the durable form: the reservation (which becomes the live
// filter on restart) and whether it covers the whole budget.
type ledgerState struct {
	Reserved json.RawMessage `json:"reserved"`
	All      bool            `json:"all"`
}

func newLedger(n privacy.Notion, budget float64) (*ledger, error) {
	f, err := newFilter(n, budget)
	if err != nil {
		return nil, err
	}
	r, _ := newFilter(n, budget)
	return &ledger{f: f, resv: r}, nil
}

// restoreLedger rebuilds the ledger after a restart: spent := reserved.
func restoreLedger(s ledgerState) (*ledger, error) {
	var r privacy.Filter
	if err := r.UnmarshalJSON(s.Reserved); err != nil {
		return nil, fmt.Errorf("privacy ledger: %w", err)
	}
	return &ledger{f: cloneFilter(&r), resv: &r, all: s.All}, nil
}

func (l *ledger) state() ledgerState {
	b, _ := l.resv.MarshalJSON()
	return ledgerState{Reserved: b, All: l.all}
}

// covered reports whether a step of cost x is covered by a durable
// allowance (without charging).
func (l *ledger) covered(x float64) bool {
	if l.all || x == 0 {
		return true
	}
	for _, a := range l.covs {
		if a.f.CanSpend(x) {
			return true
		}
	}
	return false
}

// charge records a step of cost x that fits(x) and covered(x) accepted.
func (l *ledger) charge(x float64) {
	if x == 0 {
		return
	}
	if err := l.f.Spend(x); err != nil {
		panic(fmt.Sprintf("server: charge of an unchecked step: %v", err))
	}
	l.maxC = max(l.maxC, x)
	if l.all {
		return
	}
	for len(l.covs) > 0 {
		a := l.covs[0]
		if a.f.Spend(x) == nil {
			a.used++
			return
		}
		l.covs = l.covs[1:] // what is left of it is smaller than x: wasted reservation, never budget
	}
	panic("server: charge of an uncovered step")
}

// low reports whether an extension should be requested now: the
// allowances are nearly used up and none is pending.
func (l *ledger) low() bool {
	if l.all || l.pend != nil {
		return false
	}
	planned, used := 0, 0
	for _, a := range l.covs {
		planned += a.planned
		used += a.used
	}
	return 2*used >= planned
}

// request creates a pending extension for steps of about cost x (x > 0 or
// the largest seen), sized for n steps. It returns the pending extension.
func (l *ledger) request(x float64, n int) *extension {
	if l.pend != nil {
		return l.pend
	}
	c := max(x, l.maxC)
	l.maxC = 0
	if c == 0 {
		c = l.f.Budget() * 1e-3
	}
	var chunk float64
	if l.f.Notion() == privacy.NotionGDP {
		chunk = c * math.Sqrt(float64(n))
	} else {
		chunk = c * float64(n)
	}
	// At most a quarter of what is not yet reserved (so that a crash wastes
	// little and the whole budget is reserved only at its very end), but at
	// least the step that asks.
	chunk = max(min(chunk, l.resv.PerStep(4)), x)
	next := cloneFilter(l.resv)
	all := false
	if next.Spend(chunk) != nil {
		chunk = next.Remaining()
		if chunk <= 0 || next.Spend(chunk) != nil {
			chunk = 0
		}
		all = true
	}
	l.pend = &extension{chunk: chunk, next: next, all: all, planned: n, done: make(chan struct{})}
	return l.pend
}

// committed activates the pending extension after the writer made it durable.
func (l *ledger) committed(e *extension) {
	if l.pend != e {
		return
	}
	l.pend = nil
	l.resv = e.next
	if e.all {
		l.all, l.covs = true, nil
	} else if e.chunk > 0 {
		a, err := newFilter(l.f.Notion(), e.chunk)
		if err == nil {
			l.covs = append(l.covs, &allowance{f: a, planned: e.planned})
		}
	}
	e.ok = true
	close(e.done)
}

// failed drops a pending extension whose commit failed; waiters retry.
func (l *ledger) failed(e *extension) {
	if l.pend == e {
		l.pend = nil
		close(e.done)
	}
}
