// Package conformance holds the checks that the K-armed suite
// (mab/policytest) and the contextual suite (linear/lineartest) share: every
// check here depends only on a bandit.Descriptor, on the privacy report, and
// on a caller-supplied way to build the policy and play rounds, never on the
// kind of policy. Each suite keeps its own environment, its own Play and its
// own seeds, and passes them in as closures.
//
// The helpers report through t and are meant to be called from within a
// subtest (t.Run), as the suites do.
package conformance

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/privacy"
)

// Deltas are the δ at which reports are compared.
var Deltas = []float64{1e-5, 1e-6}

// CheckParams checks d's parameters: every default lies in its range;
// Complete rejects a value outside the range (below, above, NaN,
// non-integer) with an error naming the parameter, and rejects unknown
// names. It then calls build with the completed defaults on a degenerate
// setting and requires an error, not a panic; ctor and degenerate name the
// constructor and the setting in the messages (e.g. "New", "K = 0").
func CheckParams(t *testing.T, d bandit.Descriptor, ctor, degenerate string, build func(bandit.Params) error) {
	t.Helper()
	for _, q := range d.Params {
		if err := q.Check(d.Name, q.Default); err != nil {
			t.Errorf("default of %s is out of its own range: %v", q.Name, err)
		}
		bad := []float64{math.NaN()}
		if !math.IsInf(q.Min, -1) {
			bad = append(bad, q.Min-max(1, math.Abs(q.Min)))
		}
		if !math.IsInf(q.Max, 1) {
			bad = append(bad, q.Max+max(1, math.Abs(q.Max)))
		}
		if q.Integer && q.Min+0.5 <= q.Max {
			bad = append(bad, q.Min+0.5)
		}
		for _, v := range bad {
			_, err := d.Complete(bandit.Params{q.Name: v})
			if err == nil {
				t.Errorf("Complete accepted %s = %v outside %s", q.Name, v, q.Range())
			} else if !strings.Contains(err.Error(), q.Name) {
				t.Errorf("Complete's error for %s = %v does not name the parameter: %v", q.Name, v, err)
			}
		}
	}
	if _, err := d.Complete(bandit.Params{"no-such-parameter": 1}); err == nil {
		t.Errorf("Complete accepted an unknown parameter name")
	}
	params, _ := d.Complete(nil)
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s with %s panicked instead of returning an error: %v", ctor, degenerate, r)
		}
	}()
	if err := build(params); err == nil {
		t.Errorf("%s accepted %s", ctor, degenerate)
	}
}

// FirstDifference returns the first index at which a and b differ, or −1
// when they agree on their common length.
func FirstDifference(a, b []int) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return -1
}

// CheckReport checks that d's report at (s, p) is present and consistent:
// mechanism, neighbouring relation and derivation stated; certified notion
// "none" exactly when d is not Private; a finite ε at every δ in Deltas for
// private policies; certified ε and value ≤ the paper's wherever the paper's
// value is valid. Then pol, built from (s, p), must implement
// bandit.Private, and after play (which runs it for T rounds) its own
// Privacy() must certify the same notion and ε as the report.
func CheckReport(t *testing.T, d bandit.Descriptor, s bandit.Setting, p bandit.Params, pol any, play func() error) {
	t.Helper()
	rep, err := d.Report(s, p)
	if err != nil {
		t.Fatalf("Report: %v", err)
	}
	if rep.Mechanism == "" || rep.Neighbouring == "" || rep.Derivation == "" {
		t.Errorf("report lacks mechanism, neighbouring relation or derivation: %+v", rep)
	}
	if rep.Private() != d.Private {
		t.Errorf("certified notion %q but descriptor Private = %v", rep.Certified.Notion, d.Private)
	}
	for _, delta := range Deltas {
		st, err := rep.At(delta)
		if err != nil {
			t.Fatalf("report at δ = %g: %v", delta, err)
		}
		if !d.Private {
			continue
		}
		if st.Epsilon == nil || math.IsNaN(*st.Epsilon) || math.IsInf(*st.Epsilon, 0) || *st.Epsilon < 0 {
			t.Errorf("certified ε at δ = %g is not finite: %v", delta, st.Epsilon)
			continue
		}
		if rep.Paper != nil && rep.PaperValid && st.PaperEpsilon != nil && *st.Epsilon > *st.PaperEpsilon*(1+1e-9) {
			t.Errorf("certified ε = %v exceeds the (valid) paper's ε = %v at δ = %g", *st.Epsilon, *st.PaperEpsilon, delta)
		}
	}
	if rep.Paper != nil && rep.PaperValid && rep.Paper.Notion == rep.Certified.Notion && rep.Certified.Notion != privacy.NotionRDP &&
		rep.Certified.Value > rep.Paper.Value*(1+1e-9) {
		t.Errorf("certified %s value %v exceeds the (valid) paper's %v", rep.Certified.Notion, rep.Certified.Value, rep.Paper.Value)
	}

	// The policy's own report after T rounds agrees with the descriptor's.
	pr, ok := pol.(bandit.Private)
	if !ok {
		t.Fatalf("policy %T does not implement bandit.Private (non-private policies return privacy.NotPrivate)", pol)
	}
	if err := play(); err != nil {
		t.Fatal(err)
	}
	own := pr.Privacy()
	if own.Certified.Notion != rep.Certified.Notion {
		t.Fatalf("Privacy() after T rounds has notion %q, Report has %q", own.Certified.Notion, rep.Certified.Notion)
	}
	for _, delta := range Deltas {
		a, _, err1 := own.Certified.Epsilon(delta)
		b, _, err2 := rep.Certified.Epsilon(delta)
		if err1 != nil || err2 != nil {
			t.Fatalf("ε at δ = %g: %v, %v", delta, err1, err2)
		}
		if !(a == b || math.Abs(a-b) <= 1e-9*math.Abs(b)) {
			t.Errorf("Privacy() after T rounds certifies ε = %v at δ = %g, Report certifies %v", a, delta, b)
		}
	}
}

// CheckAllocs requires that step (one Select and Update) allocates nothing
// over rounds steps after a warm-up of rounds steps.
func CheckAllocs(t *testing.T, rounds int, step func()) {
	t.Helper()
	// AllocsPerRun runs f once to warm up and once measured: the result is
	// the exact allocation count of the measured run.
	allocs := testing.AllocsPerRun(1, func() {
		for range rounds {
			step()
		}
	})
	if allocs != 0 {
		t.Errorf("Select+Update allocated %v times over %d rounds after warm-up, want 0", allocs, rounds)
	}
}

// CheckMetered checks a bandit.Metered policy pol, built from (s, p): over
// s.Horizon rounds (each played by step), NextCost is in the certified
// notion and composes (Σμ² for GDP, Σρ for zCDP, Σε for pure DP, order-wise
// Σε(α) for RDP) to no more than d's certified value. A policy that is not
// Metered passes (with a log line when d is Private).
func CheckMetered(t *testing.T, d bandit.Descriptor, s bandit.Setting, p bandit.Params, pol any, step func()) {
	t.Helper()
	m, ok := pol.(bandit.Metered)
	if !ok {
		if d.Private {
			t.Logf("%s is private but not bandit.Metered", d.Name)
		}
		return
	}
	rep, err := d.Report(s, p)
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	var curve []float64 // order-wise sum for RDP
	for round := range s.Horizon {
		c := m.NextCost()
		if (c.Value != 0 || c.Curve != nil) && c.Notion != rep.Certified.Notion {
			t.Fatalf("round %d: NextCost notion %q, certified notion %q", round, c.Notion, rep.Certified.Notion)
		}
		if !(c.Value >= 0) || math.IsInf(c.Value, 1) {
			t.Fatalf("round %d: NextCost value %v", round, c.Value)
		}
		switch c.Notion {
		case privacy.NotionGDP:
			sum += c.Value * c.Value
		case privacy.NotionRDP:
			if c.Curve == nil {
				break
			}
			if curve == nil {
				curve = make([]float64, len(c.Curve.Epsilons))
			}
			if len(c.Curve.Epsilons) != len(curve) {
				t.Fatalf("round %d: NextCost curve on %d orders, earlier %d", round, len(c.Curve.Epsilons), len(curve))
			}
			for i, v := range c.Curve.Epsilons {
				curve[i] += v
			}
		default:
			sum += c.Value
		}
		step()
	}
	switch rep.Certified.Notion {
	case privacy.NotionGDP:
		if b := rep.Certified.Value * rep.Certified.Value; sum > b*(1+1e-9) {
			t.Errorf("NextCost composes to Σμ² = %v over %d rounds, above the certified μ² = %v", sum, s.Horizon, b)
		}
	case privacy.NotionZCDP, privacy.NotionPure:
		if b := rep.Certified.Value; sum > b*(1+1e-9) {
			t.Errorf("NextCost composes to %v over %d rounds, above the certified %v", sum, s.Horizon, b)
		}
	case privacy.NotionRDP:
		cc := rep.Certified.Curve
		if cc == nil {
			t.Fatalf("RDP report without a curve")
		}
		if curve != nil && len(curve) != len(cc.Epsilons) {
			t.Fatalf("NextCost curve on %d orders, certified curve on %d", len(curve), len(cc.Epsilons))
		}
		for i, v := range curve {
			if v > cc.Epsilons[i]*(1+1e-9) {
				t.Errorf("NextCost composes to ε(%v) = %v, above the certified %v", cc.Orders[i], v, cc.Epsilons[i])
			}
		}
	default:
		t.Logf("NextCost composition not checked for notion %q", rep.Certified.Notion)
	}
}

// StateRun is how CheckState builds and plays a policy.
type StateRun struct {
	Horizon int // T: the state is saved after T/2 rounds
	// PolicySeed and EnvSeed seed the policy's and the environment's PCG.
	PolicySeed, EnvSeed [2]uint64
	// New builds the policy (the same descriptor, setting and parameters
	// every call) drawing from src.
	New func(src *rand.PCG) any
	// Play runs pol for n rounds on a fresh environment drawing from
	// envSrc, and returns the choice of every round.
	Play func(pol any, envSrc *rand.PCG, n int) ([]int, error)
}

// CheckState checks a policy implementing json.Marshaler and
// json.Unmarshaler (and skips one that does not): a fresh policy's state
// restores into the same state; its state saved after T/2 rounds is valid
// JSON; restored into a fresh policy whose generator is
// restored separately, it continues with the same choices as the original
// and ends in the same state; and UnmarshalJSON refuses another policy's
// state.
func CheckState(t *testing.T, r StateRun) {
	t.Helper()
	src := rand.NewPCG(r.PolicySeed[0], r.PolicySeed[1])
	pol := r.New(src)
	mar, ok1 := pol.(json.Marshaler)
	if _, ok2 := pol.(json.Unmarshaler); !ok1 || !ok2 {
		t.Skipf("%T does not implement json.Marshaler and json.Unmarshaler", pol)
	}
	// A fresh policy's state restores too (a server stores it at creation
	// and loads it after a restart before any round is played), into the
	// same state.
	fresh, err := mar.MarshalJSON()
	if err != nil {
		t.Fatalf("MarshalJSON of a fresh policy: %v", err)
	}
	pol0 := r.New(rand.NewPCG(r.PolicySeed[0], r.PolicySeed[1]))
	if err := pol0.(json.Unmarshaler).UnmarshalJSON(fresh); err != nil {
		t.Fatalf("UnmarshalJSON of a fresh policy's state: %v", err)
	}
	if again, err := pol0.(json.Marshaler).MarshalJSON(); err != nil || string(again) != string(fresh) {
		t.Errorf("a fresh state restored and saved again differs (err %v):\n%s\n%s", err, again, fresh)
	}
	envSrc := rand.NewPCG(r.EnvSeed[0], r.EnvSeed[1])
	half := r.Horizon / 2
	if _, err := r.Play(pol, envSrc, half); err != nil {
		t.Fatal(err)
	}
	state, err := mar.MarshalJSON()
	if err != nil {
		t.Fatalf("MarshalJSON: %v", err)
	}
	if !json.Valid(state) {
		t.Fatalf("MarshalJSON returned invalid JSON")
	}
	polRNG, _ := src.MarshalBinary()
	envRNG, _ := envSrc.MarshalBinary()
	want, err := r.Play(pol, envSrc, r.Horizon-half)
	if err != nil {
		t.Fatal(err)
	}

	src2, envSrc2 := &rand.PCG{}, &rand.PCG{}
	if err := src2.UnmarshalBinary(polRNG); err != nil {
		t.Fatal(err)
	}
	if err := envSrc2.UnmarshalBinary(envRNG); err != nil {
		t.Fatal(err)
	}
	restored := r.New(src2)
	if err := restored.(json.Unmarshaler).UnmarshalJSON(state); err != nil {
		t.Fatalf("UnmarshalJSON of its own state: %v", err)
	}
	got, err := r.Play(restored, envSrc2, r.Horizon-half)
	if err != nil {
		t.Fatal(err)
	}
	if i := FirstDifference(want, got); i >= 0 {
		t.Fatalf("restored policy diverges at round %d: choice %d, want %d", half+i, got[i], want[i])
	}
	again, err := restored.(json.Marshaler).MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	final, _ := mar.MarshalJSON()
	if string(again) != string(final) {
		t.Errorf("after the same rounds, the restored policy's state differs from the original's")
	}
	if err := restored.(json.Unmarshaler).UnmarshalJSON([]byte(`{"policy":"no-such-policy"}`)); err == nil {
		t.Errorf("UnmarshalJSON accepted another policy's state")
	}
}

// CheckPropensities checks a policy's SelectProbs (bandit.Propensities)
// against its Select in the policy's current state: probs(out) fills out
// and returns the number of draws (0 when exact), and sel() is one Select
// call that does not change the distribution of the next (the caller
// freezes anything that would, such as a forced-exploration schedule).
// The probabilities must sum to 1, and they must agree with the frequencies
// of n Select calls within 5 standard errors of the difference,
// sqrt(p(1−p)(1/D + 1/n)) for an estimate from D draws (1/D = 0 when
// exact), plus 1e-3; an exact answer must also never give probability 0 to
// an arm Select returns. Fixed seeds make the check deterministic; a true
// difference of 0.02 at n = D = 20000 fails it.
func CheckPropensities(t *testing.T, k, n int, probs func(out []float64) int, sel func() int) {
	t.Helper()
	out := make([]float64, k)
	draws := probs(out)
	var sum float64
	for i, p := range out {
		if p < 0 || p > 1 || math.IsNaN(p) {
			t.Fatalf("SelectProbs[%d] = %v, not a probability", i, p)
		}
		sum += p
	}
	if math.Abs(sum-1) > 1e-12 {
		t.Fatalf("SelectProbs sums to %.15g, want 1", sum)
	}
	invD := 0.0 // exact: no estimation error on the SelectProbs side
	if draws > 0 {
		invD = 1 / float64(draws)
	}
	freq := make([]float64, k)
	for range n {
		a := sel()
		if draws == 0 && out[a] == 0 {
			t.Fatalf("exact SelectProbs %v gives probability 0 to arm %d, which Select returned", out, a)
		}
		freq[a]++
	}
	for i := range freq {
		freq[i] /= float64(n)
		pbar := (out[i] + freq[i]) / 2
		tol := 5*math.Sqrt(pbar*(1-pbar)*(invD+1/float64(n))) + 1e-3
		if d := math.Abs(out[i] - freq[i]); d > tol {
			t.Errorf("arm %d: SelectProbs %.4f (from %d draws) vs Select frequency %.4f over %d calls: difference %.4f > %.4f", i, out[i], draws, freq[i], n, d, tol)
		}
	}
}
