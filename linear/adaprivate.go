package linear

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/internal/chol"
	"github.com/dpbandit/dpbandit/noise"
	"github.com/dpbandit/dpbandit/privacy"
)

// AdaPrivate is the AdaPrivate family of Riyazat & Ukwatta, "AdaPrivate-TS:
// Private Thompson Sampling for Contextual Bandits with Privacy
// Amplification" ([ADA]): AdaPrivate-TS (Algorithm 1) and AdaPrivate-UCB
// (§4.1), with Poisson amplification (§3.2, "-Amp"), exploration decay
// (§3.3, "-Adaptive"), forced exploration (§6.2) and user-level clipping
// (§6.1). docs/linear.md §1.11 ([ADA]), with the corrections of A12, A14, A15 and A18.
//
// # Algorithm
//
// State: A = λI + Σ xxᵀ (every round; the features are public), the released
// statistic b = λθ0 + Σ_k s̃_k, the unreleased batch sum s, its count, the
// release count k and the exploration scale v_k = v0·γ_v^k. Each round:
//
//  1. every feature vector is clipped, x ← x/max(1, ‖x‖) (Alg 1 line 5);
//  2. with forced exploration (γ_f > 0), with probability
//     min(1, d·ln t/(t·γ_f)) a uniformly random candidate is played (§6.2;
//     post-processing, it costs no privacy);
//  3. TS: θ̃ = A⁻¹b + v_k·L⁻ᵀz, z ~ N(0, I_d), play argmax_a x_aᵀθ̃ (lines
//     7–9). UCB: play argmax_a x_aᵀA⁻¹b + α_k·sqrt(x_aᵀA⁻¹x_a);
//  4. Update: A += xxᵀ; s += r·x (with Amp: s += Z_t·r·x, Z_t ~ Bern(q), a
//     secret coin); count += 1 (lines 11–13);
//  5. when count = B: b += s + N(0, σ²I_d) (with Amp: b += (s + N(0, σ²I))/q),
//     s and count are reset, k += 1 and v ← v·γ_v (lines 14–16).
//
// A trailing partial batch is never released: b changes only at step 5, so
// the rewards of the last T mod B rounds influence nothing. γ_v = 1 (the
// default) keeps v fixed, as docs/reproduction-decisions.md A18 requires for the default variant;
// "Adaptive" is v0 = 1.5, γ_v = 0.95; "tuned adaptive" (descriptor parameter
// lambda0) is v0 = 1 + σ_b/(d·sqrt(λ0)) with σ_b the noise on b (σ, or σ/q
// with Amp). For UCB, γ_v decays α in the same way (an extension; default 1).
//
// # Privacy (derivations in adaprivate_privacy.go and in Privacy's report)
//
// Event level ([ADA] Definition 2: one round's record replaced; features
// public): certified μ-GDP with μ = 1/σ. One release is a Gaussian mechanism
// of L2 sensitivity 1 (‖r·x − r′·x‖ ≤ 1 with r, r′ ∈ [0, 1] and ‖x‖ ≤ 1), and
// under docs/reproduction-decisions.md A14's conditions the releases compose in parallel: given the
// history, every release but the one holding the changed round has the same
// distribution in both worlds, so the f-DP composition of the run is G_μ (the
// max, not the sum over batches; B and T play no role). The paper's
// ρ = 1/(2σ²)-zCDP ([ADA] Thm 6) is shown beside it (valid, looser).
//
//   - Amp: certified by the EXACT subsampled-Gaussian RDP curve at (q, σ)
//     (docs/accountant.md §2.2, Mironov et al. 2019), never by Eq. 3.6, which is shown as
//     the paper's value and marked invalid (A12).
//   - Grid (serving): each coordinate of s is snapped to a grid gℤ and gets
//     secure discrete Gaussian noise (noise.GridGaussian, exact, from
//     crypto/rand unless a source is injected); certified ρ-zCDP with
//     ρ = (Δ + √d·g)²/(2σ²), g ≤ 2⁻³⁹σ.
//   - User level (UserClip = C > 0): see below; certified ρ-zCDP with
//     ρ = Δ_u²/(2σ²).
//
// # User-level clipping ([ADA]; docs/linear.md §1.11; docs/reproduction-decisions.md A15)
//
// Per batch k and user u the contribution c_u^k = Σ_{t ∈ u, k} r_t·x_t is
// clipped before it enters s, as in [ADA] §6.1, but to the user's REMAINING
// radius: the squared norms of a user's clipped contributions sum to at most
// C² over the whole stream (clipping across the stream), so a user who spans
// several batches is accounted correctly — A15's alternative, charging
// m_u·ρ_user, would need m_u, which is private. Replacing all rewards of one
// user (which rounds belong to which user is public) moves the run's batch
// sums by at most Δ_u = 2C in L2 norm (Minkowski), and the batches compose by
// the Rényi filter to Δ_u²/(2σ²)-zCDP. With ClipCentre the clip is around the
// public centre m_u^k = ½Σ x_t with radius C/2, and Δ_u = C: the paper's
// σ = C/sqrt(2ρ_user) is then valid. The user of a round comes from
// UpdateUser, or, for Update, from UserRounds (round t belongs to user
// ⌊t/UserRounds⌋, the protocol of [ADA] §4.6 with k rounds per user).
//
// # Metering and serving
//
// NextCost (bandit.Metered) is the increment of the run's guarantee that the
// next round causes: the whole certified guarantee when the next Update
// completes the first batch, and zero otherwise (later releases compose in
// parallel, so they add nothing; between releases nothing is released).
// ReleaseCost is the guarantee of a single release. Decisions between
// releases are post-processing of b and the public A (docs/privacy-model.md,
// "The service").
//
// Complexity: Select O(d² + K·d) (TS; UCB adds K·d²/2), Update O(d²), a
// release O(d) (O(d) big-integer samples with Grid, which allocate; user
// level allocates on a user's first appearance). Select and Update allocate
// nothing otherwise. Not safe for concurrent use. The Thompson draws are
// only compared, never released (docs/privacy-model.md rule 4).
type AdaPrivate struct {
	opts   AdaPrivateOptions
	name   string
	r      *rand.Rand
	f      *chol.Factor
	b, s   []float64
	theta  []float64
	z      []float64
	xc     []float64
	grid   *noise.GridGaussian
	users  *userClipper
	report privacy.Report
	zero   privacy.Guarantee

	rounds, updates, releases, count int
	forced                           int     // rounds played by forced exploration
	scale                            float64 // v_k (TS) or α_k (UCB)
}

// AdaPrivateOptions configures an AdaPrivate policy. The descriptor fills in
// the paper's defaults (λ = 1, v = α = 1, γ_v = 1, B = 300) and calibrates
// Sigma; NewAdaPrivate validates and uses the values as given.
type AdaPrivateOptions struct {
	Dim       int     `json:"dim"`        // feature dimension d ≥ 1
	UCB       bool    `json:"ucb"`        // false: AdaPrivate-TS; true: AdaPrivate-UCB
	Lambda    float64 `json:"lambda"`     // ridge λ > 0
	V         float64 `json:"v"`          // TS: initial posterior scale v0 ≥ 0
	Alpha     float64 `json:"alpha"`      // UCB: width multiplier α ≥ 0
	GammaV    float64 `json:"gamma_v"`    // decay of v (or α) per release, in (0, 1]
	BatchSize int     `json:"batch_size"` // B ≥ 1
	// Sigma is the standard deviation σ > 0 of the Gaussian noise added to
	// each coordinate of a batch sum (of the subsampled sum, before the 1/q
	// rescaling, with Amp). AdaPrivateSigma calibrates it to a target.
	Sigma float64 `json:"sigma"`
	// Amp is the Poisson subsampling rate q ∈ (0, 1] of AdaPrivate-TS-Amp;
	// 0 disables subsampling.
	Amp float64 `json:"amp,omitempty"`
	// Forced is the forced-exploration parameter γ_f > 0 ([ADA] §6.2;
	// default γ_f = d, docs/linear.md §1.11); 0 disables it.
	Forced float64 `json:"forced,omitempty"`
	// UserClip is the user-level clipping norm C > 0; 0 means event level.
	UserClip float64 `json:"user_clip,omitempty"`
	// UserRounds k ≥ 1 assigns round t (counted by Update) to user ⌊t/k⌋;
	// 0 means users are given by UpdateUser. Only with UserClip > 0.
	UserRounds int `json:"user_rounds,omitempty"`
	// ClipCentre clips around the public centre ½Σx with radius C/2
	// (sensitivity C) instead of around 0 with radius C (sensitivity 2C).
	ClipCentre bool `json:"clip_centre,omitempty"`
	// Grid draws the batch noise from the secure snapped discrete Gaussian
	// (noise.GridGaussian) instead of a float Gaussian on the policy's
	// generator. Not with Amp.
	Grid bool `json:"grid,omitempty"`
	// GridSource is the randomness of the grid noise: nil reads crypto/rand
	// (the only choice the decision service accepts); simulations inject a
	// seeded source for reproducibility. Not part of the JSON state.
	GridSource rand.Source `json:"-"`
	// Theta0 is the prior mean θ0 (b starts at λθ0; nil: 0, cold start). It
	// must not depend on the protected data (docs/reproduction-decisions.md A14 condition 6).
	Theta0 []float64 `json:"theta0,omitempty"`
}

func (o AdaPrivateOptions) name() string {
	if o.UCB {
		return "adaprivate-ucb"
	}
	return "adaprivate-ts"
}

// checkAdaPrivate validates the options and names the bad one with its range.
func checkAdaPrivate(o AdaPrivateOptions) error {
	name := o.name()
	if err := checkDim(name, o.Dim); err != nil {
		return err
	}
	if err := checkPositive(name, "lambda", o.Lambda); err != nil {
		return err
	}
	if err := checkNonNegative(name, "v", o.V); err != nil {
		return err
	}
	if err := checkNonNegative(name, "alpha", o.Alpha); err != nil {
		return err
	}
	if !(o.GammaV > 0 && o.GammaV <= 1) {
		return fmt.Errorf("%s: parameter gammav = %v must lie in (0, 1]", name, o.GammaV)
	}
	if o.BatchSize < 1 {
		return fmt.Errorf("%s: batch size B = %d must be ≥ 1", name, o.BatchSize)
	}
	if err := checkPositive(name, "sigma", o.Sigma); err != nil {
		return err
	}
	if !(o.Amp >= 0 && o.Amp <= 1) {
		return fmt.Errorf("%s: subsampling rate amp = q = %v must lie in [0, 1] (0: no subsampling)", name, o.Amp)
	}
	if err := checkNonNegative(name, "forced", o.Forced); err != nil {
		return err
	}
	if err := checkNonNegative(name, "userclip", o.UserClip); err != nil {
		return err
	}
	if o.UserRounds < 0 {
		return fmt.Errorf("%s: parameter userrounds = %d must be ≥ 0", name, o.UserRounds)
	}
	if o.UserClip == 0 && (o.UserRounds != 0 || o.ClipCentre) {
		return fmt.Errorf("%s: userrounds and centre need user-level clipping (userclip = C > 0)", name)
	}
	if o.Amp > 0 && o.UserClip > 0 {
		return fmt.Errorf("%s: amp and userclip cannot be combined (the user-level accounting is for the unsampled mechanism)", name)
	}
	if o.Amp > 0 && o.Grid {
		return fmt.Errorf("%s: amp and grid cannot be combined (the subsampled-Gaussian RDP is for continuous noise)", name)
	}
	if o.Grid && o.Sigma < 0x1p-982 {
		return fmt.Errorf("%s: sigma = %v is below the grid mechanism's minimum 2⁻⁹⁸²", name, o.Sigma)
	}
	if o.Theta0 != nil && (len(o.Theta0) != o.Dim || !allFinite(o.Theta0)) {
		return fmt.Errorf("%s: prior theta0 must have d = %d finite entries (has %d)", name, o.Dim, len(o.Theta0))
	}
	return nil
}

// NewAdaPrivate returns an AdaPrivate policy (TS or UCB by opts.UCB) drawing
// its Thompson samples, coins, forced-exploration choices and (without Grid)
// batch noise from r. It returns an error naming the bad parameter and its
// range; r must not be nil.
func NewAdaPrivate(opts AdaPrivateOptions, r *rand.Rand) (*AdaPrivate, error) {
	if err := checkAdaPrivate(opts); err != nil {
		return nil, err
	}
	name := opts.name()
	if r == nil {
		return nil, fmt.Errorf("%s: random generator r must not be nil", name)
	}
	rep, err := adaPrivateReport(opts)
	if err != nil {
		return nil, err
	}
	if opts.Theta0 != nil {
		opts.Theta0 = append([]float64(nil), opts.Theta0...)
	}
	d := opts.Dim
	p := &AdaPrivate{opts: opts, name: name, r: r, f: chol.New(d, opts.Lambda),
		b: make([]float64, d), s: make([]float64, d), theta: make([]float64, d), z: make([]float64, d),
		xc: make([]float64, d), report: rep, zero: adaZeroCost(rep), scale: opts.V}
	if opts.UCB {
		p.scale = opts.Alpha
	}
	for i, v := range opts.Theta0 {
		p.b[i] = opts.Lambda * v
	}
	if opts.Grid {
		g, err := noise.NewGridGaussian(noise.GridGaussianOptions{Sigma: opts.Sigma, Sensitivity: adaSensitivity(opts), Source: opts.GridSource})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		p.grid = g
	}
	if opts.UserClip > 0 {
		p.users = newUserClipper(d, opts.UserClip, opts.ClipCentre, opts.UserRounds > 0)
	}
	return p, nil
}

// Select returns the index of the candidate to play (see the type's
// algorithm). It panics on no candidates or a candidate whose length is not d.
func (p *AdaPrivate) Select(candidates [][]float64) int {
	mustCandidates(p.name, len(candidates))
	p.rounds++
	d := p.opts.Dim
	for _, x := range candidates {
		mustDim(p.name, x, d)
	}
	if p.opts.Forced > 0 && p.r.Float64() < p.forcedProb(p.rounds) { // the coin is drawn even when pt = 0 (t = 1): same stream as before
		p.forced++
		return p.r.IntN(len(candidates))
	}
	return p.pick(p.r, candidates)
}

// forcedProb is the forced-exploration probability of round t:
// min(1, d·ln t/(t·g)), or 0 without forced exploration. It depends on t
// only (public).
func (p *AdaPrivate) forcedProb(t int) float64 {
	g := p.opts.Forced
	if g <= 0 {
		return 0
	}
	tf := float64(t)
	return min(1, float64(p.opts.Dim)*math.Log(tf)/(tf*g))
}

// pick is the rule without forced exploration: the UCB argmax, or the
// argmax under one posterior draw on r. It reads only the released b, the
// Gram matrix of the played (public) vectors, and the public scale.
func (p *AdaPrivate) pick(r *rand.Rand, candidates [][]float64) int {
	best, bv := 0, math.Inf(-1)
	if p.opts.UCB {
		p.f.SolveTo(p.theta, p.b)
		for i, x := range candidates {
			v := (dotVec(x, p.theta) + p.scale*math.Sqrt(p.f.QuadInv(x))) * clipFactor(x)
			if v > bv {
				best, bv = i, v
			}
		}
		return best
	}
	z := p.z
	for i := range z {
		z[i] = r.NormFloat64()
	}
	p.f.SamplePosterior(p.theta, p.b, p.scale, z)
	for i, x := range candidates {
		if v := dotVec(x, p.theta) * clipFactor(x); v > bv {
			best, bv = i, v
		}
	}
	return best
}

// SelectProbs is the distribution of the next Select(candidates)
// (bandit.Propensities): the forced-exploration probability pt of the next
// round spread uniformly, plus (1 − pt) times the rule's own distribution,
// which is exact for the UCB variant and estimated from draws posterior
// draws on r for TS (the return value; 0 when exact).
//
// Privacy: the rule reads the released statistic b = λθ0 + Σ_k s̃_k (the
// DP output of the batch releases, [ADA] Alg 1 line 15), the Gram matrix of
// the played vectors (public in [ADA]'s model, which protects rewards), the
// public scale schedule and the round count. The probabilities are
// therefore post-processing of released state and cost no privacy
// (docs/privacy-model.md rule 2; docs/accountant.md, post-processing). Unreleased batch sums
// (s, the user accumulators) are never read.
func (p *AdaPrivate) SelectProbs(candidates [][]float64, out []float64, draws int, r *rand.Rand) int {
	mustCandidates(p.name, len(candidates))
	for _, x := range candidates {
		mustDim(p.name, x, p.opts.Dim)
	}
	out = out[:len(candidates)]
	var n int
	if p.opts.UCB {
		n = bandit.PointMass(out, p.pick(nil, candidates))
	} else {
		n = bandit.EstimateProbs(out, draws, func() int { return p.pick(r, candidates) })
	}
	if pt := p.forcedProb(p.rounds + 1); pt > 0 {
		u := pt / float64(len(out))
		for i := range out {
			out[i] = u + (1-pt)*out[i]
		}
	}
	return n
}

// Update feeds back the played vector x (length d, clipped to the unit ball)
// with reward r ∈ [0, 1], and releases b's increment when the batch is full.
// At user level the round's user is ⌊t/UserRounds⌋ (UpdateUser otherwise).
// It panics on a reward outside [0, 1], a wrong length, or a user-level
// policy with UserRounds = 0.
func (p *AdaPrivate) Update(x []float64, r float64) {
	var u uint64
	if p.users != nil {
		if p.opts.UserRounds == 0 {
			panic("linear: " + p.name + ": user-level clipping without userrounds needs UpdateUser")
		}
		u = uint64(p.updates / p.opts.UserRounds)
	}
	p.update(u, x, r)
}

// UpdateUser is Update for a user-level policy with explicit user ids
// (UserRounds = 0). A user's first appearance allocates its accumulator.
func (p *AdaPrivate) UpdateUser(user uint64, x []float64, r float64) {
	if p.users == nil || p.opts.UserRounds != 0 {
		panic("linear: " + p.name + ": UpdateUser needs user-level clipping with userrounds = 0")
	}
	p.update(user, x, r)
}

func (p *AdaPrivate) update(user uint64, x []float64, r float64) {
	mustUnitReward(p.name, r)
	mustDim(p.name, x, p.opts.Dim)
	c := clipFactor(x)
	xc := p.xc
	for i, v := range x {
		xc[i] = c * v
	}
	p.f.Update(xc)
	switch {
	case p.users != nil:
		p.users.add(user, xc, r)
	case p.opts.Amp > 0:
		if p.r.Float64() < p.opts.Amp { // the secret coin Z_t
			axpyVec(r, xc, p.s)
		}
	default:
		axpyVec(r, xc, p.s)
	}
	p.count++
	p.updates++
	if p.count == p.opts.BatchSize {
		p.release()
	}
}

// release adds the noisy batch sum to b ([ADA] Alg 1 line 15) and starts a
// new batch. The noise drawn here is kept only inside b (persisted by
// MarshalJSON); nothing is ever redrawn.
func (p *AdaPrivate) release() {
	if p.users != nil {
		var next uint64
		if p.opts.UserRounds > 0 {
			next = uint64(p.updates / p.opts.UserRounds)
		}
		p.users.flush(p.s, next)
	}
	q := p.opts.Amp
	for i, si := range p.s {
		var inc float64
		if p.grid != nil {
			inc = p.grid.Release(si)
		} else {
			inc = si + p.opts.Sigma*p.r.NormFloat64()
		}
		if q > 0 {
			inc /= q
		}
		p.b[i] += inc
		p.s[i] = 0
	}
	p.count = 0
	p.releases++
	p.scale *= p.opts.GammaV
}

// Privacy returns the policy's report; it does not depend on the rounds
// played (batches compose in parallel).
func (p *AdaPrivate) Privacy() privacy.Report { return p.report }

// NextCost is the increase of the run's certified guarantee caused by the
// next round: the full guarantee at the B-th Select, zero otherwise (later
// releases compose in parallel; see the type's documentation). The first
// release needs B rewards and therefore B decisions, so charging at the B-th
// Select precedes it however late rewards arrive; charging when the count of
// applied rewards reaches B−1 would miss a release completed by a reward of
// a decision that was already outstanding (found by an independent review:
// B = 3, three Selects then three Updates released once with nothing
// charged). Selects only increase, so the charge happens once.
func (p *AdaPrivate) NextCost() privacy.Guarantee {
	if p.rounds == p.opts.BatchSize-1 {
		return adaReleaseCost(p.report)
	}
	return p.zero
}

// ReleaseCost is the guarantee of one batch release on its own (equal to the
// run's, by parallel composition).
func (p *AdaPrivate) ReleaseCost() privacy.Guarantee { return adaReleaseCost(p.report) }

// ForcedRounds returns the number of rounds played by forced exploration.
func (p *AdaPrivate) ForcedRounds() int { return p.forced }

// Releases returns the number of batch releases so far.
func (p *AdaPrivate) Releases() int { return p.releases }

// Released returns a copy of the released statistic b = λθ0 + Σ_k s̃_k: the
// DP output from which, with the public A, every decision is computed.
func (p *AdaPrivate) Released() []float64 { return append([]float64(nil), p.b...) }

// SecureNoise reports whether the batch noise is drawn from the secure
// discrete Gaussian on crypto/rand (Grid with a nil GridSource), the only
// configuration the decision service may release.
func (p *AdaPrivate) SecureNoise() bool { return p.grid != nil && p.grid.Secure() }

// AdaPrivateState is the learning state of an AdaPrivate policy (its JSON
// form). B holds every noise value drawn so far (inside the released sums);
// S and the user accumulators are raw and unreleased.
type AdaPrivateState struct {
	Rounds   int            `json:"rounds"`   // Select calls
	Updates  int            `json:"updates"`  // Update calls
	Releases int            `json:"releases"` // batch releases
	Count    int            `json:"count"`    // rounds in the current batch
	Forced   int            `json:"forced"`   // rounds played by forced exploration
	Scale    float64        `json:"scale"`    // current v (TS) or α (UCB)
	A        []byte         `json:"a"`        // chol.Factor encoding of A
	B        []float64      `json:"b"`        // released statistic
	S        []float64      `json:"s"`        // unreleased batch sum
	Users    *UserClipState `json:"users,omitempty"`
}

// State returns a copy of the learning state.
func (p *AdaPrivate) State() AdaPrivateState {
	a, _ := p.f.MarshalBinary()
	st := AdaPrivateState{Rounds: p.rounds, Updates: p.updates, Releases: p.releases, Count: p.count, Forced: p.forced, Scale: p.scale,
		A: a, B: append([]float64(nil), p.b...), S: append([]float64(nil), p.s...)}
	if p.users != nil {
		us := p.users.state()
		st.Users = &us
	}
	return st
}

// MarshalJSON encodes the options and learning state (not the generator).
func (p *AdaPrivate) MarshalJSON() ([]byte, error) {
	return marshalState(p.name, p.opts, p.State())
}

// UnmarshalJSON restores a state saved by MarshalJSON into a policy built by
// NewAdaPrivate with the same options; the generator is left as it is.
func (p *AdaPrivate) UnmarshalJSON(data []byte) error {
	st, err := unmarshalState[AdaPrivateState](data, p.name, p.opts)
	if err != nil {
		return err
	}
	d, B := p.opts.Dim, p.opts.BatchSize
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %w: "+format, append([]any{p.name, errState}, args...)...)
	}
	if st.Count < 0 || st.Count >= B || st.Releases < 0 || st.Rounds < 0 || st.Forced < 0 || st.Forced > st.Rounds ||
		st.Updates != st.Releases*B+st.Count {
		return bad("count %d, releases %d, updates %d with B = %d", st.Count, st.Releases, st.Updates, B)
	}
	if !(st.Scale >= 0) || math.IsInf(st.Scale, 1) {
		return bad("exploration scale %v", st.Scale)
	}
	if len(st.B) != d || len(st.S) != d || !allFinite(st.B) || !allFinite(st.S) {
		return bad("b and s must have d = %d finite entries", d)
	}
	var f chol.Factor
	if err := f.UnmarshalBinary(st.A); err != nil {
		return bad("%v", err)
	}
	if f.Dim() != d {
		return bad("A of dimension %d, want %d", f.Dim(), d)
	}
	var users *userClipper
	if p.users != nil {
		if st.Users == nil {
			return bad("user-level state missing")
		}
		users = newUserClipper(d, p.opts.UserClip, p.opts.ClipCentre, p.opts.UserRounds > 0)
		if err := users.restore(*st.Users); err != nil {
			return bad("%v", err)
		}
	} else if st.Users != nil {
		return bad("user-level state for an event-level policy")
	}
	p.f, p.b, p.s, p.users = &f, append([]float64(nil), st.B...), append([]float64(nil), st.S...), users
	p.rounds, p.updates, p.releases, p.count, p.forced, p.scale = st.Rounds, st.Updates, st.Releases, st.Count, st.Forced, st.Scale
	return nil
}

var (
	_ bandit.Contextual = (*AdaPrivate)(nil)
	_ bandit.Private    = (*AdaPrivate)(nil)
	_ bandit.Metered    = (*AdaPrivate)(nil)
	_ json.Marshaler    = (*AdaPrivate)(nil)
	_ json.Unmarshaler  = (*AdaPrivate)(nil)
)
