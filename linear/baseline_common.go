package linear

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/counting"
	"github.com/dpbandit/dpbandit/internal/chol"
	"github.com/dpbandit/dpbandit/noise"
	"github.com/dpbandit/dpbandit/privacy"
)

// Helpers shared by the private linear baselines (mtlin.go, jdplinucb.go,
// zcdpepisodic.go, adacoful.go, dgslinucb.go, coresetdp.go, batchedagg.go):
// the zCDP budget parameters and their calibration, reports, the UCB
// argmax over candidates, Gaussian vectors, a certified lower bound on
// λ_min(A), and the tree-counter helpers of the Mishra–Thakurta and
// Shariff–Sheffet policies. Every identifier starts with "bl" (or is a
// method of a bl type) so that it cannot collide with the rest of the
// package.
//
// Randomness: all noise here is drawn with the simulation samplers of
// package noise (and counting.SimNoise) on the policy's generator. The
// baselines are for simulation and comparison; the decision service must
// not serve them, since a released float is attackable (docs/privacy-model.md rule 4).

// Shared descriptor parameters of the zCDP baselines.
var (
	blParamEpsilon = bandit.Param{Name: "epsilon", Default: 1, Min: 1e-6, Max: math.Inf(1),
		Doc: "target ε; ρ = ρ_BS16(ε, δ) = (√(ε+ln(1/δ)) − √(ln(1/δ)))² ([ADA] Eq. 2.8) unless rho is set"}
	blParamDelta = bandit.Param{Name: "delta", Default: 1e-5, Min: 1e-300, Max: 0.5,
		Doc: "target δ of the (ε, δ) → ρ conversion"}
	blParamRho = bandit.Param{Name: "rho", Default: 0, Min: 0, Max: math.Inf(1),
		Doc: "total zCDP budget ρ (> 0 overrides epsilon/delta; 0: derived from them)"}
	blParamAlpha = bandit.Param{Name: "alpha", Default: 1, Min: 0, Max: math.Inf(1),
		Doc: "UCB width multiplier α ≥ 0 ([ADA] grid {0.1, 0.5, 1, 2})"}
	blParamLambda = bandit.Param{Name: "lambda", Default: 1, Min: math.SmallestNonzeroFloat64, Max: math.Inf(1),
		Doc: "regulariser λ > 0"}
)

// blParams returns the parameters of a zCDP baseline: epsilon, delta, rho,
// lambda and alpha, followed by extra.
func blParams(extra ...bandit.Param) []bandit.Param {
	return append([]bandit.Param{blParamEpsilon, blParamDelta, blParamRho, blParamLambda, blParamAlpha}, extra...)
}

// blCalibrate returns the Descriptor.Calibrate of a zCDP baseline that
// certifies exactly its budget ρ and whose paper value is valid
// (blCalibrateZCDP with certFactor 1).
func blCalibrate(name string) func(bandit.Setting, bandit.Target, bandit.Params) (bandit.Params, error) {
	return func(_ bandit.Setting, t bandit.Target, _ bandit.Params) (bandit.Params, error) {
		return blCalibrateZCDP(name, t, 1, true)
	}
}

// blRho returns the total zCDP budget: rho when > 0, else the BS16
// conversion of (ε, δ) that [ADA] Eq. 2.8 (and docs/linear.md §1.11's table) uses.
// BS16 is a valid conversion (ρ-zCDP ⇒ (ρ + 2√(ρ ln(1/δ)), δ)-DP), so the
// policy then meets (ε, δ); the report's tighter CKS20 conversion gives a
// smaller ε.
func blRho(name string, eps, delta, rho float64) (float64, error) {
	if rho != 0 {
		if !(rho > 0) || math.IsInf(rho, 1) {
			return 0, fmt.Errorf("%s: parameter rho = %v must be finite and > 0 (or 0 to derive it from epsilon, delta)", name, rho)
		}
		return rho, nil
	}
	if !(eps >= 1e-6) || math.IsInf(eps, 1) {
		return 0, fmt.Errorf("%s: parameter epsilon = %v is outside its valid range [1e-06, ∞)", name, eps)
	}
	if !(delta > 0 && delta <= 0.5) {
		return 0, fmt.Errorf("%s: parameter delta = %v is outside its valid range (0, 0.5]", name, delta)
	}
	r, err := privacy.ZCDPRhoBS(eps, delta)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return r, nil
}

// blTargetEpsDelta returns the (ε, δ) of an equal-budget target; a μ-GDP
// target is converted to ε at its δ (as mab's pure policies do).
func blTargetEpsDelta(name string, t bandit.Target) (eps, delta float64, err error) {
	if !(t.Delta > 0 && t.Delta < 1) {
		return 0, 0, fmt.Errorf("%s: the budget needs δ in (0, 1) (got δ = %v)", name, t.Delta)
	}
	switch {
	case t.Mu > 0:
		e, err := privacy.GDPEpsilon(t.Mu, t.Delta)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: converting the GDP target to ε: %w", name, err)
		}
		return e, t.Delta, nil
	case t.Epsilon > 0 && !math.IsInf(t.Epsilon, 1):
		return t.Epsilon, t.Delta, nil
	}
	return 0, 0, fmt.Errorf("%s: the budget needs epsilon > 0 (finite) or gdp μ > 0", name)
}

// blCalibrateZCDP implements Descriptor.Calibrate for a zCDP baseline whose
// certified ρ is certFactor·rho and whose paper value is rho (paperValid
// false: the paper's value is not valid, so the certified value is always
// set to the target). Basis "paper": ρ = ρ_BS16(ε, δ), [ADA] Eq. 2.8, the
// conversion every [ADA] baseline used. Basis "certified": the certified
// ρ equals the largest ρ meeting (ε, δ) under the tighter CKS20 conversion
// (privacy.ZCDPRho).
func blCalibrateZCDP(name string, t bandit.Target, certFactor float64, paperValid bool) (bandit.Params, error) {
	eps, delta, err := blTargetEpsDelta(name, t)
	if err != nil {
		return nil, err
	}
	basis := t.Basis
	switch basis {
	case "", bandit.BasisPaper:
		basis = bandit.BasisPaper
	case bandit.BasisCertified:
	default:
		return nil, fmt.Errorf("%s: unknown calibration basis %q (want %q or %q)", name, t.Basis, bandit.BasisPaper, bandit.BasisCertified)
	}
	var rho float64
	if basis == bandit.BasisPaper && paperValid {
		rho, err = privacy.ZCDPRhoBS(eps, delta)
	} else {
		rho, _, err = privacy.ZCDPRho(eps, delta)
		rho /= certFactor
		rho -= rho * 0x1p-48 // the report rounds certFactor·ρ up
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if !(rho > 0) || math.IsInf(rho, 0) {
		// ρ/certFactor overflows (or underflows) at the ends of the float64
		// range: a target no noise scale can meet here.
		return nil, fmt.Errorf("%s: target (ε = %g, δ = %g) is out of reach: its ρ = %g is not a positive finite number (valid: ε up to about 1e300)", name, eps, delta, rho)
	}
	return bandit.Params{"epsilon": eps, "delta": delta, "rho": rho}, nil
}

// blZCDPReport builds a report certifying ρ-zCDP (rounded up), with the
// paper's value beside it (paper < 0: none stated).
func blZCDPReport(mechanism string, certified, paper float64, paperValid bool, derivation string) privacy.Report {
	r := privacy.Report{
		Mechanism:    mechanism,
		Neighbouring: publicFeatures,
		Certified:    privacy.Guarantee{Notion: privacy.NotionZCDP, Value: roundUpRel(certified)},
		PaperValid:   paperValid,
		Derivation:   derivation,
	}
	if paper >= 0 {
		r.Paper = &privacy.Guarantee{Notion: privacy.NotionZCDP, Value: paper}
	}
	return r
}

// blCheckHorizon returns an error unless T ≥ 1.
func blCheckHorizon(name string, T int) error {
	if T < 1 {
		return fmt.Errorf("%s: horizon T = %d must be ≥ 1 (the privacy accounting is sized for T)", name, T)
	}
	return nil
}

// blCheckDimHorizon returns an error unless d ≥ 1 and T ≥ 1 (checked in
// that order).
func blCheckDimHorizon(name string, d, T int) error {
	if err := checkDim(name, d); err != nil {
		return err
	}
	return blCheckHorizon(name, T)
}

// blCheckBatch returns an error unless 1 ≤ B ≤ T.
func blCheckBatch(name string, B, T int) error {
	if B < 1 || B > T {
		return fmt.Errorf("%s: parameter batch = %d is outside its valid range [1, T = %d]", name, B, T)
	}
	return nil
}

// blCheckBudget checks the budget parameters (blRho), then λ > 0 and α ≥ 0,
// in that order, and returns the zCDP budget ρ.
func blCheckBudget(name string, eps, delta, rho, lambda, alpha float64) (float64, error) {
	rho, err := blRho(name, eps, delta, rho)
	if err != nil {
		return 0, err
	}
	if err := checkPositive(name, "lambda", lambda); err != nil {
		return 0, err
	}
	if err := checkNonNegative(name, "alpha", alpha); err != nil {
		return 0, err
	}
	return rho, nil
}

// blRandSigma returns an error if r is nil, else the noise σ = 1/√(2ρ) of
// a Gaussian release of sensitivity 1 at ρ-zCDP.
func blRandSigma(name string, r *rand.Rand, rho float64) (float64, error) {
	if err := blCheckRand(name, r); err != nil {
		return 0, err
	}
	sigma, err := privacy.GaussianSigmaForRho(rho, 1)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	return sigma, nil
}

// blCheckRand returns an error if r is nil.
func blCheckRand(name string, r *rand.Rand) error {
	if r == nil {
		return fmt.Errorf("%s: needs a non-nil *rand.Rand", name)
	}
	return nil
}

// blClip writes x/max(1, ‖x‖) into dst (len(dst) == len(x)).
func blClip(dst, x []float64) {
	c := clipFactor(x)
	for i, v := range x {
		dst[i] = c * v
	}
}

// blGaussVec adds N(0, σ²) draws to every entry of v.
func blGaussVec(r *rand.Rand, sigma float64, v []float64) {
	for i := range v {
		v[i] += noise.Gaussian(r, sigma)
	}
}

// blUCB returns argmax_i x_iᵀθ + α·sqrt(x_iᵀA⁻¹x_i) over the candidates,
// each clipped to the unit ball first (into buf), ties to the lowest index.
func blUCB(name string, cands [][]float64, d int, f *chol.Factor, theta []float64, alpha float64, buf []float64) int {
	mustCandidates(name, len(cands))
	best, bv := 0, math.Inf(-1)
	for i, x := range cands {
		mustDim(name, x, d)
		blClip(buf, x)
		v := dotVec(buf, theta)
		if alpha != 0 {
			v += alpha * math.Sqrt(max(f.QuadInv(buf), 0))
		}
		if v > bv {
			best, bv = i, v
		}
	}
	return best
}

// blArgmaxDot returns argmax_i x_iᵀθ over the clipped candidates.
func blArgmaxDot(name string, cands [][]float64, d int, theta []float64, buf []float64) int {
	mustCandidates(name, len(cands))
	best, bv := 0, math.Inf(-1)
	for i, x := range cands {
		mustDim(name, x, d)
		blClip(buf, x)
		if v := dotVec(buf, theta); v > bv {
			best, bv = i, v
		}
	}
	return best
}

// blCopyFactor sets dst's matrix to src's (dst.SetSym(src's A), d³/6,
// allocation-free with the scratch sym of length d²). It panics if the
// refactorisation fails, which cannot happen for a factor that is PD.
func blCopyFactor(dst, src *chol.Factor, sym []float64) {
	src.SymTo(sym)
	if !dst.SetSym(sym) {
		panic("linear: refactorising a positive definite matrix failed")
	}
}

// blFactorState encodes a factor (bit for bit) for JSON.
func blFactorState(f *chol.Factor) []byte {
	b, _ := f.MarshalBinary()
	return b
}

// blRestoreFactor decodes a factor of dimension d.
func blRestoreFactor(name string, d int, b []byte) (*chol.Factor, error) {
	var f chol.Factor
	if err := f.UnmarshalBinary(b); err != nil {
		return nil, fmt.Errorf("%s: %w: %w", name, errState, err)
	}
	if f.Dim() != d {
		return nil, fmt.Errorf("%s: %w: factor of dimension %d, want %d", name, errState, f.Dim(), d)
	}
	return &f, nil
}

// blCountAtPlaceholder is the first half of the Calibrate of a baseline
// whose certified ρ depends on a count its options determine (episodes
// N_max, phases K): it completes p, builds the options (opts) with a
// placeholder budget ρ = 1, and returns them with the count check derives.
func blCountAtPlaceholder[O any](d bandit.Descriptor, s bandit.Setting, p bandit.Params,
	opts func(bandit.Setting, bandit.Params) O, check func(O) (float64, int, error)) (O, int, error) {
	var o O
	full, err := d.Complete(p)
	if err != nil {
		return o, 0, err
	}
	full["rho"] = 1 // placeholder budget: only the count matters here
	o = opts(s, full)
	_, n, err := check(o)
	return o, n, err
}

// blDecode is the first half of a baseline's UnmarshalJSON: it decodes
// data as the state of policy name with options opts (unmarshalState) and
// builds a fresh policy from the same options and generator, into which the
// caller restores the state.
func blDecode[S, O, P any](data []byte, name string, opts O, r *rand.Rand, build func(O, *rand.Rand) (P, error)) (S, P, error) {
	var q P
	st, err := unmarshalState[S](data, name, opts)
	if err != nil {
		return st, q, err
	}
	q, err = build(opts, r)
	return st, q, err
}

// blRestorer restores the factors and vectors of a baseline's state in
// turn, keeping the first error (later calls then do nothing).
type blRestorer struct {
	name string
	d    int
	err  error
}

// factor decodes b into *dst (blRestoreFactor).
func (r *blRestorer) factor(dst **chol.Factor, b []byte) {
	if r.err == nil {
		*dst, r.err = blRestoreFactor(r.name, r.d, b)
	}
}

// vec checks src and copies it into dst (blVec).
func (r *blRestorer) vec(what string, dst, src []float64) {
	if r.err == nil {
		r.err = blVec(r.name, what, dst, src)
	}
}

// blVec checks a restored vector's length and finiteness and copies it
// into dst.
func blVec(name, what string, dst, src []float64) error {
	if len(src) != len(dst) || !allFinite(src) {
		return fmt.Errorf("%s: %w: %s has length %d or a non-finite entry (want %d finite values)", name, errState, what, len(src), len(dst))
	}
	copy(dst, src)
	return nil
}

// ---------------------------------------------------------------------------
// A certified lower bound on λ_min(A).

// blEig certifies lower bounds on the smallest eigenvalue of a positive
// definite matrix held in a chol.Factor. The sensitivity of θ̂ = A⁻¹b to one
// reward is ‖A⁻¹x(r−r′)‖ ≤ ‖A⁻¹‖₂ = 1/λ_min(A), so the θ̂-perturbation
// baselines (zcdp-episodic, dgs-linucb) calibrate their noise to a value
// that must never be below the true 1/λ_min: the bound returned here must
// never exceed the true λ_min.
//
// Method: inverse power iteration (SolveTo, d² per step) estimates λ_min
// from above (a Rayleigh quotient of A⁻¹ never exceeds its largest
// eigenvalue, so the estimate is ≥ λ_min); the candidate c is then
// certified by a Cholesky factorisation of A − cI: if it succeeds in
// floating point, the computed factor R satisfies RᵀR = A − cI + E with
// |E| ≤ γ_{d+1}|Rᵀ||R| (Higham, Accuracy and Stability, Thm 10.3), so
// λ_min(A − cI) ≥ −‖E‖₂ ≥ −(d+1)·d·u·max_i A_ii·(1+O(u)); we subtract
// margin = 4·d(d+1)·2⁻⁵³·max_i A_ii (twice that, plus the rounding of
// forming A − cI). On failure c shrinks (c ← c/2) down to the floor, a
// lower bound known a priori (λ for A = λI + Σxxᵀ), which is returned
// without a test. The bound is monotone in the matrix for the same inputs
// only through the caller: A only grows (A_{t+1} ⪰ A_t), so a bound
// certified at round s stays valid at every t ≥ s.
//
// Cost: 40 solves plus one to a few factorisations (≈ 50 d² + d³/6 ·
// tries); no allocation.
type blEig struct {
	d    int
	sym  []float64
	v, w []float64
	test *chol.Factor
}

func newBLEig(d int) *blEig {
	return &blEig{d: d, sym: make([]float64, d*d), v: make([]float64, d), w: make([]float64, d), test: chol.New(d, 1)}
}

// lowerBound returns a certified c ≤ λ_min(A) with c ≥ floor.
func (e *blEig) lowerBound(f *chol.Factor, floor float64) float64 {
	d := e.d
	v, w := e.v, e.w
	for i := range v {
		v[i] = 1 / math.Sqrt(float64(d)) * (1 + 0.1*float64(i%7)/7) // deterministic, generic start
	}
	normalise := func(x []float64) {
		n := math.Sqrt(dotVec(x, x))
		for i := range x {
			x[i] /= n
		}
	}
	normalise(v)
	mu := 0.0
	for range 40 {
		f.SolveTo(w, v)
		mu = dotVec(v, w) // Rayleigh quotient of A⁻¹ at v
		copy(v, w)
		normalise(v)
	}
	if !(mu > 0) {
		return floor
	}
	f.SymTo(e.sym)
	maxDiag := 0.0
	for i := range d {
		maxDiag = max(maxDiag, e.sym[i*d+i])
	}
	margin := 4 * float64(d*(d+1)) * 0x1p-53 * maxDiag
	c := 0.999 / mu // slightly below the estimate of λ_min
	for c > floor {
		for i := range d {
			e.sym[i*d+i] -= c
		}
		ok := e.test.SetSym(e.sym)
		for i := range d {
			e.sym[i*d+i] += c
		}
		if ok && c-margin > floor {
			return c - margin
		}
		c /= 2
	}
	return floor
}

// certifies reports whether c ≤ λ_min(A) can be certified by the test of
// lowerBound: a Cholesky factorisation of A − (c + margin)I succeeds. A
// restored state's bound is accepted only if this holds (or c is the a
// priori floor), so a saved state cannot smuggle in a bound A does not have.
func (e *blEig) certifies(f *chol.Factor, c float64) bool {
	d := e.d
	f.SymTo(e.sym)
	maxDiag := 0.0
	for i := range d {
		maxDiag = max(maxDiag, e.sym[i*d+i])
	}
	shift := c + 4*float64(d*(d+1))*0x1p-53*maxDiag
	for i := range d {
		e.sym[i*d+i] -= shift
	}
	ok := e.test.SetSym(e.sym)
	f.SymTo(e.sym)
	return ok
}

// ---------------------------------------------------------------------------
// Tree counters over the entries of a symmetric matrix (mtlin.go,
// jdplinucb.go).

// blTriIndex returns the index of entry (i, j), i ≤ j, of the upper
// triangle of an n×n matrix stored row by row.
func blTriIndex(n, i, j int) int { return i*n - i*(i-1)/2 + (j - i) }

// blAddLeaf adds a leaf to a counter, clamping it into the counter's
// declared interval [lo, lo+Δ] (a product of features of norm ≤ 1 can
// exceed 1 by an ulp after clipping; clamping is part of the leaf function,
// so the interval, hence the sensitivity, always holds). A full counter
// (beyond the horizon) does not read the leaf; it returns false then.
func blAddLeaf(c *counting.Counter, v, lo, hi float64) bool {
	if c.Count() >= c.Capacity() {
		return false
	}
	if err := c.Add(min(max(v, lo), hi)); err != nil {
		panic(fmt.Sprintf("linear: tree leaf %v rejected: %v", v, err))
	}
	return true
}

// blTreeStates returns every counter's state.
func blTreeStates(cs []*counting.Counter) []counting.State {
	out := make([]counting.State, len(cs))
	for i, c := range cs {
		out[i] = c.State()
	}
	return out
}

// blRestoreTrees replaces cs[i] by the counter restored from states[i],
// after checking that each state has exactly the options of the counter it
// replaces (a state cannot smuggle in a weaker tree), and that all counters
// hold the same number of leaves.
func blRestoreTrees(name string, cs []*counting.Counter, states []counting.State, r *rand.Rand) error {
	if len(states) != len(cs) {
		return fmt.Errorf("%s: %w: %d tree states, want %d", name, errState, len(states), len(cs))
	}
	count := -1
	for i, s := range states {
		want := cs[i].State()
		if !blSameTreeOptions(want, s) {
			return fmt.Errorf("%s: %w: tree %d does not match the options", name, errState, i)
		}
		c, err := counting.Restore(s, counting.SimNoise(r))
		if err != nil {
			return fmt.Errorf("%s: %w: tree %d: %w", name, errState, i, err)
		}
		if count >= 0 && c.Count() != count {
			return fmt.Errorf("%s: %w: trees hold different numbers of leaves", name, errState)
		}
		count = c.Count()
		cs[i] = c
	}
	return nil
}

func blSameTreeOptions(a, b counting.State) bool {
	switch {
	case a.Laplace != nil && b.Laplace != nil && a.Gaussian == nil && b.Gaussian == nil:
		return *a.Laplace == *b.Laplace
	case a.Gaussian != nil && b.Gaussian != nil && a.Laplace == nil && b.Laplace == nil:
		return *a.Gaussian == *b.Gaussian
	}
	return false
}

// publicFeatures is docs/privacy-model.md's event-level relation with the candidate
// features public, as A14 condition 5 requires of every linear policy that
// does not noise the Gram matrix.
const publicFeatures = privacy.EventLevel + "; features are public (docs/reproduction-decisions.md A14 condition 5)"
