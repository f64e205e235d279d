package linear_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/linear"
	"github.com/dpbandit/dpbandit/privacy"
)

// adaOpts are the paper's defaults at dimension d with noise σ.
func adaOpts(d int, sigma float64) linear.AdaPrivateOptions {
	return linear.AdaPrivateOptions{Dim: d, Lambda: 1, V: 1, Alpha: 1, GammaV: 1, BatchSize: 300, Sigma: sigma}
}

func mustAda(t *testing.T, o linear.AdaPrivateOptions, seed uint64) *linear.AdaPrivate {
	t.Helper()
	p, err := linear.NewAdaPrivate(o, rand.New(rand.NewPCG(seed, 99)))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRhoSigmaTable reproduces docs/linear.md §1.11's ρ/σ table (δ = 1e-5) to the
// printed digits, through the accountant (privacy.ZCDPRhoBS) and through
// AdaPrivateSigma on the paper basis and the descriptor's default sigma
// derivation; the paper value in the report is that ρ.
func TestRhoSigmaTable(t *testing.T) {
	rows := []struct {
		eps, rho, sigma float64
		rhoDigits       float64 // half a unit of the last printed digit
		sigmaDigits     float64
	}{
		{0.5, 0.005314, 9.700, 5e-7, 5e-4},
		{1, 0.020820, 4.901, 5e-7, 5e-4},
		{2, 0.080045, 2.499, 5e-7, 5e-4},
		{5, 0.449623, 1.0545, 5e-7, 5e-5},
		{10, 1.550355, 0.5679, 5e-7, 5e-5},
	}
	d, _ := linear.Lookup("adaprivate-ts")
	for _, r := range rows {
		rho, err := privacy.ZCDPRhoBS(r.eps, 1e-5)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(rho-r.rho) > r.rhoDigits {
			t.Errorf("ε=%v: ρ = %.7f, SPEC prints %v", r.eps, rho, r.rho)
		}
		sig, err := linear.AdaPrivateSigma(adaOpts(20, 1), bandit.Target{Epsilon: r.eps, Delta: 1e-5, Basis: bandit.BasisPaper})
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(sig-r.sigma) > r.sigmaDigits {
			t.Errorf("ε=%v: σ = %.6f, SPEC prints %v", r.eps, sig, r.sigma)
		}
		if want := 1 / math.Sqrt(2*rho); math.Abs(sig-want) > 1e-12*want || sig < want {
			t.Errorf("ε=%v: σ = %v, want 1/sqrt(2ρ) = %v rounded up", r.eps, sig, want)
		}
		p, err := d.Complete(bandit.Params{"epsilon": r.eps})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := d.Report(bandit.Setting{Dim: 20, K: 5}, p)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Paper == nil || rep.Paper.Notion != privacy.NotionZCDP || math.Abs(rep.Paper.Value-rho) > 1e-12*rho {
			t.Errorf("ε=%v: paper value %+v, want ρ = %v", r.eps, rep.Paper, rho)
		}
		// The paper's calibration converts back to exactly ε with BS16.
		if e, _ := privacy.ZCDPEpsilonBS(rep.Paper.Value, 1e-5); math.Abs(e-r.eps) > 1e-9*r.eps {
			t.Errorf("ε=%v: BS16 ε of the paper value = %v", r.eps, e)
		}
	}
}

// TestSigmaAmpTable reproduces docs/linear.md §1.11's σ_amp table (δ = 1e-5) to
// the three printed decimals with AdaPrivateSigma on the paper basis (the
// exact subsampled-Gaussian RDP, orders {2..6, 8, 16, 32, 64}, classic
// conversion), and checks that the certified report at that σ meets ε.
func TestSigmaAmpTable(t *testing.T) {
	table := map[float64][4]float64{
		0.5: {2.594, 4.298, 6.233, 7.808},
		1:   {1.759, 2.593, 3.506, 4.170},
		5:   {0.690, 0.831, 0.916, 0.980},
	}
	qs := [4]float64{0.1, 0.3, 0.5, 0.7}
	for eps, row := range table {
		for i, q := range qs {
			o := adaOpts(20, 1)
			o.Amp = q
			sig, err := linear.AdaPrivateSigma(o, bandit.Target{Epsilon: eps, Delta: 1e-5})
			if err != nil {
				t.Fatal(err)
			}
			if got := math.Round(sig*1000) / 1000; got != row[i] {
				t.Errorf("σ_amp(ε=%v, q=%v) = %.5f, SPEC prints %v", eps, q, sig, row[i])
			}
			o.Sigma = sig
			p := mustAda(t, o, 1)
			rep := p.Privacy()
			if rep.Certified.Notion != privacy.NotionRDP || rep.PaperValid || rep.Paper == nil {
				t.Fatalf("amp report: %+v", rep)
			}
			e, _, err := rep.Certified.Epsilon(1e-5)
			if err != nil || e > eps {
				t.Errorf("σ_amp(ε=%v, q=%v): certified ε = %v (%v), want ≤ %v", eps, q, e, err, eps)
			}
			// Certified basis: the certified ε meets the target within 1e-6 and never exceeds it.
			cs, err := linear.AdaPrivateSigma(o, bandit.Target{Epsilon: eps, Delta: 1e-5, Basis: bandit.BasisCertified})
			if err != nil {
				t.Fatal(err)
			}
			if cs > sig {
				t.Errorf("certified σ_amp %v above the paper-basis %v", cs, sig)
			}
			o.Sigma = cs
			ce, _, _ := mustAda(t, o, 1).Privacy().Certified.Epsilon(1e-5)
			if ce > eps || ce < eps*(1-1e-6) {
				t.Errorf("certified-basis σ_amp(ε=%v, q=%v) = %v gives ε = %v", eps, q, cs, ce)
			}
		}
	}
}

// TestEq36IsInvalid checks the docs/reproduction-decisions.md A12 numbers: Eq. 3.6 against the
// exact subsampled-Gaussian RDP, and what calibrating with Eq. 3.6 would do.
func TestEq36IsInvalid(t *testing.T) {
	cases := []struct {
		q, sigma     float64
		alpha        int
		eq36, exact  float64
		tolEq, tolEx float64
	}{
		{0.3, 1, 8, 0.372, 2.63, 5e-4, 5e-3},
		{0.1, 0.7, 64, 0.187, 63, 5e-4, 0.5},
	}
	for _, c := range cases {
		got := linear.Eq36RDP(c.q, c.sigma, c.alpha)
		ex, err := privacy.SubsampledGaussianRDP(c.q, c.sigma, float64(c.alpha))
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-c.eq36) > c.tolEq || math.Abs(ex-c.exact) > c.tolEx {
			t.Errorf("q=%v σ=%v α=%d: Eq. 3.6 = %.4f (SPEC %v), exact = %.4f (SPEC %v)", c.q, c.sigma, c.alpha, got, c.eq36, ex, c.exact)
		}
	}
	// Calibrating with Eq. 3.6 at ε = 1, q = 0.3 (orders {2..6,8,16,32,64},
	// classic conversion) gives σ ≈ 0.343, whose true ε is ≈ 16.7.
	epsOf := func(f func(a int) float64) float64 {
		best := math.Inf(1)
		for _, a := range linear.AmpOrders() {
			best = min(best, f(int(a))+math.Log(1e5)/(a-1))
		}
		return best
	}
	lo, hi := 0.01, 5.0
	for range 100 {
		mid := (lo + hi) / 2
		if epsOf(func(a int) float64 { return linear.Eq36RDP(0.3, mid, a) }) <= 1 {
			hi = mid
		} else {
			lo = mid
		}
	}
	if math.Abs(hi-0.343) > 5e-4 {
		t.Errorf("Eq. 3.6 calibration at ε=1, q=0.3: σ = %.4f, SPEC says 0.343", hi)
	}
	trueEps := epsOf(func(a int) float64 { v, _ := privacy.SubsampledGaussianRDP(0.3, hi, float64(a)); return v })
	if math.Abs(trueEps-16.7) > 0.05 {
		t.Errorf("true ε at σ = %.4f is %.3f, SPEC says 16.7", hi, trueEps)
	}
	// Exactly q = 1 the formula keeps only the Gaussian-free expansion; q = 0 gives 0.
	if linear.Eq36RDP(0, 1, 4) != 0 {
		t.Errorf("Eq36RDP(q=0) ≠ 0")
	}
}

// TestReportsMeetTargets: for every mechanism and both bases, the policy
// calibrated to (ε, δ = 1e-5) certifies ε ≤ target; on the certified basis
// it is within 1e-6 of the target; the event-level certified value is
// exactly 1/σ-GDP and the paper's value is valid there.
func TestReportsMeetTargets(t *testing.T) {
	type mode struct {
		name   string
		set    func(*linear.AdaPrivateOptions)
		notion privacy.Notion
		paper  bool // paper value shown and valid
	}
	modes := []mode{
		{"event", func(*linear.AdaPrivateOptions) {}, privacy.NotionGDP, true},
		{"amp", func(o *linear.AdaPrivateOptions) { o.Amp = 0.3 }, privacy.NotionRDP, false},
		{"grid", func(o *linear.AdaPrivateOptions) { o.Grid = true }, privacy.NotionZCDP, false},
		{"user", func(o *linear.AdaPrivateOptions) { o.UserClip, o.UserRounds = math.Sqrt(5), 5 }, privacy.NotionZCDP, false},
		{"user-centre", func(o *linear.AdaPrivateOptions) { o.UserClip, o.UserRounds, o.ClipCentre = math.Sqrt(5), 5, true }, privacy.NotionZCDP, false},
		{"user-grid", func(o *linear.AdaPrivateOptions) { o.UserClip, o.UserRounds, o.Grid = 2, 5, true }, privacy.NotionZCDP, false},
	}
	for _, m := range modes {
		for _, eps := range []float64{0.5, 1, 2, 5, 10} {
			for _, basis := range []string{bandit.BasisPaper, bandit.BasisCertified} {
				o := adaOpts(20, 1)
				m.set(&o)
				sig, err := linear.AdaPrivateSigma(o, bandit.Target{Epsilon: eps, Delta: 1e-5, Basis: basis})
				if err != nil {
					t.Fatalf("%s ε=%v %s: %v", m.name, eps, basis, err)
				}
				o.Sigma = sig
				rep := mustAda(t, o, 1).Privacy()
				if rep.Certified.Notion != m.notion {
					t.Fatalf("%s: certified notion %q, want %q", m.name, rep.Certified.Notion, m.notion)
				}
				ce, _, err := rep.Certified.Epsilon(1e-5)
				if err != nil {
					t.Fatal(err)
				}
				if ce > eps {
					t.Errorf("%s ε=%v %s: σ = %v certifies ε = %v > target", m.name, eps, basis, sig, ce)
				}
				if basis == bandit.BasisCertified && ce < eps*(1-1e-6) {
					t.Errorf("%s ε=%v certified basis: ε = %v, want the target", m.name, eps, ce)
				}
				if (rep.Paper != nil && rep.PaperValid) != m.paper {
					t.Errorf("%s: paper %+v valid %v", m.name, rep.Paper, rep.PaperValid)
				}
				if m.paper {
					pe, _, _ := rep.Paper.Epsilon(1e-5)
					if ce > pe {
						t.Errorf("%s: certified ε %v > valid paper ε %v", m.name, ce, pe)
					}
				}
				if !strings.Contains(rep.Mechanism, "σ = ") || rep.Derivation == "" {
					t.Errorf("%s: mechanism %q lacks σ or derivation is empty", m.name, rep.Mechanism)
				}
			}
		}
	}
	// Event level: μ = 1/σ exactly (up to the upward rounding), and
	// certified-basis σ at ε = 1 is the analytic-Gaussian 3.7306 (docs/accountant.md T3).
	o := adaOpts(20, 4.901)
	rep := mustAda(t, o, 1).Privacy()
	if mu := rep.Certified.Value; mu < 1/4.901 || mu > (1/4.901)*(1+1e-14) {
		t.Errorf("μ = %v, want 1/σ = %v", mu, 1/4.901)
	}
	cs, _ := linear.AdaPrivateSigma(o, bandit.Target{Epsilon: 1, Delta: 1e-5, Basis: bandit.BasisCertified})
	if math.Abs(cs-3.73063163481594) > 1e-9 {
		t.Errorf("certified σ at ε=1 = %v, want 3.73063163481594", cs)
	}
	// A μ-GDP target.
	ms, _ := linear.AdaPrivateSigma(o, bandit.Target{Mu: 0.5, Basis: bandit.BasisCertified})
	if math.Abs(ms-2) > 1e-12 {
		t.Errorf("σ for 0.5-GDP = %v, want 2", ms)
	}
	if _, err := linear.AdaPrivateSigma(o, bandit.Target{Mu: 0.5, Basis: bandit.BasisPaper}); err == nil {
		t.Errorf("paper basis with a μ target and no δ was accepted")
	}
	ps, err := linear.AdaPrivateSigma(o, bandit.Target{Mu: 0.5, Delta: 1e-5, Basis: bandit.BasisPaper})
	if err != nil || ps <= 2 {
		t.Errorf("paper-basis σ for 0.5-GDP = %v (%v), want > 2 (BS16 is looser)", ps, err)
	}
}

// TestGridReport checks the discrete-noise report ρ = (Δ + √d·g)²/(2σ²)
// and that the released increments lie on the grid.
func TestGridReport(t *testing.T) {
	o := adaOpts(4, 3)
	o.Grid, o.BatchSize = true, 10
	o.GridSource = rand.NewPCG(5, 6)
	p := mustAda(t, o, 1)
	rep := p.Privacy()
	g := math.Ldexp(1, int(math.Ceil(math.Log2(3/math.Ldexp(1, 40)))))
	want := (1 + 2*g) * (1 + 2*g) / 18
	if rep.Certified.Notion != privacy.NotionZCDP || rep.Certified.Value < want || rep.Certified.Value > want*(1+1e-14) || rep.Paper != nil {
		t.Errorf("grid report %+v, want ρ = %v", rep.Certified, want)
	}
	if p.SecureNoise() {
		t.Errorf("a seeded grid source reports SecureNoise")
	}
	o.GridSource = nil
	if !mustAda(t, o, 1).SecureNoise() {
		t.Errorf("grid with a nil source is not SecureNoise")
	}
	x := []float64{0.5, 0.5, 0, 0}
	for range 10 {
		p.Select([][]float64{x})
		p.Update(x, 1)
	}
	for i, b := range p.Released() {
		if k := b / g; k != math.Trunc(k) {
			t.Errorf("b[%d] = %v is not a multiple of g = %v", i, b, g)
		}
	}
}

// play runs an AdaPrivate policy on a fixed stream and returns b after
// every round.
func playStream(p *linear.AdaPrivate, T int, seed uint64) [][]float64 {
	r := rand.New(rand.NewPCG(seed, 7))
	d := len(p.Released())
	cands := make([][]float64, 3)
	for i := range cands {
		cands[i] = make([]float64, d)
	}
	var bs [][]float64
	for range T {
		for _, c := range cands {
			for j := range c {
				c[j] = r.NormFloat64() * 0.5 // some norms above 1: clipping is exercised
			}
		}
		a := p.Select(cands)
		p.Update(cands[a], float64(r.IntN(2)))
		bs = append(bs, p.Released())
	}
	return bs
}

// TestBatchBoundaries: the noise enters b only at batch boundaries, exactly
// ⌊T/B⌋ releases happen, and a trailing partial batch is never released.
func TestBatchBoundaries(t *testing.T) {
	for _, amp := range []float64{0, 0.5} {
		o := adaOpts(5, 2)
		o.BatchSize, o.Amp = 40, amp
		p := mustAda(t, o, 3)
		T := 3*40 + 17
		bs := playStream(p, T, 1)
		if p.Releases() != 3 {
			t.Errorf("amp=%v: %d releases after %d rounds with B = 40, want 3", amp, p.Releases(), T)
		}
		for t1 := 1; t1 < T; t1++ {
			changed := false
			for i := range bs[t1] {
				changed = changed || bs[t1][i] != bs[t1-1][i]
			}
			boundary := (t1+1)%40 == 0
			if changed != boundary {
				t.Errorf("amp=%v: round %d: b changed = %v, batch boundary = %v", amp, t1+1, changed, boundary)
			}
		}
		// The last 17 rounds (a partial batch) leave b as it was after round 120.
		for i, v := range bs[T-1] {
			if v != bs[119][i] {
				t.Errorf("amp=%v: the trailing partial batch changed b[%d]", amp, i)
			}
		}
		if st := p.State(); st.Count != 17 || st.Updates != T {
			t.Errorf("amp=%v: count %d, updates %d", amp, st.Count, st.Updates)
		}
	}
}

// TestNoiseScale: with zero rewards the released increments are pure noise,
// N(0, σ²) per coordinate (N(0, σ²/q²) with Amp); with reward 1 on a fixed
// unit vector, Amp's increment is unbiased: mean B, variance
// B(1−q)/q + σ²/q² on that coordinate. Tolerances: 5 standard errors.
func TestNoiseScale(t *testing.T) {
	const d, B, batches = 4, 50, 3000
	x := []float64{1, 0, 0, 0}
	cands := [][]float64{x}
	for _, c := range []struct{ q, sigma, r float64 }{{0, 2, 0}, {0.3, 2.593, 0}, {0.3, 2.593, 1}, {0.7, 1, 1}} {
		o := adaOpts(d, c.sigma)
		o.BatchSize, o.Amp = B, c.q
		p := mustAda(t, o, 11)
		prev := p.Released()
		var inc [d][]float64
		for range batches {
			for range B {
				p.Select(cands)
				p.Update(x, c.r)
			}
			b := p.Released()
			for i := range d {
				inc[i] = append(inc[i], b[i]-prev[i])
			}
			prev = b
		}
		q := c.q
		if q == 0 {
			q = 1
		}
		for i := range d {
			wantMean, wantVar := 0.0, c.sigma*c.sigma/(q*q)
			if i == 0 && c.r == 1 {
				wantMean = B
				wantVar += B * (1 - q) / q
			}
			var m, v float64
			for _, z := range inc[i] {
				m += z
			}
			m /= batches
			for _, z := range inc[i] {
				v += (z - m) * (z - m)
			}
			v /= batches - 1
			if se := math.Sqrt(wantVar / batches); math.Abs(m-wantMean) > 5*se {
				t.Errorf("q=%v σ=%v r=%v coord %d: mean increment %v, want %v ± %v", c.q, c.sigma, c.r, i, m, wantMean, 5*se)
			}
			// Var of the sample variance ≈ 2σ⁴/n for Gaussian noise, larger with the binomial part.
			if se := wantVar * math.Sqrt(2.0/batches) * 1.2; math.Abs(v-wantVar) > 5*se {
				t.Errorf("q=%v σ=%v r=%v coord %d: variance %v, want %v ± %v", c.q, c.sigma, c.r, i, v, wantVar, 5*se)
			}
		}
	}
}

// TestMeteredAda: NextCost is nonzero exactly once, before the round that
// completes the first batch, and equals the certified guarantee; it composes
// to the certified value.
func TestMeteredAda(t *testing.T) {
	o := adaOpts(3, 2)
	o.BatchSize = 10
	p := mustAda(t, o, 1)
	x := []float64{1, 0, 0}
	var nonzero []int
	for round := range 55 {
		c := p.NextCost()
		if c.Value != 0 {
			nonzero = append(nonzero, round)
			if c.Notion != privacy.NotionGDP || c.Value != p.Privacy().Certified.Value {
				t.Errorf("NextCost %+v, want the certified guarantee", c)
			}
		}
		p.Select([][]float64{x})
		p.Update(x, 1)
	}
	if len(nonzero) != 1 || nonzero[0] != 9 {
		t.Errorf("NextCost nonzero at rounds %v, want [9]", nonzero)
	}
	if rc := p.ReleaseCost(); rc != p.Privacy().Certified {
		t.Errorf("ReleaseCost %+v", rc)
	}
}

// TestAdaptiveDecay: v_k = v0·γ^k after k releases, and the tuned adaptive
// v0 of the descriptor is 1 + σ/(d·sqrt(λ0)).
func TestAdaptiveDecay(t *testing.T) {
	o := adaOpts(3, 2)
	o.V, o.GammaV, o.BatchSize = 1.5, 0.95, 10
	p := mustAda(t, o, 1)
	x := []float64{0, 1, 0}
	for range 35 {
		p.Select([][]float64{x})
		p.Update(x, 0.5)
	}
	if got, want := p.State().Scale, 1.5*0.95*0.95*0.95; math.Abs(got-want) > 1e-15 {
		t.Errorf("v after 3 releases = %v, want %v", got, want)
	}
	o = adaOpts(20, 4)
	if got := linear.TunedV0(o, 0.04); math.Abs(got-(1+4/(20*0.2))) > 1e-15 {
		t.Errorf("TunedV0 = %v", got)
	}
	o.Amp = 0.5
	if got := linear.TunedV0(o, 0.04); math.Abs(got-(1+8/(20*0.2))) > 1e-15 {
		t.Errorf("TunedV0 with amp = %v", got)
	}
}

// TestForcedExploration: the number of forced rounds matches the schedule
// Σ_t min(1, d ln t/(t γ_f)) within 5 standard deviations, and is below 1%
// of T at γ_f = d (docs/linear.md §1.11, [ADA] §6.2).
func TestForcedExploration(t *testing.T) {
	const d, T = 20, 10000
	for _, gf := range []float64{20, 2} {
		o := adaOpts(d, 1)
		o.Forced = gf
		p := mustAda(t, o, 5)
		x := make([]float64, d)
		x[0] = 1
		cands := [][]float64{x, x, x}
		var mean, vr float64
		for tt := 1; tt <= T; tt++ {
			pt := min(1, d*math.Log(float64(tt))/(float64(tt)*gf))
			mean += pt
			vr += pt * (1 - pt)
			p.Select(cands)
			p.Update(x, 1)
		}
		got := float64(p.ForcedRounds())
		if math.Abs(got-mean) > 5*math.Sqrt(vr)+1 {
			t.Errorf("γ_f = %v: %v forced rounds, schedule expects %.1f ± %.1f", gf, got, mean, 5*math.Sqrt(vr))
		}
		if gf == d && got > 0.01*T {
			t.Errorf("γ_f = d: %v forced rounds, more than 1%% of T", got)
		}
	}
}

// TestUserLevelAccounting: a user spanning batches is clipped across the
// stream: the squared norms of a user's clipped per-batch contributions sum
// to at most C² (around 0; (C/2)² around the centre), however the user's
// rounds fall across batch boundaries, so b (noise aside) equals the
// hand-computed sum of sequentially clipped pieces; the report is
// Δ_u²/(2σ²) with Δ_u = 2C (or C around the centre); and UpdateUser charges
// a returning user's earlier batches.
func TestUserLevelAccounting(t *testing.T) {
	const C, B, k, users = 1.5, 7, 10, 7
	x := []float64{1, 0}
	for _, centre := range []bool{false, true} {
		o := adaOpts(2, 1e-9) // negligible noise: b shows the clipped sums
		o.BatchSize, o.UserClip, o.UserRounds, o.ClipCentre = B, C, k, centre
		p := mustAda(t, o, 1)
		for range users * k { // 7 users of 10 rounds over 10 batches of 7: every user spans 2 or 3 batches
			p.Select([][]float64{x})
			p.Update(x, 1)
		}
		// By hand: user u's rounds [uk, (u+1)k) split at multiples of B into
		// pieces of n rounds; each piece's raw contribution along x is n
		// (around 0) or n − n/2 (around the centre n/2), clipped to the
		// user's remaining radius sqrt(R² − spent).
		R := C
		if centre {
			R = C / 2
		}
		want := 0.0
		for u := range users {
			spent := 0.0
			for start := u * k; start < (u+1)*k; {
				end := min((u+1)*k, (start/B+1)*B)
				n := float64(end - start)
				v := n
				if centre {
					v = n / 2
					want += n / 2
				}
				c := min(v, math.Sqrt(max(0, R*R-spent)))
				spent += c * c
				want += c
				start = end
			}
			if spent > R*R*(1+1e-12) {
				t.Fatalf("hand computation exceeds the budget")
			}
		}
		if got := p.Released()[0]; math.Abs(got-want) > 1e-6 {
			t.Errorf("centre=%v: b[0] = %v, want %v", centre, got, want)
		}
		rep := p.Privacy()
		du := 2 * C
		if centre {
			du = C
		}
		wantRho := du * du / (2 * 1e-18)
		if rep.Certified.Value < wantRho || rep.Certified.Value > wantRho*(1+1e-14) || rep.PaperValid ||
			!strings.HasPrefix(rep.Neighbouring, "user-level") {
			t.Errorf("centre=%v: report %+v, want ρ = %v at the user level", centre, rep.Certified, wantRho)
		}
	}
	// Explicit ids: user 7 appears in batches 1 and 3; the second
	// appearance only gets the remaining budget.
	o := adaOpts(2, 1e-9)
	o.BatchSize, o.UserClip = 4, 1
	p := mustAda(t, o, 1)
	ids := []uint64{7, 1, 2, 3, 4, 5, 6, 8, 7, 7, 9, 10}
	for _, id := range ids {
		p.Select([][]float64{x})
		p.UpdateUser(id, x, 1)
	}
	// Users other than 7 contribute 1 each (9 of them); user 7 contributes
	// 1 in batch 1 (clipped) and 0 afterwards (budget exhausted).
	if got := p.Released()[0]; math.Abs(got-10) > 1e-6 {
		t.Errorf("explicit users: b[0] = %v, want 10", got)
	}
	defer func() {
		if recover() == nil {
			t.Errorf("Update on a user-level policy without userrounds did not panic")
		}
	}()
	p.Update(x, 1)
}

// TestUserLevelRestoreKeepsSpent: a restored explicit-id (userrounds = 0)
// policy still remembers every user's spent norm. User 7 exhausts its
// budget in batch 1, the policy is saved and restored, user 7 returns in
// batch 3 after other users: it adds nothing, as without the restore
// (b[0] = 10). A restore that forgot users (treating ids as the ⌊t/k⌋
// blocks of userrounds > 0) would let user 7 contribute a second time,
// breaking the user-level sensitivity the report certifies.
func TestUserLevelRestoreKeepsSpent(t *testing.T) {
	x := []float64{1, 0}
	o := adaOpts(2, 1e-9)
	o.BatchSize, o.UserClip = 4, 1
	p := mustAda(t, o, 1)
	ids := []uint64{7, 1, 2, 3, 4, 5, 6, 8, 7, 7, 9, 10}
	for k, id := range ids {
		if k == 4 {
			data, err := p.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			p = mustAda(t, o, 2)
			if err := p.UnmarshalJSON(data); err != nil {
				t.Fatal(err)
			}
		}
		p.Select([][]float64{x})
		p.UpdateUser(id, x, 1)
	}
	if got := p.Released()[0]; math.Abs(got-10) > 1e-6 {
		t.Errorf("after a restore: b[0] = %v, want 10 (user 7 has no budget left)", got)
	}
}

// TestUserLevelGroupPrivacy: docs/reproduction-decisions.md A15's group-privacy values: ε_user = 5
// gives ρ = 0.4496, 0.01798, 0.004496 for k = 1, 5, 10.
func TestUserLevelGroupPrivacy(t *testing.T) {
	rho, _ := privacy.ZCDPRhoBS(5, 1e-5)
	for k, want := range map[int]float64{1: 0.4496, 5: 0.01798, 10: 0.004496} {
		got := rho / float64(k*k)
		if math.Abs(got-want) > 0.5*math.Pow(10, math.Floor(math.Log10(want))-3) {
			t.Errorf("k=%d: ρ/k² = %v, SPEC prints %v", k, got, want)
		}
	}
}

// TestCalibrateDescriptor: the descriptors' Calibrate returns `sigma`, on
// both bases, refuses when sigma is given, and the calibrated report meets
// the target.
func TestCalibrateDescriptor(t *testing.T) {
	s := bandit.Setting{Dim: 20, K: 5, Horizon: 10000}
	for _, name := range []string{"adaprivate-ts", "adaprivate-ucb"} {
		d, _ := linear.Lookup(name)
		// The reported epsilon/delta are the target's, not the defaults.
		if cp, err := d.Calibrate(s, bandit.Target{Epsilon: 2, Delta: 1e-7, Basis: bandit.BasisCertified}, nil); err != nil || cp["epsilon"] != 2 || cp["delta"] != 1e-7 {
			t.Errorf("%s at (2, 1e-7): calibrated %v, %v", name, cp, err)
		}
		for _, c := range []struct {
			p     bandit.Params
			basis string
			want  float64
		}{
			{nil, bandit.BasisPaper, 4.9006},
			{nil, bandit.BasisCertified, 3.7306},
			{bandit.Params{"amp": 0.3}, bandit.BasisPaper, 2.593},
		} {
			cp, err := d.Calibrate(s, bandit.Target{Epsilon: 1, Delta: 1e-5, Basis: c.basis}, c.p)
			if err != nil {
				t.Fatal(err)
			}
			// sigma, and the (ε, δ) it was calibrated to in place of the
			// epsilon/delta defaults.
			if len(cp) != 3 || math.Abs(cp["sigma"]-c.want) > 5e-4 || cp["epsilon"] != 1 || cp["delta"] != 1e-5 {
				t.Errorf("%s %v %s: calibrated %v, want sigma ≈ %v", name, c.p, c.basis, cp, c.want)
			}
			full := bandit.Params{"sigma": cp["sigma"]}
			for k, v := range c.p {
				full[k] = v
			}
			pp, err := d.Complete(full)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := d.Report(s, pp)
			if err != nil {
				t.Fatal(err)
			}
			if e, _, _ := rep.Certified.Epsilon(1e-5); e > 1 {
				t.Errorf("%s: calibrated ε = %v", name, e)
			}
		}
		if _, err := d.Calibrate(s, bandit.Target{Epsilon: 1, Delta: 1e-5}, bandit.Params{"sigma": 3}); err == nil ||
			!strings.Contains(err.Error(), "sigma") {
			t.Errorf("%s: Calibrate with sigma given: %v", name, err)
		}
	}
}

// TestAdaValidation: bad options are refused with an error naming them.
func TestAdaValidation(t *testing.T) {
	bad := []struct {
		set  func(*linear.AdaPrivateOptions)
		want string
	}{
		{func(o *linear.AdaPrivateOptions) { o.Dim = 0 }, "dimension"},
		{func(o *linear.AdaPrivateOptions) { o.Lambda = 0 }, "lambda"},
		{func(o *linear.AdaPrivateOptions) { o.V = -1 }, "v"},
		{func(o *linear.AdaPrivateOptions) { o.GammaV = 1.5 }, "gammav"},
		{func(o *linear.AdaPrivateOptions) { o.BatchSize = 0 }, "batch size"},
		{func(o *linear.AdaPrivateOptions) { o.Sigma = 0 }, "sigma"},
		{func(o *linear.AdaPrivateOptions) { o.Sigma = math.Inf(1) }, "sigma"},
		{func(o *linear.AdaPrivateOptions) { o.Amp = 1.2 }, "amp"},
		{func(o *linear.AdaPrivateOptions) { o.Amp, o.Grid = 0.3, true }, "amp and grid"},
		{func(o *linear.AdaPrivateOptions) { o.Amp, o.UserClip = 0.3, 1 }, "amp and userclip"},
		{func(o *linear.AdaPrivateOptions) { o.ClipCentre = true }, "userclip"},
		{func(o *linear.AdaPrivateOptions) { o.Forced = -1 }, "forced"},
		{func(o *linear.AdaPrivateOptions) { o.Theta0 = []float64{1} }, "theta0"},
	}
	for _, b := range bad {
		o := adaOpts(3, 1)
		b.set(&o)
		_, err := linear.NewAdaPrivate(o, rand.New(rand.NewPCG(1, 1)))
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("options %+v: error %v, want one naming %q", o, err, b.want)
		}
	}
	if _, err := linear.NewAdaPrivate(adaOpts(3, 1), nil); err == nil {
		t.Errorf("nil generator accepted")
	}
	d, _ := linear.Lookup("adaprivate-ts")
	p, _ := d.Complete(bandit.Params{"userclip": 1})
	if _, err := d.NewContextual(bandit.Setting{Dim: 3, K: 2}, p, bandit.NewRand(1, 1)); err == nil || !strings.Contains(err.Error(), "userrounds") {
		t.Errorf("userclip without userrounds: %v", err)
	}
}

// TestAdaStateRejects: UnmarshalJSON refuses states that do not fit.
func TestAdaStateRejects(t *testing.T) {
	o := adaOpts(3, 1)
	o.BatchSize = 5
	p := mustAda(t, o, 1)
	x := []float64{1, 0, 0}
	for range 7 {
		p.Select([][]float64{x})
		p.Update(x, 1)
	}
	good, _ := p.MarshalJSON()
	var m map[string]any
	_ = json.Unmarshal(good, &m)
	st := m["state"].(map[string]any)
	st["count"] = 5.0
	bad, _ := json.Marshal(m)
	q := mustAda(t, o, 1)
	if err := q.UnmarshalJSON(bad); err == nil {
		t.Errorf("count = B accepted")
	}
	o2 := o
	o2.Sigma = 2
	if err := mustAda(t, o2, 1).UnmarshalJSON(good); err == nil {
		t.Errorf("state with other options accepted")
	}
	if err := q.UnmarshalJSON(good); err != nil {
		t.Errorf("own state refused: %v", err)
	}
	if st := q.State(); st.Releases != 1 || st.Count != 2 || st.Updates != 7 {
		t.Errorf("restored %+v", st)
	}
}

// TestAmpSubstitution supports the Amp report's use of the add/remove
// formula for the substitution of one round (docs/reproduction-decisions.md A12): along the shared
// feature direction, a batch release is the 1-D mixture
// (1−q)N(0, σ²) + qN(r, σ²) (other records' coins are common to both worlds
// and handled by joint quasi-convexity), and for every pair of rewards
// (r, r′) ∈ {0, ¼, ½, ¾, 1}², in both directions, its Rényi divergence
// computed by quadrature stays below the exact formula, which the pair
// (1, 0) attains. Quadrature: trapezoid on [−14σ, 1 + 14σ], 8001 points,
// relative tolerance 1e-6.
func TestAmpSubstitution(t *testing.T) {
	logMix := func(x, q, mu, sigma float64) float64 {
		a := math.Log1p(-q) - x*x/(2*sigma*sigma)
		b := math.Log(q) - (x-mu)*(x-mu)/(2*sigma*sigma)
		m := max(a, b)
		return m + math.Log(math.Exp(a-m)+math.Exp(b-m)) - math.Log(sigma*math.Sqrt(2*math.Pi))
	}
	renyi := func(alpha, q, sigma, r, r2 float64) float64 {
		lo, hi := -14*sigma, 1+14*sigma
		const n = 8001
		h := (hi - lo) / (n - 1)
		terms := make([]float64, n)
		m := math.Inf(-1)
		for i := range n {
			x := lo + float64(i)*h
			v := alpha*logMix(x, q, r, sigma) + (1-alpha)*logMix(x, q, r2, sigma)
			if i == 0 || i == n-1 {
				v += math.Log(0.5)
			}
			terms[i] = v
			m = max(m, v)
		}
		var s float64
		for _, v := range terms {
			s += math.Exp(v - m)
		}
		return (m + math.Log(s*h)) / (alpha - 1)
	}
	grid := []float64{0, 0.25, 0.5, 0.75, 1}
	for _, c := range []struct{ q, sigma float64 }{{0.3, 1}, {0.7, 2.6}, {0.1, 0.7}} {
		for _, alpha := range []float64{2, 4, 8} {
			exact, err := privacy.SubsampledGaussianRDP(c.q, c.sigma, alpha)
			if err != nil {
				t.Fatal(err)
			}
			worst := 0.0
			for _, r := range grid {
				for _, r2 := range grid {
					d := renyi(alpha, c.q, c.sigma, r, r2)
					if d > exact*(1+1e-6)+1e-12 {
						t.Errorf("q=%v σ=%v α=%v: D_α for (r, r′) = (%v, %v) is %v > exact %v", c.q, c.sigma, alpha, r, r2, d, exact)
					}
					worst = max(worst, d)
				}
			}
			if math.Abs(worst-exact) > 1e-6*exact {
				t.Errorf("q=%v σ=%v α=%v: worst pair gives %v, the formula %v (want equality at (1, 0))", c.q, c.sigma, alpha, worst, exact)
			}
		}
	}
}
