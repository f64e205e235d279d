package counting

import (
	"fmt"
	"math"
	"math/bits"
)

// Counter is the binary tree mechanism for continual counting
// (Dwork–Naor–Pitassi–Rothblum 2010; Chan–Shi–Song 2011, the "binary
// mechanism"; Mishra–Thakurta 2015 §2.1 "tree based aggregation"), with
// Laplace or Gaussian node noise and optionally Honaker's GLS estimate. See
// the package documentation for the mechanism and its guarantee.
//
// State. After t leaves the counter keeps, for each level j whose bit is set
// in t, the node of the dyadic decomposition of [1, t] at that level: its
// released (noisy) value, its GLS estimate when GLS is on, and its exact sum.
// The exact sum is kept because the node's parent, completed later, needs
// the exact sum of its left child; it is zeroed as soon as the parent is
// released. Nodes of the other levels are zero. Nothing else is kept (no
// leaf, no separate noise draw). This is what [Counter.State] persists.
//
// Cost. Add draws one node's noise per leaf (plain) or, with GLS, every
// completed node (on average two per leaf), and does O(1) amortised work and
// popcount(t) ≤ L additions besides; Sum is O(1). Neither allocates after
// construction with [SimNoise]. A Counter is not safe for concurrent use.
type Counter struct {
	kind     kind
	lap      LaplaceOptions  // as given (kind == kindLaplace)
	gauss    GaussianOptions // as given (kind == kindGaussian)
	capacity int
	levels   int
	delta    float64 // Δ
	lower    float64
	gls      bool
	discrete bool

	scale   float64 // Laplace b or Gaussian σ
	nodeVar float64 // 2b² or σ²
	eps     float64 // certified ε (Laplace)
	rho     float64 // certified ρ (Gaussian)
	mu      float64 // certified μ (Gaussian, continuous noise)

	mech Mechanism

	count int
	sum   float64   // Sum(), recomputed from out after every Add and Restore
	exact []float64 // exact sums of the decomposition nodes, by level
	noisy []float64 // released node values, by level
	gest  []float64 // GLS estimates of the same nodes (GLS only)
	out   []float64 // what Sum adds up: noisy, or gest with GLS
	wOwn  []float64 // GLS weight of a node's own value, by level
	wKids []float64 // GLS weight of its children's estimates, by level
}

type kind uint8

const (
	kindLaplace kind = iota + 1
	kindGaussian
)

// NewLaplace returns a counter with Laplace node noise Lap(b), b = LΔ/ε,
// which is ε-DP for the whole output stream (docs/accountant.md §2.5; DNPR10;
// CSS11's binary mechanism, with L = ⌊log₂T⌋+1 levels). Its error at t has
// variance 2b²·popcount(t), or the GLS variance with GLS on ([Counter.Variance]).
//
// With [SecureNoise] the nodes are released by the discrete Laplace on a
// grid, which pays for its rounding by enlarging b by a relative ≈ 2⁻⁴⁰·b/Δ;
// the certified ε is the same.
//
// Errors wrap [ErrInvalid] and name the bad field and its range.
func NewLaplace(opts LaplaceOptions, nz Noise) (*Counter, error) {
	o := opts.withDefaults()
	if err := checkTree(o.Capacity, o.Sensitivity, o.Lower); err != nil {
		return nil, err
	}
	b, err := ScaleForEpsilon(o.Capacity, o.Sensitivity, o.Epsilon)
	if err != nil {
		return nil, err
	}
	if nz == nil {
		return nil, fmt.Errorf("%w: noise source is nil (use SimNoise or SecureNoise)", ErrInvalid)
	}
	mech, err := nz.Laplace(b, o.Sensitivity)
	if err != nil {
		return nil, fmt.Errorf("counting: Laplace node noise: %w", err)
	}
	c := newCounter(o.Capacity, o.Sensitivity, o.Lower, o.GLS, nz.Discrete(), mech)
	c.kind, c.lap = kindLaplace, opts
	c.scale, c.nodeVar, c.eps = b, mechVariance(mech, 2*b*b), o.Epsilon
	return c, nil
}

// NewGaussian returns a counter with Gaussian node noise N(0, σ²). The
// released nodes are a Gaussian mechanism with ℓ₂ sensitivity √L·Δ, so the
// output stream is ρ-zCDP with ρ = LΔ²/(2σ²) and μ-GDP with μ = √L·Δ/σ =
// √(2ρ) (docs/accountant.md §2.5; dp_accounting's SingleEpochTreeAggregationDpEvent
// with depth ⌈log₂(T+1)⌉). Set exactly one of Rho, Mu, Sigma; the other two
// follow. Its error at t has variance σ²·popcount(t), or the GLS variance.
//
// Which notion is certified. With continuous noise ([SimNoise]) the report
// is μ-GDP: GDP is exact for the Gaussian mechanism (Dong–Roth–Su 2022) and
// converts to (ε, δ) without loss (docs/accountant.md §2.1, §2.4 "Gaussian-only").
// With the secure discrete Gaussian ([SecureNoise]) the report is ρ-zCDP:
// Canonne–Kamath–Steinke (2020, Thm 4) prove Δ²/(2σ²)-zCDP per node for the
// discrete Gaussian, which composes over the L nodes of a leaf to
// ρ = LΔ²/(2σ²); but the discrete Gaussian's privacy profile is not exactly
// the continuous one, so μ-GDP is not certified, and (ε, δ) comes from the
// CKS20 zCDP conversion, a little looser than the GDP one (docs/accountant.md T4).
//
// Errors wrap [ErrInvalid] and name the bad field and its range.
func NewGaussian(opts GaussianOptions, nz Noise) (*Counter, error) {
	o := opts.withDefaults()
	if err := checkTree(o.Capacity, o.Sensitivity, o.Lower); err != nil {
		return nil, err
	}
	set := 0
	for _, v := range []float64{o.Rho, o.Mu, o.Sigma} {
		if v != 0 {
			set++
		}
	}
	if set != 1 {
		return nil, fmt.Errorf("%w: set exactly one of Rho, Mu, Sigma (got Rho=%v, Mu=%v, Sigma=%v)", ErrInvalid, o.Rho, o.Mu, o.Sigma)
	}
	L := float64(Levels(o.Capacity))
	var sigma, rho, mu float64
	var err error
	switch {
	case o.Rho != 0:
		sigma, err = SigmaForRho(o.Capacity, o.Sensitivity, o.Rho)
		rho, mu = o.Rho, math.Sqrt(2*o.Rho)
	case o.Mu != 0:
		sigma, err = SigmaForMu(o.Capacity, o.Sensitivity, o.Mu)
		rho, mu = o.Mu*o.Mu/2*safety, o.Mu
	default:
		if err = checkPositive("Sigma", o.Sigma); err == nil {
			sigma = o.Sigma
			rho = L * o.Sensitivity * o.Sensitivity / (2 * sigma * sigma) * safety
			mu = math.Sqrt(L) * o.Sensitivity / sigma * safety
			if !(rho > 0) || math.IsInf(rho, 1) {
				err = fmt.Errorf("%w: Sigma = %v gives ρ = %v, outside (0, +Inf)", ErrInvalid, o.Sigma, rho)
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if nz == nil {
		return nil, fmt.Errorf("%w: noise source is nil (use SimNoise or SecureNoise)", ErrInvalid)
	}
	mech, err := nz.Gaussian(sigma, o.Sensitivity)
	if err != nil {
		return nil, fmt.Errorf("counting: Gaussian node noise: %w", err)
	}
	c := newCounter(o.Capacity, o.Sensitivity, o.Lower, o.GLS, nz.Discrete(), mech)
	c.kind, c.gauss = kindGaussian, opts
	c.scale, c.nodeVar, c.rho, c.mu = sigma, mechVariance(mech, sigma*sigma), rho, mu
	return c, nil
}

// mechVariance returns the mechanism's own noise variance when it states one
// (the grid mechanisms do: their scale is enlarged to pay for the grid, and
// the discrete Laplace's variance is not exactly 2b²), else the continuous
// value v.
func mechVariance(m Mechanism, v float64) float64 {
	if mv, ok := m.(interface{ Variance() float64 }); ok {
		return mv.Variance()
	}
	return v
}

func newCounter(capacity int, delta, lower float64, gls, discrete bool, mech Mechanism) *Counter {
	L := Levels(capacity)
	c := &Counter{
		capacity: capacity, levels: L, delta: delta, lower: lower, gls: gls,
		discrete: discrete, mech: mech,
		exact: make([]float64, L), noisy: make([]float64, L),
	}
	c.out = c.noisy
	if gls {
		c.gest = make([]float64, L)
		c.out = c.gest
		c.wOwn, c.wKids = glsWeights(L)
	}
	return c
}

// Add inserts the next leaf x, which must lie in [Lower, Lower+Sensitivity],
// and releases the node it completes (with GLS, every node it completes).
// It returns an error wrapping [ErrRange] for x outside that interval (or
// NaN) and [ErrFull] when Capacity leaves have been added; the counter is
// unchanged then. Cost: one noise draw (two on average with GLS), O(1)
// amortised work and popcount(t) additions for Sum; no allocation with
// [SimNoise].
func (c *Counter) Add(x float64) error {
	if !(x >= c.lower && x <= c.lower+c.delta) {
		return fmt.Errorf("%w: leaf %v outside [%v, %v]", ErrRange, x, c.lower, c.lower+c.delta)
	}
	if c.count >= c.capacity {
		return c.errFull()
	}
	c.add(x)
	return nil
}

// AddBatch inserts, as one leaf, the sum of n ≥ 1 values that each lie in
// [Lower, Lower+Sensitivity], so sum must lie in [n·Lower, n·(Lower+Δ)].
// This is Mishra–Thakurta's phase B (docs/tree-based.md §1.8: each arm's ⌈Γ/Δ̂²⌉
// pulls are inserted as a single leaf). The guarantee is unchanged: replacing
// one round's entry moves one of the n values, hence the leaf, by at most Δ.
// Count grows by one. Errors as for [Counter.Add].
func (c *Counter) AddBatch(sum float64, n int) error {
	if n < 1 {
		return fmt.Errorf("%w: AddBatch n = %d, must be ≥ 1", ErrInvalid, n)
	}
	lo, hi := float64(n)*c.lower, float64(n)*(c.lower+c.delta)
	if !(sum >= lo && sum <= hi) {
		return fmt.Errorf("%w: batch sum %v of %d values outside [%v, %v]", ErrRange, sum, n, lo, hi)
	}
	if c.count >= c.capacity {
		return c.errFull()
	}
	c.add(sum)
	return nil
}

func (c *Counter) errFull() error {
	return fmt.Errorf("%w: all %d leaves used (Capacity = %d); size the counter for the horizon", ErrFull, c.count, c.capacity)
}

// add inserts leaf t = count+1 (CSS11's binary mechanism, with the node arrays sized L so
// that t = 2ᵏ = T works). The nodes completed at t are the nodes of levels
// 0..i ending at t, i = the number of trailing zeros of t; the one of level i
// joins the decomposition of [1, t] and those below it leave it.
//
// Plain tree: only the level-i node is ever part of a prefix decomposition
// (a node of level j < i ending at t is a right child, whose parent is
// completed at the same time), so only it is drawn.
//
// GLS: every completed node is drawn, bottom-up, and its GLS estimate is
// formed from its own value and its children's estimates ([glsWeights]);
// the left child of the level-j node is the decomposition node of level j−1
// before this step, and the right child is the node just completed below.
func (c *Counter) add(x float64) {
	c.count++
	i := bits.TrailingZeros(uint(c.count))
	acc := x
	if !c.gls {
		for j := 0; j < i; j++ {
			acc += c.exact[j]
			c.exact[j], c.noisy[j] = 0, 0
		}
		c.exact[i], c.noisy[i] = acc, c.mech.Release(acc)
		c.sum = c.decompositionSum()
		return
	}
	y := c.mech.Release(acc)
	z := y
	for j := 1; j <= i; j++ {
		acc += c.exact[j-1]
		y = c.mech.Release(acc)
		z = c.wOwn[j]*y + c.wKids[j]*(c.gest[j-1]+z)
		c.exact[j-1], c.noisy[j-1], c.gest[j-1] = 0, 0, 0
	}
	c.exact[i], c.noisy[i], c.gest[i] = acc, y, z
	c.sum = c.decompositionSum()
}

// Sum returns the private estimate of the sum of all leaves added so far:
// the sum of the released values of the popcount(t) nodes of the dyadic
// decomposition of [1, t], or of their GLS estimates. It is 0 before the
// first Add. Repeated calls return the same value; it draws nothing and does
// not allocate. Cost: O(1) (the sum is formed once per Add, so a policy that
// reads K counters per round and adds to one pays popcount(t) once).
func (c *Counter) Sum() float64 { return c.sum }

// decompositionSum adds the kept values of the decomposition nodes, from the
// lowest level up. It is a function of the kept state alone, so a restored
// counter reproduces Sum bit for bit.
func (c *Counter) decompositionSum() float64 {
	s := 0.0
	for m := uint(c.count); m != 0; m &= m - 1 {
		s += c.out[bits.TrailingZeros(m)]
	}
	return s
}

// Count returns the number of leaves added.
func (c *Counter) Count() int { return c.count }

// Capacity returns T, the number of leaves the counter accepts.
func (c *Counter) Capacity() int { return c.capacity }

// Levels returns L = ⌊log₂T⌋ + 1.
func (c *Counter) Levels() int { return c.levels }

// GLS reports whether Sum returns Honaker's GLS estimate.
func (c *Counter) GLS() bool { return c.gls }

// Discrete reports whether the nodes are released by discrete (secure)
// mechanisms.
func (c *Counter) Discrete() bool { return c.discrete }

// Secure reports whether the node mechanism is discrete and draws from
// crypto/rand (its Secure method says so): the only kind the decision
// service accepts (docs/privacy-model.md rule 4).
func (c *Counter) Secure() bool {
	s, ok := c.mech.(interface{ Secure() bool })
	return c.discrete && ok && s.Secure()
}

// Scale returns the node noise scale: b for Laplace, σ for Gaussian.
func (c *Counter) Scale() float64 { return c.scale }

// NodeVariance returns the variance of one node's noise: 2b² (Laplace) or σ²
// (Gaussian) for continuous noise. For the grid mechanisms of [SecureNoise]
// it is their own noise variance, whose scale is larger by a relative
// ≈ 2⁻⁴⁰·b/Δ (or σ/Δ) to pay for the grid; their deterministic snapping
// error (at most half a grid step per node) is not included.
func (c *Counter) NodeVariance() float64 { return c.nodeVar }

// Variance returns the variance of the error Sum() − (x₁ + … + x_t) after t
// leaves, for 0 ≤ t ≤ Capacity (the error is unbiased):
//
//   - plain tree: NodeVariance·popcount(t) (docs/accountant.md §2.5, T8);
//   - GLS: NodeVariance·Σ_{k : bit k of t is set} 2ᵏ/(2ᵏ⁺¹ − 1), the
//     variance of the BLUE from the nodes completed by t ([GLSVariance],
//     docs/accountant.md T9).
//
// It panics if t is outside [0, Capacity] (programmer error). Cost: O(L).
func (c *Counter) Variance(t int) float64 {
	if t < 0 || t > c.capacity {
		panic(fmt.Sprintf("counting: Variance(%d) outside [0, Capacity=%d]", t, c.capacity))
	}
	if c.gls {
		return c.nodeVar * GLSVariance(t)
	}
	return c.nodeVar * float64(bits.OnesCount(uint(t)))
}
