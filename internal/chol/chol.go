// Package chol maintains the Cholesky factorisation of a symmetric positive
// definite matrix A = λI + Σ αₜ xₜxₜᵀ under rank-one updates, on raw
// []float64 slices and without allocation on the per-round path.
//
// It is the one Cholesky implementation of dpbandit. Linear Thompson sampling
// and LinUCB call, once per round,
//
//	Update(x)                   A += x xᵀ, factor updated in O(d²) by Givens rotations
//	SolveTo(mean, b)            mean = A⁻¹ b
//	SampleMVN(θ, mean, v, z)    θ = mean + v·L⁻ᵀ z ~ N(mean, v² A⁻¹) for z ~ N(0, I)
//	QuadInv(x)                  xᵀ A⁻¹ x, the squared LinUCB width
//
// and SamplePosterior(θ, b, v, z) fuses the mean and the draw,
// θ = A⁻¹b + v·L⁻ᵀz, in one forward and one back substitution.
//
// gonum's mat.Cholesky computes the same quantities but re-estimates the
// condition number after every update and goes through its Matrix
// interfaces: its SymRankOne costs 14–36× this package's Update at
// d = 5–100 (internal/chol/BENCHMARKS.txt). This
// package is tested against mat.Cholesky; use mat in cold paths and tests.
//
// # Representation
//
// A Factor holds A = L Lᵀ with L lower triangular and a positive diagonal.
// The factor is stored as U = Lᵀ (upper triangular, A = UᵀU) in a flat
// row-major d×d slice, which is the same memory as L stored column-major
// and the same layout as mat.Cholesky's RawU. Row i of U is contiguous, so
// the Givens update and both triangular solves run over contiguous memory.
// A itself is kept (its upper triangle) so that the factor can be recomputed
// from it: accumulated rounding in the updated factor is removed by an
// automatic refactorisation every RefactorInterval updates (default
// DefaultRefactorInterval).
//
// # Failure modes
//
// Following gonum: a shape mismatch or an invalid argument (a programmer
// error) panics; numerical failure (a matrix that is not positive definite)
// is reported by an ok bool; ill-conditioning is reported, not prevented, by
// CondLowerBound. Inputs are not checked for NaN or ±Inf: a non-finite x
// poisons the factor, which CondLowerBound then reports as NaN.
//
// # Concurrency
//
// A Factor is not safe for concurrent use. The methods that only read it
// (SolveTo, SolveLowerTo, SolveUpperTo, SampleMVN, SamplePosterior, SymTo,
// LTo, CondLowerBound, Dim, RefactorInterval, Clone, MarshalBinary,
// AppendBinary) may run concurrently with each other; every other method,
// including QuadInv (which uses an internal work buffer), needs exclusive
// access. Use Clone to give each goroutine its own copy.
package chol

import (
	"fmt"
	"math"
)

// DefaultRefactorInterval is the number of updates after which New and
// NewFromSym schedule an automatic refactorisation from the stored A.
//
// The rounding error of n Givens updates grows at worst like n·d·ε
// (ε = 2⁻⁵³), about 1e-11 relative at d = 100 and n = 1000; in the tests
// the drift after 10⁴ updates is below 1e-14. A refactorisation costs d³/6
// multiply-adds (≈ 0.1 ms at d = 100), so at this interval it adds about 1%
// to the cost of an update.
const DefaultRefactorInterval = 1000

// Factor is a symmetric positive definite d×d matrix A together with its
// Cholesky factor L (A = L Lᵀ), updated in place by rank-one updates.
//
// Construct it with New, NewFromSym or UnmarshalBinary. The zero value is an
// empty Factor that is only valid as the receiver of UnmarshalBinary; other
// methods panic on it.
//
// A Factor owns all its memory: no method retains a caller's slice, and none
// returns an internal one.
type Factor struct {
	d int

	// u holds U = Lᵀ in its upper triangle, row-major with stride d.
	// The strictly lower triangle is zero.
	u []float64

	// a holds A in its upper triangle, row-major with stride d. Its strictly
	// lower triangle is scratch space for factorise, which builds the new
	// factor there so that u is left untouched on failure.
	a []float64

	// diag (scratch for factorise) and work (scratch for UpdateScaled and
	// QuadInv) have length d.
	diag []float64
	work []float64

	// every is the automatic refactorisation interval (≤ 0: never); since
	// counts the updates applied since the factor was last computed from a.
	every int
	since int
}

// New returns the factorisation of A = λI of dimension d, that is L = √λ I.
// It panics if d < 1 or if λ is not a positive finite number.
//
// New allocates 2d² + 2d float64s; later calls to the per-round methods
// allocate nothing.
func New(d int, lambda float64) *Factor {
	if !(lambda > 0) || math.IsInf(lambda, 1) {
		panic(fmt.Sprintf("chol: lambda = %v, want a positive finite number", lambda))
	}
	f := alloc(d)
	s := math.Sqrt(lambda)
	for i := range d {
		f.a[i*d+i] = lambda
		f.u[i*d+i] = s
	}
	return f
}

// NewFromSym returns the factorisation of the d×d symmetric matrix A given in
// a (row-major, length d²). Only the upper triangle of a is read; a is not
// retained. ok is false, and f is nil, if A is not numerically positive
// definite (a non-positive or NaN pivot). It panics if d < 1 or len(a) != d².
//
// NewFromSym costs d³/6 multiply-adds and allocates 2d² + 2d float64s.
func NewFromSym(d int, a []float64) (f *Factor, ok bool) {
	checkDim(d)
	if len(a) != d*d {
		panic(fmt.Sprintf("chol: len(a) = %d, want d² = %d", len(a), d*d))
	}
	f = alloc(d)
	if !f.SetSym(a) {
		return nil, false
	}
	return f, true
}

func checkDim(d int) {
	if d < 1 {
		panic(fmt.Sprintf("chol: dimension %d, want d ≥ 1", d))
	}
}

func alloc(d int) *Factor {
	checkDim(d)
	return &Factor{
		d:     d,
		u:     make([]float64, d*d),
		a:     make([]float64, d*d),
		diag:  make([]float64, d),
		work:  make([]float64, d),
		every: DefaultRefactorInterval,
	}
}

// Dim returns the dimension d of A.
func (f *Factor) Dim() int { return f.d }

// SetRefactorInterval sets the number of updates after which Update and
// UpdateScaled recompute the factor from the stored A (O(d³/6)). n ≤ 0
// disables the automatic refactorisation. The count of updates since the
// last factorisation is kept.
func (f *Factor) SetRefactorInterval(n int) { f.every = n }

// RefactorInterval returns the automatic refactorisation interval (≤ 0: never).
func (f *Factor) RefactorInterval() int { return f.every }

// Update sets A to A + x xᵀ and updates L accordingly. It is UpdateScaled(1, x).
func (f *Factor) Update(x []float64) { f.UpdateScaled(1, x) }

// UpdateScaled sets A to A + α x xᵀ for α ≥ 0 and updates L by d Givens
// rotations (LINPACK dchud; Dongarra et al., LINPACK Users' Guide, SIAM 1979,
// §10; the same algorithm as mat.Cholesky.SymRankOne for α > 0).
//
// It costs about 2d² multiplications for the rotations and d²/2
// multiply-adds for A, and allocates nothing. When the automatic
// refactorisation interval is reached, the factor is then recomputed from A
// (d³/6 multiply-adds). Should that fail, which requires A to be numerically
// singular, the updated factor is kept and the next attempt comes one
// interval later; a caller who needs to know calls Refactorize itself.
//
// α = 0 is a no-op. It panics if α is negative, infinite or NaN (downdates
// are not supported) or if len(x) != d. x is read, not retained, and must be
// finite.
func (f *Factor) UpdateScaled(alpha float64, x []float64) {
	d := f.d
	if len(x) != d || d == 0 {
		panic(f.shapeMsg("x", len(x), d))
	}
	if !(alpha >= 0) || math.IsInf(alpha, 1) {
		panic(fmt.Sprintf("chol: UpdateScaled with alpha = %v, want a finite alpha ≥ 0 (downdates are not supported)", alpha))
	}
	if alpha == 0 {
		return
	}
	x = x[:d:d]

	// w = √α x is zeroed against the rows of U by Givens rotations while
	// row i of A's upper triangle gets α xᵢ x[i:]; the two are fused into
	// one pass over row i (≈15% faster than two passes at d = 20–50).
	w := f.work[:d:d]
	if alpha == 1 {
		copy(w, x)
	} else {
		s := math.Sqrt(alpha)
		for i, xi := range x {
			w[i] = s * xi
		}
	}
	u, a := f.u, f.a
	for i, xi := range x {
		ax := alpha * xi
		arow := a[i*d+i : i*d+d]
		arow[0] += ax * xi
		row := u[i*d+i : i*d+d]
		uii, wi := row[0], w[i]
		if wi == 0 { // the rotation is the identity
			if ax != 0 {
				axpy(ax, x[i+1:], arow[1:])
			}
			continue
		}
		// r = hypot(uii, wi) > 0 since uii > 0. The plain formula cannot
		// overflow unless |A| exceeds ~1e300.
		r := math.Sqrt(uii*uii + wi*wi)
		inv := 1 / r
		row[0] = r
		rotAxpy(row[1:], w[i+1:], uii*inv, wi*inv, arow[1:], ax, x[i+1:])
	}

	if f.every > 0 {
		f.since++
		if f.since >= f.every {
			if !f.Refactorize() {
				f.since = 0 // try again after another interval
			}
		}
	}
}

// rotAxpy applies the plane rotation [c s; −s c] to the pairs (x[j], y[j]),
// x ← c x + s y, y ← c y − s x, and sets a ← a + alpha·v. y, a and v must be
// at least as long as x.
func rotAxpy(x, y []float64, c, s float64, a []float64, alpha float64, v []float64) {
	y, a, v = y[:len(x)], a[:len(x)], v[:len(x)]
	for j, xj := range x {
		yj := y[j]
		x[j] = c*xj + s*yj
		y[j] = c*yj - s*xj
		a[j] += alpha * v[j]
	}
}

// axpy sets y ← y + alpha·x. len(y) must be at least len(x).
func axpy(alpha float64, x, y []float64) {
	y = y[:len(x)]
	for j, xj := range x {
		y[j] += alpha * xj
	}
}

// dot returns x·y. len(y) must be at least len(x).
func dot(x, y []float64) float64 {
	y = y[:len(x)]
	var s0, s1, s2, s3 float64
	j := 0
	for ; j+4 <= len(x); j += 4 {
		s0 += x[j] * y[j]
		s1 += x[j+1] * y[j+1]
		s2 += x[j+2] * y[j+2]
		s3 += x[j+3] * y[j+3]
	}
	for ; j < len(x); j++ {
		s0 += x[j] * y[j]
	}
	return (s0 + s1) + (s2 + s3)
}

// Refactorize recomputes L from the stored A by a fresh Cholesky
// factorisation, discarding the rounding accumulated by updates, and resets
// the count towards the automatic refactorisation. It costs d³/6
// multiply-adds and allocates nothing.
//
// ok is false if A is not numerically positive definite; the factor is then
// left unchanged.
func (f *Factor) Refactorize() (ok bool) {
	if f.d == 0 {
		panic("chol: Refactorize on an empty Factor")
	}
	if !f.factorise(f.a) {
		return false
	}
	f.since = 0
	return true
}

// SetSym sets A to the d×d symmetric matrix in a (row-major, length d²; only
// its upper triangle is read, a is not retained) and factorises it, as
// NewFromSym does, without allocating. It is the cold-path reset used when A
// is rebuilt (for example a noisy Gram matrix released by a tree mechanism).
//
// ok is false if A is not numerically positive definite; the receiver is then
// left unchanged. It panics if len(a) != d².
func (f *Factor) SetSym(a []float64) (ok bool) {
	d := f.d
	if len(a) != d*d || d == 0 {
		panic(f.shapeMsg("a", len(a), d*d))
	}
	if !f.factorise(a) {
		return false
	}
	for i := range d {
		copy(f.a[i*d+i:i*d+d], a[i*d+i:i*d+d])
	}
	f.since = 0
	return true
}

// factorise computes the Cholesky factor of the symmetric matrix whose upper
// triangle is held in src (row-major, stride d) and, on success, stores it in
// f.u. src may be f.a: only its upper triangle is read.
//
// It is the Cholesky–Banachiewicz (row-by-row) algorithm on L = Uᵀ, built in
// the strictly lower triangle of f.a (which is scratch) and in f.diag, so
// that each inner product runs over two contiguous rows of L and f.u is not
// touched until the factorisation has succeeded.
func (f *Factor) factorise(src []float64) bool {
	d := f.d
	l, diag := f.a, f.diag
	for i := range d {
		li := l[i*d : i*d+i] // row i of L, strictly lower part
		for j := range i {
			lj := l[j*d : j*d+j]
			li[j] = (src[j*d+i] - dot(lj, li)) / diag[j]
		}
		p := src[i*d+i] - dot(li, li)
		if !(p > 0) || math.IsInf(p, 1) {
			return false
		}
		diag[i] = math.Sqrt(p)
	}
	u := f.u
	for i := range d {
		u[i*d+i] = diag[i]
		for j := range i {
			u[j*d+i] = l[i*d+j]
		}
	}
	return true
}

// CondLowerBound returns (max Lᵢᵢ / min Lᵢᵢ)², a lower bound on the 2-norm
// condition number κ₂(A) = κ₂(L)², in O(d). The bound holds because the
// diagonal of a triangular matrix holds its eigenvalues, whose moduli lie
// between its smallest and largest singular values. It is an indicator, not
// an estimate: κ₂(A) may be much larger. A value above about 1e12 means that
// solves against A have lost most of their accuracy. It returns NaN if the
// factor holds a NaN.
func (f *Factor) CondLowerBound() float64 {
	d := f.d
	if d == 0 {
		panic("chol: CondLowerBound on an empty Factor")
	}
	lo, hi := math.Inf(1), 0.0
	for i := range d {
		v := f.u[i*d+i]
		if math.IsNaN(v) {
			return math.NaN()
		}
		lo, hi = min(lo, v), max(hi, v)
	}
	r := hi / lo
	return r * r
}

// SymTo writes A into dst as a full symmetric d×d row-major matrix. It panics
// if len(dst) != d².
func (f *Factor) SymTo(dst []float64) {
	d := f.d
	if len(dst) != d*d || d == 0 {
		panic(f.shapeMsg("dst", len(dst), d*d))
	}
	for i := range d {
		for j := i; j < d; j++ {
			v := f.a[i*d+j]
			dst[i*d+j] = v
			dst[j*d+i] = v
		}
	}
}

// LTo writes L (A = L Lᵀ, lower triangular, positive diagonal) into dst as a
// d×d row-major matrix with zeros above the diagonal. It panics if
// len(dst) != d².
func (f *Factor) LTo(dst []float64) {
	d := f.d
	if len(dst) != d*d || d == 0 {
		panic(f.shapeMsg("dst", len(dst), d*d))
	}
	for i := range d {
		for j := range d {
			dst[i*d+j] = f.u[j*d+i]
		}
	}
}

// Clone returns a deep copy of f that shares no memory with it.
func (f *Factor) Clone() *Factor {
	if f.d == 0 {
		panic("chol: Clone of an empty Factor")
	}
	g := alloc(f.d)
	copy(g.u, f.u)
	copy(g.a, f.a)
	g.every, g.since = f.every, f.since
	return g
}

func (f *Factor) shapeMsg(name string, got, want int) string {
	if f.d == 0 {
		return "chol: method called on an empty Factor"
	}
	return fmt.Sprintf("chol: len(%s) = %d, want %d (d = %d)", name, got, want, f.d)
}
