package server

import (
	"math"
	"testing"

	"github.com/dpbandit/dpbandit/privacy"
)

// TestLedgerLowAtHalfTheAllowance pins when the ledger asks for the next
// reservation: an allowance sized for n steps is "low" once half of its
// planned steps were charged (2·used ≥ planned), not before. A GDP
// allowance for 8 steps of μ = 0.01 holds 8·0.01² of μ²: after 3 steps
// low() is false, after 4 it is true; the steps are counted on the
// allowance they were charged to.
func TestLedgerLowAtHalfTheAllowance(t *testing.T) {
	l, err := newLedger(privacy.NotionGDP, 10)
	if err != nil {
		t.Fatal(err)
	}
	e := l.request(0.01, 8)
	l.committed(e)
	if !e.ok || len(l.covs) != 1 {
		t.Fatalf("committed extension: ok %v, %d allowances, want one", e.ok, len(l.covs))
	}
	for i := 1; i <= 4; i++ {
		if !l.covered(0.01) {
			t.Fatalf("step %d of 0.01 not covered by an allowance for 8 such steps", i)
		}
		l.charge(0.01)
		if got, want := l.low(), i >= 4; got != want {
			t.Errorf("after %d of 8 planned steps: low() = %v, want %v", i, got, want)
		}
	}
	if l.covs[0].used != 4 {
		t.Errorf("allowance used = %d after 4 steps, want 4", l.covs[0].used)
	}
}

// TestLedgerChunkSizing pins how a reservation chunk is sized for n steps
// of cost c (below the quarter-of-the-rest bound): GDP costs compose in
// quadrature, so n steps of μ = c need c·√n; pure and zCDP costs add, so
// c·n. With no step cost known (c = 0 and none seen) the chunk is sized
// from budget·10⁻³. A pending extension makes low() false.
func TestLedgerChunkSizing(t *testing.T) {
	for _, tc := range []struct {
		n       privacy.Notion
		x       float64
		steps   int
		want    float64
		comment string
	}{
		{privacy.NotionGDP, 0.01, 16, 0.04, "0.01·√16"},
		{privacy.NotionPure, 0.01, 16, 0.16, "0.01·16"},
		{privacy.NotionZCDP, 0.001, 25, 0.025, "0.001·25"},
		{privacy.NotionGDP, 0, 16, 0.004, "budget 1 · 1e-3 · √16"},
		{privacy.NotionPure, 0, 16, 0.016, "budget 1 · 1e-3 · 16"},
	} {
		l, err := newLedger(tc.n, 1)
		if err != nil {
			t.Fatal(err)
		}
		e := l.request(tc.x, tc.steps)
		if e.all || math.Abs(e.chunk-tc.want) > 1e-15 {
			t.Errorf("%s request(%v, %d): chunk %v (all %v), want %v = %s", tc.n, tc.x, tc.steps, e.chunk, e.all, tc.want, tc.comment)
		}
		if l.low() {
			t.Errorf("%s: low() with an extension pending, want false", tc.n)
		}
	}
}

// TestLedgerFailedExtension: a commit that failed drops the pending
// extension (its waiters are released through done, ok stays false, the
// reservation does not grow), so the next request creates a new one; a
// failed() for an extension that is no longer pending changes nothing.
func TestLedgerFailedExtension(t *testing.T) {
	l, _ := newLedger(privacy.NotionPure, 1)
	e := l.request(0.01, 16)
	l.failed(e)
	select {
	case <-e.done:
	default:
		t.Fatal("failed() did not close done")
	}
	if e.ok || l.pend != nil || l.resv.Spent() != 0 || len(l.covs) != 0 {
		t.Fatalf("after failed(): ok %v, pending %v, reserved %v, %d allowances; want nothing", e.ok, l.pend != nil, l.resv.Spent(), len(l.covs))
	}
	e2 := l.request(0.01, 16)
	if e2 == e || l.pend != e2 {
		t.Fatal("a request after a failed commit did not create a new extension")
	}
	l.failed(e) // stale: ignored
	if l.pend != e2 {
		t.Error("failed() of a stale extension dropped the pending one")
	}
}
