package linear

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/internal/chol"
	"github.com/dpbandit/dpbandit/privacy"
)

// UCBABNoise is the baseline "UCB + A&b noise" of [ADA] (Riyazat & Ukwatta,
// AdaPrivate-TS) Table 4, the first row of the component ablation: LinUCB
// whose two statistics, the Gram matrix A and the reward-weighted sum b, are
// both released with Gaussian noise once per batch. The paper names the row
// and nothing else; [ADA]; docs/linear.md §1.11 fixes only "release (s, Σxxᵀ) in one
// Gaussian step with Δ₂ = √2 and symmetric noise on the matrix". The rest —
// the batching of AdaPrivate, the relation under which the matrix noise
// buys anything, the corrected sensitivity, the noise layout on the matrix
// and the positive-definite shift — is this file's design.
//
// # Algorithm
//
// Batched like AdaPrivate-UCB (batch size B, default 300). State: the
// released statistics Ĝ = Σ_k (G_k + W_k) and b̃ = Σ_k (s_k + n_k), the raw
// sums of the open batch s = Σ r·x and G = Σ xxᵀ, its count, and the
// release count k. Each round:
//
//  1. candidates are clipped to the unit ball, x ← x/max(1, ‖x‖);
//  2. play argmax_a x_aᵀθ̂ + α·sqrt(x_aᵀÃ⁻¹x_a), θ̂ = Ã⁻¹b̃, with
//     Ã = λI + Ĝ + c_k·I (ties to the lowest index);
//  3. Update: s += r·x, G += xxᵀ (x clipped), count += 1;
//  4. when count = B, release in one Gaussian step
//     b̃ += s + n, n ~ N(0, σ²I_d), and
//     Ĝ += G + W, W symmetric: W_ij = W_ji ~ N(0, σ²) for i < j and
//     W_ii ~ N(0, 2σ²) (the law of (Z + Zᵀ)/√2 for Z with i.i.d. N(0, σ²)
//     entries: the upper triangle is drawn, the diagonal with standard
//     deviation √2·σ, and mirrored); s and G are reset, k += 1, and Ã is
//     refactorised (internal/chol SetSym).
//
// Ã and b̃ change only at batch boundaries: no round reads a raw statistic,
// and a trailing partial batch is never released. Before the first release
// Ã = λI and b̃ = 0.
//
// # Positive-definite shift
//
// The accumulated matrix noise after k releases, Wₖ = Σ_{j≤k} W_j, has the
// law s·(Z + Zᵀ)/√2 with s = σ√k and Z a d×d matrix of i.i.d. N(0, 1). Its
// smallest eigenvalue satisfies E[−λ_min(Wₖ)] ≤ 2s√d (Sudakov–Fernique: the
// process u ↦ uᵀWₖu on the unit sphere has increments
// E(uᵀWu − vᵀWv)² = 2s²‖uuᵀ − vvᵀ‖²_F ≤ 4s²‖u − v‖², those of u ↦ 2s⟨g, u⟩,
// whose supremum has mean ≤ 2s√d), and λ_min is √2·s-Lipschitz in the d(d+1)/2
// independent standard normals that make up Wₖ, so Gaussian concentration
// gives P(λ_min(Wₖ) < −2s√d − t) ≤ exp(−t²/(4s²)). The shift is therefore
//
//	c_k = σ√k·(2√d + 2·sqrt(ln(1/γ))),  γ = parameter fail (default 0.01),
//
// and then Ã = λI + G_{1..k} + (Wₖ + c_k·I) ⪰ λI + Σ xxᵀ (over the released
// batches) with probability ≥ 1 − γ at each release. On the rare failure
// (Ĝ + c_k·I not numerically positive definite) the shift is doubled until
// it is (blPDShift, capped at the Gershgorin bound, then λ > 0 makes Ã
// positive definite). The shift is a function of the public (σ, d, k, γ)
// and of the released Ĝ only: post-processing, no privacy cost. Ã is always
// positive definite — it is only ever installed through a successful
// Cholesky factorisation.
//
// # Privacy
//
// Relation. docs/privacy-model.md's event-level relation keeps the features public; the
// Gram matrix then does not depend on the protected data (one round's
// reward), its release costs nothing and its noise is pure loss (there the
// mechanism is the b-release alone, with Δ₂ = 1). Table 4's baseline noises
// A as if contexts were private (docs/reproduction-decisions.md A14 condition 5's exception), so
// the certified relation here is the record-level one: one round τ's whole
// record — its candidate features, hence the played vector x_τ, and its
// reward r_τ — is replaced. What is protected is the sequence of batch
// releases (b̃-increments and Ĝ-increments) and therefore, by the billboard
// lemma (Hsu et al. 2014), the action of every round other than τ (joint
// DP, as in Shariff & Sheffet 2018): round t's action is a function of the
// releases before its batch and of round t's own candidates only. a_τ itself
// reads round τ's private candidates and is not protected under this
// relation. Under docs/privacy-model.md's relation the same certified μ covers the whole
// transcript (there x_τ is fixed and the joint sensitivity is 1 ≤ 2).
//
// Sensitivity. Write the release of batch k, after the invertible linear
// whitening that divides the diagonal of the matrix part by √2, as the
// vector (s_k, (G_k)_ii/√2, (G_k)_{i<j}) plus isotropic N(0, σ²) noise.
// Replacing (x, r) by (x′, r′), ‖x‖, ‖x′‖ ≤ 1, r, r′ ∈ [0, 1], changes it by
// v = r·x − r′·x′ and D = xxᵀ − x′x′ᵀ, with squared whitened norm
//
//	‖v‖² + Σ_i D_ii²/2 + Σ_{i<j} D_ij² = ‖v‖² + ‖D‖²_F/2.
//
// With a = ‖x‖², b = ‖x′‖², c = x·x′: ‖D‖²_F = a² + b² − 2c². If c ≥ 0,
// ‖v‖² ≤ a + b and the total is ≤ a + b + (a² + b²)/2 ≤ 3. If c < 0,
// ‖v‖² ≤ a + b + 2|c| and the total is ≤ a + b + (a² + b²)/2 + 2|c| − c²
// ≤ a + b + (a² + b²)/2 + 2√(ab) − ab (2|c| − c² grows on [0, 1] and
// |c| ≤ √(ab)), which increases in a and b and equals 4 at a = b = 1. So
// Δ₂ = 2, attained by x′ = −x, r = r′ = 1 (then D = 0 and v = 2x). No
// scaling of the matrix noise relative to σ helps: that pair moves only the
// b-part, by 2, and with matrix noise of standard deviation σ_A < σ the
// limit c → −1 of the bound gives (1 + |c|)/(σ_A/σ)² ≤ 2, i.e. σ_A ≥ σ. The
// other natural layout, the same σ on every upper-triangle entry including
// the diagonal, has sensitivity √4.5 (x = (cos 15°, sin 15°),
// x′ = −(sin 15°, cos 15°), r = r′ = 1: ‖v‖² = 3, D diagonal with
// ‖D‖²_F = 1.5, counted fully), so the diagonal gets √2·σ.
//
// The paper-basis Δ₂ = √2 (docs/linear.md §1.11) is the add/remove value (adding a record moves
// (s, Σxxᵀ) by (r·x, xxᵀ), of squared norm ≤ 1 + 1) or the matrix part
// alone (‖xxᵀ − x′x′ᵀ‖_F ≤ √2, A16); under replacement it is exceeded by
// x′ = −x. It is shown as the paper's value, ρ = (√2)²/(2σ²) = 1/σ²-zCDP,
// marked invalid.
//
// Composition. Given the releases before batch k, batch k's statistics are
// a function of batch k's records alone (the batch schedule is fixed,
// actions inside a batch read only earlier releases and their own round's
// candidates, there are no secret coins): docs/reproduction-decisions.md A14's conditions with
// condition 5 met by noising A. So every release other than the one holding
// τ has the same conditional law in both worlds, and that one is a Gaussian
// mechanism with Δ₂ = 2: by f-DP composition the whole sequence of releases
// is G_μ with μ = 2/σ (Dong, Roth & Su 2022), the maximum over batches, not
// the sum. The certified guarantee is μ-GDP with μ = 2/σ. A trailing partial
// batch is never released.
//
// Calibration (sigma = 0 derives σ from epsilon, delta): paper basis, the
// procedure of AdaPrivate with the valid sensitivity, σ = 2/sqrt(2ρ_BS(ε, δ))
// (9.801 at ε = 1, δ = 1e-5, twice AdaPrivate-UCB's 4.901); certified basis,
// σ = 2/μ_GDP(ε, δ) (7.461 at ε = 1, δ = 1e-5).
//
// Complexity: Select O(K·d²/2) (one triangular solve per candidate; θ̂ is
// solved once per release), Update O(d²/2), a release O(d³/3) (d(d+3)/2
// normal draws and one or two Cholesky factorisations). Nothing allocates
// after construction, releases included (all buffers are preallocated).
// Simulation noise (floats from the policy's generator): a baseline for
// comparison, not for the decision service (docs/privacy-model.md rule 4). Not safe for
// concurrent use.
type UCBABNoise struct {
	opts UCBABNoiseOptions
	r    *rand.Rand
	f    *chol.Factor // Ã = λI + Ĝ + c_k·I
	test *chol.Factor // scratch of blPDShift

	gram  []float64 // Ĝ: released noisy Gram sum, packed upper triangle
	b     []float64 // b̃: released noisy reward sum
	bgram []float64 // raw Gram of the open batch, packed upper triangle
	s     []float64 // raw reward sum of the open batch
	sym   []float64 // d×d scratch for SetSym
	theta []float64 // θ̂ = Ã⁻¹b̃
	buf   []float64 // clipped vector

	report privacy.Report
	shift  float64 // c_k in use (0 before the first release)

	rounds, updates, releases, count int
}

// UCBABNoiseOptions configures UCBABNoise. The descriptor fills in the
// defaults (λ = α = 1, B = 300, γ = 0.01) and calibrates Sigma;
// NewUCBABNoise validates and uses the values as given.
type UCBABNoiseOptions struct {
	Dim       int     `json:"dim"`        // feature dimension d ≥ 1
	Lambda    float64 `json:"lambda"`     // ridge λ > 0
	Alpha     float64 `json:"alpha"`      // UCB width multiplier α ≥ 0
	BatchSize int     `json:"batch_size"` // B ≥ 1
	// Sigma is the noise standard deviation σ > 0 on each coordinate of the
	// batch sum s and on each off-diagonal entry of the batch Gram matrix
	// (√2·σ on its diagonal). UCBABNoiseSigma calibrates it to a target.
	Sigma float64 `json:"sigma"`
	// Fail is the per-release probability γ ∈ (0, 1) with which the shift
	// c_k may fall short of the accumulated matrix noise (then it is
	// doubled until Ã is positive definite).
	Fail float64 `json:"fail"`
}

// ucbABNoiseName is the registry name (looked up by repro/ada_ablation.go).
const ucbABNoiseName = "ucb-ab-noise"

// ucbABNoiseDelta is the joint L2 sensitivity of one release under the
// record-level relation, in the whitened layout (see the type's
// documentation): exactly 2.
const ucbABNoiseDelta = 2.0

func checkUCBABNoise(o UCBABNoiseOptions) error {
	const name = ucbABNoiseName
	if err := checkDim(name, o.Dim); err != nil {
		return err
	}
	if err := checkPositive(name, "lambda", o.Lambda); err != nil {
		return err
	}
	if err := checkNonNegative(name, "alpha", o.Alpha); err != nil {
		return err
	}
	if o.BatchSize < 1 {
		return fmt.Errorf("%s: batch size B = %d must be ≥ 1", name, o.BatchSize)
	}
	if err := checkPositive(name, "sigma", o.Sigma); err != nil {
		return err
	}
	if !(o.Fail > 0 && o.Fail < 1) {
		return fmt.Errorf("%s: parameter fail = %v must lie in (0, 1)", name, o.Fail)
	}
	return nil
}

// NewUCBABNoise returns the "UCB + A&b noise" policy drawing its batch noise
// from r. It returns an error naming the bad parameter and its range; r
// must not be nil.
func NewUCBABNoise(opts UCBABNoiseOptions, r *rand.Rand) (*UCBABNoise, error) {
	if err := checkUCBABNoise(opts); err != nil {
		return nil, err
	}
	if err := blCheckRand(ucbABNoiseName, r); err != nil {
		return nil, err
	}
	d := opts.Dim
	tri := d * (d + 1) / 2
	p := &UCBABNoise{opts: opts, r: r, f: chol.New(d, opts.Lambda), test: chol.New(d, 1),
		gram: make([]float64, tri), b: make([]float64, d), bgram: make([]float64, tri), s: make([]float64, d),
		sym: make([]float64, d*d), theta: make([]float64, d), buf: make([]float64, d),
		report: ucbABNoiseReport(opts)}
	return p, nil
}

// Select returns argmax_a x_aᵀθ̂ + α·sqrt(x_aᵀÃ⁻¹x_a) over the clipped
// candidates. It panics on no candidates or a candidate whose length is not
// d.
func (p *UCBABNoise) Select(candidates [][]float64) int {
	p.rounds++
	return blUCB(ucbABNoiseName, candidates, p.opts.Dim, p.f, p.theta, p.opts.Alpha, p.buf)
}

// Update adds the played vector x (length d, clipped to the unit ball) with
// reward r ∈ [0, 1] to the open batch and releases the batch when it is
// full. It panics on a reward outside [0, 1] or a wrong length.
func (p *UCBABNoise) Update(x []float64, r float64) {
	mustUnitReward(ucbABNoiseName, r)
	mustDim(ucbABNoiseName, x, p.opts.Dim)
	xc := p.buf
	blClip(xc, x)
	axpyVec(r, xc, p.s)
	k := 0
	for i, xi := range xc {
		row := p.bgram[k : k+len(xc)-i]
		axpyVec(xi, xc[i:], row)
		k += len(xc) - i
	}
	p.count++
	p.updates++
	if p.count == p.opts.BatchSize {
		p.release()
	}
}

// release adds the noisy batch statistics to b̃ and Ĝ in one Gaussian step
// and refactorises Ã. The noise drawn here is kept only inside b̃ and Ĝ
// (persisted by MarshalJSON); nothing is ever redrawn.
func (p *UCBABNoise) release() {
	sigma := p.opts.Sigma
	for i, v := range p.s {
		p.b[i] += v + sigma*p.r.NormFloat64()
		p.s[i] = 0
	}
	d := p.opts.Dim
	k := 0
	for i := range d {
		for j := i; j < d; j++ {
			p.gram[k] += p.bgram[k] + ucbABNoiseSD(sigma, i, j)*p.r.NormFloat64()
			p.bgram[k] = 0
			k++
		}
	}
	p.count = 0
	p.releases++
	p.rebuild()
}

// ucbABNoiseSD is the standard deviation of the noise on entry (i, j),
// i ≤ j, of the batch Gram matrix: σ off the diagonal, √2·σ on it (the
// diagonal of (Z + Zᵀ)/√2). The entry below the diagonal is the mirror.
func ucbABNoiseSD(sigma float64, i, j int) float64 {
	if i == j {
		return math.Sqrt2 * sigma
	}
	return sigma
}

// rebuild installs Ã = λI + Ĝ + c_k·I (k = releases) in the factor and
// solves θ̂. It panics if no shift makes Ã positive definite, which the
// Gershgorin cap of blPDShift rules out for finite Ĝ.
func (p *UCBABNoise) rebuild() {
	d := p.opts.Dim
	p.unpack()
	p.shift = 0
	if p.releases > 0 {
		base := UCBABNoiseShift(p.opts.Sigma, d, p.releases, p.opts.Fail)
		p.shift = max(base, blPDShift(p.sym, d, p.opts.Lambda, 2*base, p.test))
	}
	for i := range d {
		p.sym[i*d+i] += p.opts.Lambda + p.shift
	}
	if !p.f.SetSym(p.sym) {
		panic("linear: " + ucbABNoiseName + ": Ĝ + (λ + c)I is not positive definite after the shift search")
	}
	p.f.SolveTo(p.theta, p.b)
}

// unpack writes Ĝ's packed upper triangle into the upper triangle of sym.
func (p *UCBABNoise) unpack() {
	d := p.opts.Dim
	k := 0
	for i := range d {
		copy(p.sym[i*d+i:i*d+d], p.gram[k:k+d-i])
		k += d - i
	}
}

// UCBABNoiseShift returns the shift c_k = σ√k·(2√d + 2·sqrt(ln(1/γ))) added
// to the diagonal after k ≥ 1 releases: with probability ≥ 1 − γ it is at
// least −λ_min of the accumulated symmetric matrix noise (see UCBABNoise).
func UCBABNoiseShift(sigma float64, d, k int, fail float64) float64 {
	return sigma * math.Sqrt(float64(k)) * (2*math.Sqrt(float64(d)) + 2*math.Sqrt(math.Log(1/fail)))
}

// Privacy returns the policy's report; it does not depend on the rounds
// played (batches compose in parallel).
func (p *UCBABNoise) Privacy() privacy.Report { return p.report }

// NextCost is the increase of the run's certified guarantee caused by the
// next round: the whole guarantee if the next Update completes the first
// batch, zero otherwise (later releases compose in parallel).
func (p *UCBABNoise) NextCost() privacy.Guarantee {
	if p.releases == 0 && p.count == p.opts.BatchSize-1 {
		return p.report.Certified
	}
	return privacy.Guarantee{Notion: privacy.NotionGDP}
}

// ReleaseCost is the guarantee of one batch release on its own (equal to the
// run's, by parallel composition).
func (p *UCBABNoise) ReleaseCost() privacy.Guarantee { return p.report.Certified }

// Releases returns the number of batch releases so far.
func (p *UCBABNoise) Releases() int { return p.releases }

// Shift returns the diagonal shift c_k in use (0 before the first release).
func (p *UCBABNoise) Shift() float64 { return p.shift }

// Released returns copies of the released statistics: Ĝ as a full
// symmetric d×d row-major matrix and b̃. With the public (λ, σ, γ, k) they
// determine every decision.
func (p *UCBABNoise) Released() (gram, b []float64) {
	d := p.opts.Dim
	gram = make([]float64, d*d)
	k := 0
	for i := range d {
		for j := i; j < d; j++ {
			gram[i*d+j], gram[j*d+i] = p.gram[k], p.gram[k]
			k++
		}
	}
	return gram, append([]float64(nil), p.b...)
}

// UCBABNoiseState is the learning state of UCBABNoise (its JSON form). Gram
// and B are the released statistics and hold every noise value drawn so
// far; S and BatchGram are the raw, unreleased sums of the open batch. Gram
// and BatchGram are packed upper triangles (row by row, d(d+1)/2 values).
// Shift is derived from Gram and checked on restore.
type UCBABNoiseState struct {
	Rounds    int       `json:"rounds"`   // Select calls
	Updates   int       `json:"updates"`  // Update calls
	Releases  int       `json:"releases"` // batch releases
	Count     int       `json:"count"`    // rounds in the open batch
	Gram      []float64 `json:"gram"`
	B         []float64 `json:"b"`
	S         []float64 `json:"s"`
	BatchGram []float64 `json:"batch_gram"`
	Shift     float64   `json:"shift"`
}

// State returns a copy of the learning state.
func (p *UCBABNoise) State() UCBABNoiseState {
	return UCBABNoiseState{Rounds: p.rounds, Updates: p.updates, Releases: p.releases, Count: p.count,
		Gram: append([]float64(nil), p.gram...), B: append([]float64(nil), p.b...),
		S: append([]float64(nil), p.s...), BatchGram: append([]float64(nil), p.bgram...), Shift: p.shift}
}

// MarshalJSON encodes the options and learning state (not the generator).
func (p *UCBABNoise) MarshalJSON() ([]byte, error) {
	return marshalState(ucbABNoiseName, p.opts, p.State())
}

// UnmarshalJSON restores a state saved by MarshalJSON into a policy built by
// NewUCBABNoise with the same options; the generator is left as it is. Ã is
// rebuilt from the released Ĝ; a state whose shift disagrees is refused.
func (p *UCBABNoise) UnmarshalJSON(data []byte) error {
	st, err := unmarshalState[UCBABNoiseState](data, ucbABNoiseName, p.opts)
	if err != nil {
		return err
	}
	d, B := p.opts.Dim, p.opts.BatchSize
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %w: "+format, append([]any{ucbABNoiseName, errState}, args...)...)
	}
	if st.Count < 0 || st.Count >= B || st.Releases < 0 || st.Rounds < 0 || st.Updates != st.Releases*B+st.Count {
		return bad("count %d, releases %d, updates %d with B = %d", st.Count, st.Releases, st.Updates, B)
	}
	tri := d * (d + 1) / 2
	if len(st.Gram) != tri || len(st.BatchGram) != tri || !allFinite(st.Gram) || !allFinite(st.BatchGram) {
		return bad("gram and batch_gram must have d(d+1)/2 = %d finite entries", tri)
	}
	if len(st.B) != d || len(st.S) != d || !allFinite(st.B) || !allFinite(st.S) {
		return bad("b and s must have d = %d finite entries", d)
	}
	q, err := NewUCBABNoise(p.opts, p.r)
	if err != nil {
		return err
	}
	copy(q.gram, st.Gram)
	copy(q.bgram, st.BatchGram)
	copy(q.b, st.B)
	copy(q.s, st.S)
	q.rounds, q.updates, q.releases, q.count = st.Rounds, st.Updates, st.Releases, st.Count
	q.rebuild()
	if q.shift != st.Shift {
		return bad("shift %v, but the released Gram matrix gives %v", st.Shift, q.shift)
	}
	*p = *q
	return nil
}

// ---------------------------------------------------------------------------
// Report and calibration.

// ucbABNoiseNeighbouring states the relation of the certified guarantee.
const ucbABNoiseNeighbouring = "record-level, contexts private: one round's record replaced — its candidate features " +
	"(hence the played vector x_τ, ‖x‖ ≤ 1 after clipping) and its reward in [0, 1]; protected: the batch releases of " +
	"(Σ r·x, Σ xxᵀ) and, by the billboard lemma, every other round's action (joint DP; a_τ reads round τ's own " +
	"candidates). Under docs/privacy-model.md's event-level relation (features public, only the reward changes) the same μ holds " +
	"for the whole transcript (docs/reproduction-decisions.md A14, condition 5's exception met by noising A)"

// ucbABNoiseReport states the privacy of a policy with options o.
func ucbABNoiseReport(o UCBABNoiseOptions) privacy.Report {
	sigma := o.Sigma
	mech := fmt.Sprintf("%s (B = %d, σ = %.6g on Σr·x and on Σxxᵀ, symmetric, √2σ on its diagonal; shift γ = %g)",
		ucbABNoiseName, o.BatchSize, sigma, o.Fail)
	return privacy.Report{
		Mechanism:    mech,
		Neighbouring: ucbABNoiseNeighbouring,
		Certified:    privacy.Guarantee{Notion: privacy.NotionGDP, Value: roundUpRel(ucbABNoiseDelta / sigma)},
		Paper:        &privacy.Guarantee{Notion: privacy.NotionZCDP, Value: 1 / (sigma * sigma)},
		PaperValid:   false,
		Derivation: "Certified μ-GDP with μ = Δ₂/σ = 2/σ. Batch k releases (s_k + n, G_k + W) in one Gaussian step, " +
			"s_k = Σ r_t x_t, G_k = Σ x_t x_tᵀ over the batch (x clipped to the unit ball, r ∈ [0, 1]), n ~ N(0, σ²I), " +
			"W symmetric with N(0, σ²) off the diagonal and N(0, 2σ²) on it. Dividing the diagonal of the matrix part " +
			"by √2 (an invertible post-processing) makes the noise isotropic; replacing one round's (x, r) by (x′, r′) " +
			"then moves the release by ‖v‖² + ‖D‖²_F/2 in squared norm, v = r x − r′x′, D = xxᵀ − x′x′ᵀ, and with " +
			"a = ‖x‖², b = ‖x′‖², c = x·x′ this is ≤ a + b + (a² + b²)/2 + 2|c| − c² ≤ 4 (at a = b = 1, c = −1): " +
			"Δ₂ = 2, attained by x′ = −x, r = r′ = 1. Given the earlier releases, batch k's statistics depend only on " +
			"batch k's records (fixed schedule; actions inside a batch read only earlier releases and their own " +
			"round's candidates; no secret coins; docs/reproduction-decisions.md A14 with condition 5 met by noising A), so every other " +
			"release has the same conditional law in both worlds and the f-DP composition of the run is G_{2/σ} " +
			"(Dong, Roth & Su 2022): the maximum over batches, not the sum. The actions are post-processing of the " +
			"releases and of each round's own candidates (billboard lemma); a trailing partial batch is never " +
			"released; the positive-definite shift is a function of public parameters and of the released matrix. " +
			"Paper: docs/linear.md §1.11 (the mechanism is unspecified in [ADA] Table 4), Δ₂ = √2, i.e. ρ = 1/σ²-zCDP; NOT " +
			"valid under replacement: √2 is the add/remove sensitivity (‖(r x, xxᵀ)‖² ≤ 2) or that of the matrix part " +
			"alone (A16), and x′ = −x moves the reward part alone by 2. The noise layout is optimal for this pair: " +
			"that pair moves only Σ r·x, and less matrix noise than σ off the diagonal gives a larger sensitivity; " +
			"equal σ on the diagonal would give √4.5.",
	}
}

// UCBABNoiseSigma returns the noise σ with which a policy configured as o
// (o.Sigma is ignored) meets the target t. Basis "paper" (the default):
// AdaPrivate's procedure with the valid sensitivity, σ = 2/sqrt(2ρ) with
// ρ = ρ_BS(ε, δ) ([ADA] Eq. 2.8); the paper's own Δ₂ = √2 is invalid and is
// never used to calibrate. Basis "certified": σ = 2/μ with μ = GDPMu(ε, δ),
// so the certified report meets the target exactly. A μ-GDP target gives
// σ = 2/μ on the certified basis and is converted to ε at t.Delta on the
// paper basis. σ is rounded up so that the report never exceeds the target.
func UCBABNoiseSigma(o UCBABNoiseOptions, t bandit.Target) (float64, error) {
	const name = ucbABNoiseName
	o.Sigma = 1
	if err := checkUCBABNoise(o); err != nil {
		return 0, err
	}
	certified := false
	switch t.Basis {
	case "", bandit.BasisPaper:
	case bandit.BasisCertified:
		certified = true
	default:
		return 0, fmt.Errorf("%s: calibration basis %q: must be %q or %q", name, t.Basis, bandit.BasisPaper, bandit.BasisCertified)
	}
	forMu := func(mu float64) (float64, error) {
		s, err := privacy.GaussianSigmaForMu(mu, ucbABNoiseDelta)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", name, err)
		}
		return nudgeUp(s, func(s float64) bool { return roundUpRel(ucbABNoiseDelta/s) <= mu }), nil
	}
	if t.Mu != 0 {
		if !(t.Mu > 0) || math.IsInf(t.Mu, 1) {
			return 0, fmt.Errorf("%s: privacy target: gdp μ = %v must be finite and > 0", name, t.Mu)
		}
		if certified {
			return forMu(t.Mu)
		}
	}
	eps, delta, err := blTargetEpsDelta(name, t)
	if err != nil {
		return 0, err
	}
	if certified {
		mu, err := privacy.GDPMu(eps, delta)
		if err != nil {
			return 0, fmt.Errorf("%s: calibrating to (ε=%v, δ=%v): %w", name, eps, delta, err)
		}
		return forMu(mu)
	}
	rho, err := privacy.ZCDPRhoBS(eps, delta)
	if err != nil {
		return 0, fmt.Errorf("%s: calibrating to (ε=%v, δ=%v): %w", name, eps, delta, err)
	}
	s, err := privacy.GaussianSigmaForRho(rho, ucbABNoiseDelta)
	if err != nil {
		return 0, fmt.Errorf("%s: calibrating to (ε=%v, δ=%v): %w", name, eps, delta, err)
	}
	// The certified μ = 2/σ (rounded up) must satisfy μ²/2 ≤ ρ.
	return nudgeUp(s, func(s float64) bool { m := roundUpRel(ucbABNoiseDelta / s); return m*m/2 <= rho }), nil
}

func ucbABNoiseParams() []bandit.Param {
	inf := math.Inf(1)
	tiny := math.SmallestNonzeroFloat64
	return []bandit.Param{
		{Name: "lambda", Default: 1, Min: tiny, Max: inf, Doc: "ridge regulariser λ > 0: Ã = λI + Ĝ + c_k·I"},
		{Name: "alpha", Default: 1, Min: 0, Max: inf, Doc: "UCB width multiplier α ≥ 0"},
		{Name: "b", Default: 300, Min: 1, Max: inf, Integer: true, Doc: "batch size B (as AdaPrivate; grid {100, 300, 500, 1000})"},
		{Name: "epsilon", Default: 1, Min: tiny, Max: inf, Doc: "target ε used to derive sigma when sigma = 0"},
		{Name: "delta", Default: 1e-5, Min: tiny, Max: 0.5, Doc: "target δ used to derive sigma when sigma = 0"},
		{Name: "sigma", Default: 0, Min: 0, Max: inf,
			Doc: "noise s.d. σ on Σr·x and off-diagonal Σxxᵀ (√2σ on its diagonal); 0: σ = 2/sqrt(2ρ_BS(ε, δ))"},
		{Name: "fail", Default: 0.01, Min: 1e-12, Max: 0.5,
			Doc: "per-release failure probability γ of the PD shift c_k = σ√k(2√d + 2√ln(1/γ))"},
	}
}

func ucbABNoiseOptionsNoSigma(s bandit.Setting, p bandit.Params) UCBABNoiseOptions {
	return UCBABNoiseOptions{Dim: s.Dim, Lambda: p["lambda"], Alpha: p["alpha"], BatchSize: intParam(p["b"]),
		Sigma: p["sigma"], Fail: p["fail"]}
}

// ucbABNoiseOptions builds the options of a descriptor call, deriving sigma
// from epsilon and delta (paper basis) when it is 0.
func ucbABNoiseOptions(s bandit.Setting, p bandit.Params) (UCBABNoiseOptions, error) {
	o := ucbABNoiseOptionsNoSigma(s, p)
	if o.Sigma == 0 {
		sig, err := UCBABNoiseSigma(o, bandit.Target{Epsilon: p["epsilon"], Delta: p["delta"], Basis: bandit.BasisPaper})
		if err != nil {
			return o, err
		}
		o.Sigma = sig
	}
	return o, checkUCBABNoise(o)
}

func init() {
	register(bandit.Descriptor{
		Name:    ucbABNoiseName,
		Summary: "UCB + A&b noise ([ADA] Table 4 baseline): batched LinUCB releasing Σr·x and Σxxᵀ (symmetric) with Gaussian noise; certified 2/σ-GDP (contexts private)",
		Source:  "Riyazat & Ukwatta, AdaPrivate-TS, Table 4 (mechanism unspecified; docs/linear.md §1.11; docs/reproduction-decisions.md A14)",
		Private: true,
		Params:  ucbABNoiseParams(),
		NewContextual: func(s bandit.Setting, p bandit.Params, r bandit.Rand) (bandit.Contextual, error) {
			o, err := ucbABNoiseOptions(s, p)
			if err != nil {
				return nil, err
			}
			return NewUCBABNoise(o, r)
		},
		Report: func(s bandit.Setting, p bandit.Params) (privacy.Report, error) {
			o, err := ucbABNoiseOptions(s, p)
			if err != nil {
				return privacy.Report{}, err
			}
			return ucbABNoiseReport(o), nil
		},
		Calibrate: func(s bandit.Setting, t bandit.Target, p bandit.Params) (bandit.Params, error) {
			if v, ok := p["sigma"]; ok && v != 0 {
				return nil, fmt.Errorf("%s: sigma = %v is given, so nothing is left to calibrate to the budget; drop sigma", ucbABNoiseName, v)
			}
			full := bandit.Params{}
			for _, q := range ucbABNoiseParams() {
				full[q.Name] = q.Default
			}
			for k, v := range p {
				full[k] = v
			}
			sig, err := UCBABNoiseSigma(ucbABNoiseOptionsNoSigma(s, full), t)
			if err != nil {
				return nil, err
			}
			return bandit.Params{"sigma": sig}, nil
		},
		// Resolve reports the σ the policy runs with: when sigma is left at 0,
		// the paper-basis σ derived from epsilon and delta.
		Resolve: func(s bandit.Setting, p bandit.Params) (bandit.Params, error) {
			o, err := ucbABNoiseOptions(s, p)
			if err != nil {
				return nil, err
			}
			out := bandit.Params{}
			for k, v := range p {
				out[k] = v
			}
			out["sigma"] = o.Sigma
			return out, nil
		},
	})
}

var (
	_ bandit.Contextual = (*UCBABNoise)(nil)
	_ bandit.Private    = (*UCBABNoise)(nil)
	_ bandit.Metered    = (*UCBABNoise)(nil)
	_ json.Marshaler    = (*UCBABNoise)(nil)
	_ json.Unmarshaler  = (*UCBABNoise)(nil)
)
