package env

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mathext"
)

// mustParse parses spec or fails the test.
func mustParse(t testing.TB, spec string) Env {
	t.Helper()
	e, err := Parse(spec)
	if err != nil {
		t.Fatalf("Parse(%q): %v", spec, err)
	}
	return e
}

// testSpecs covers every kind, the docs/reproductions.md instances (E1, E2, E5, E10)
// and parameters where clipping, skew or atoms matter.
var testSpecs = []string{
	"bernoulli:0.75,0.625,0.5,0.375,0.25", // E1
	"bernoulli:0.95,0.75,0.55,0.35,0.15",  // E5
	"bernoulli:0.9,0.4,0.4,0.4,0.4",       // E10
	"bernoulli:0,1,0.001",
	"truncexp:0.1,1,2,5,10", // E2
	"truncexp:0.001,50,1000",
	"gaussian:sd=0.1;0.9,0.5,0.05",
	"gaussian:0.05/0.3,1/1,0/0.5,0.7/10,0.3/0.001",
	"beta:2/5,3/4,0.5/0.5,0.1/3,20/1,1/3,1/1",
	"fixed:0.3,0.7,0,1",
}

// TestEmpiricalMeans checks that the sample mean of 200 000 pulls of every
// arm is within 5 standard errors (the sample s.d. over √n) of Means(); for
// a zero-variance arm it must be exact. The 1e-9 slack absorbs
// summation rounding for zero-variance arms. Seeds are fixed, so the test
// is deterministic; at 5 s.e. a correct sampler fails with probability < 1e-6
// per arm.
func TestEmpiricalMeans(t *testing.T) {
	const n = 200_000
	for i, spec := range testSpecs {
		t.Run(spec, func(t *testing.T) {
			e := mustParse(t, spec)
			r := rand.New(rand.NewPCG(42, uint64(i)))
			for a, mu := range e.Means() {
				var sum, sum2 float64
				for range n {
					x := e.Pull(a, r)
					sum += x
					sum2 += x * x
				}
				mean := sum / n
				sd := math.Sqrt(max(sum2/n-mean*mean, 0) * n / (n - 1))
				se := sd / math.Sqrt(n)
				if d := math.Abs(mean - mu); d > 5*se+1e-9 {
					t.Errorf("arm %d: empirical mean %.6f, Means() %.6f, |diff| = %.2g > 5 s.e. = %.2g", a, mean, mu, d, 5*se)
				}
			}
		})
	}
}

// TestPullRange checks that rewards lie in [0,1] (no NaN) at extreme but
// valid parameters.
func TestPullRange(t *testing.T) {
	specs := append(slices.Clone(testSpecs),
		"truncexp:1e-300,5e-324,1e300,1.7976931348623157e308",
		"gaussian:0/1e300,1/1e-300,0.5/5e-324",
		"beta:1e-3/1e3,1e3/1e-3,1e-300/1e-300,1e6/1e6",
	)
	r := rand.New(rand.NewPCG(1, 2))
	for _, spec := range specs {
		e := mustParse(t, spec)
		for a := range e.K() {
			for range 10_000 {
				if x := e.Pull(a, r); !(x >= 0 && x <= 1) {
					t.Fatalf("%s arm %d: reward %v outside [0,1]", spec, a, x)
				}
			}
		}
		for a, mu := range e.Means() {
			if !(mu >= 0 && mu <= 1) {
				t.Errorf("%s arm %d: mean %v outside [0,1]", spec, a, mu)
			}
		}
	}
}

// TestTruncExpOracle checks the truncated-exponential means against the
// docs/reproductions.md §3.0 oracle (printed to 5 digits; tolerance 1e-5) and against the
// mpmath quadrature of testdata/oracles.py (tolerance 1e-13 absolute),
// including both sides of the series/closed-form switch at λ = 0.01.
func TestTruncExpOracle(t *testing.T) {
	e := mustParse(t, "truncexp:0.1,1,2,5,10")
	spec := []float64{0.49167, 0.41802, 0.34348, 0.19322, 0.09995}
	for a, mu := range e.Means() {
		if math.Abs(mu-spec[a]) > 1e-5 {
			t.Errorf("arm %d: mean %.8f, SPEC oracle %.5f", a, mu, spec[a])
		}
	}
	mp := []struct{ lambda, mean float64 }{
		{1e-300, 0.5},
		{1e-8, 0.4999999991666666666666667},
		{0.001, 0.4999166666680555555224868},
		{0.00999, 0.4991675013847230971312584},
		{0.01, 0.4991666680555522486855159},
		{0.01001, 0.4991658347263897335069694},
		{0.1, 0.4916680552249503759539227},
		{1, 0.418023293130673575614998},
		{2, 0.3434823572503343481819194},
		{5, 0.1932163450936957689039801},
		{10, 0.09995459800899031223167104},
		{50, 0.01999999999999999999980713},
		{1000, 0.001},
	}
	for _, c := range mp {
		if got := TruncExpMean(c.lambda); math.Abs(got-c.mean) > 1e-13 {
			t.Errorf("TruncExpMean(%g) = %.17g, mpmath %.17g", c.lambda, got, c.mean)
		}
	}
}

// simpson integrates f on [lo,hi] with the composite Simpson rule on n
// (even) intervals.
func simpson(f func(float64) float64, lo, hi float64, n int) float64 {
	h := (hi - lo) / float64(n)
	s := f(lo) + f(hi)
	for i := 1; i < n; i++ {
		w := 2.0
		if i%2 == 1 {
			w = 4
		}
		s += w * f(lo+float64(i)*h)
	}
	return s * h / 3
}

// TestClippedGaussianMean checks the closed form against (1) numerical
// integration of the survival function, E[Y] = ∫₀¹ P(X > y) dy, by
// composite Simpson on 200 000 intervals (smooth integrand; tolerance 1e-9),
// and (2) the mpmath values of testdata/oracles.py (tolerance 1e-12, 1e-9
// for s ≥ 10 where the φ difference cancels).
func TestClippedGaussianMean(t *testing.T) {
	cases := []struct{ m, s, mp float64 }{
		{0.5, 0.1, 0.5},
		{0.9, 0.1, 0.8916684529412313701629185},
		{0.05, 0.3, 0.1462782492200445916229237},
		{1, 1, 0.6843731901862536204431167},
		{0, 0.5, 0.1952257888923015201949736},
		{0.3, 0.001, 0.3},
		{0.7, 10, 0.507974991108644293192976},
		{0.95, 0.2, 0.8927311000276612506207688},
		{0.5, 1e-9, 0.5},
		{0.2, 1e6, 0.4999998803173158795769786},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("m=%g,s=%g", c.m, c.s), func(t *testing.T) {
			got := ClippedGaussianMean(c.m, c.s)
			tol := 1e-12
			if c.s >= 10 {
				tol = 1e-9
			}
			if math.Abs(got-c.mp) > tol {
				t.Errorf("ClippedGaussianMean = %.17g, mpmath %.17g", got, c.mp)
			}
			if c.s < 1e-3 {
				return // Simpson needs h ≪ s; the mpmath check covers it
			}
			surv := func(y float64) float64 { return normCDF(-(y - c.m) / c.s) }
			if q := simpson(surv, 0, 1, 200_000); math.Abs(got-q) > 1e-9 {
				t.Errorf("ClippedGaussianMean = %.12g, Simpson %.12g", got, q)
			}
		})
	}
	// The clipped mean is not the location when clipping is asymmetric.
	e := mustParse(t, "gaussian:sd=0.3;0.05")
	if mu := e.Means()[0]; math.Abs(mu-0.05) < 0.05 {
		t.Errorf("gaussian:sd=0.3;0.05 mean %v: clipping ignored", mu)
	}
}

// TestBetaQuantile checks the Beta inversion at the median and quartiles
// of Beta(2,2) (symmetric: median 1/2) and Beta(1,1) (uniform: identity).
func TestBetaQuantile(t *testing.T) {
	e := mustParse(t, "beta:1/1,2/2")
	// Drive Pull with a source whose uniform is known: W>>12 = k gives U = (k+1/2)/2^52.
	for _, k := range []uint64{0, 1 << 50, 1 << 51, 3 << 50, 1<<52 - 1} {
		u := (float64(k) + 0.5) * 0x1p-52
		r := rand.New(constSource(k << 12))
		if x := e.Pull(0, r); math.Abs(x-u) > 1e-12 {
			t.Errorf("Beta(1,1) quantile at %v = %v", u, x)
		}
	}
	r := rand.New(constSource(1 << 63)) // U = 1/2 + 2^-53
	if x := e.Pull(1, r); math.Abs(x-0.5) > 1e-12 {
		t.Errorf("Beta(2,2) median = %v", x)
	}
	// The closed forms for a = 1 or b = 1 invert the CDF: I_x(a,b) = U to
	// 1e-13 in probability (x-space comparison with InvRegIncBeta is not
	// used: Cephes loses accuracy in x in the extreme tails).
	e = mustParse(t, "beta:3/1,1/2.5,0.2/1,1/0.2")
	a, b := e.(*Beta).Params()
	for arm := range e.K() {
		for _, k := range []uint64{0, 1, 1 << 40, 1 << 51, 3 << 50, 1<<52 - 2, 1<<52 - 1} {
			u := (float64(k) + 0.5) * 0x1p-52
			x := e.Pull(arm, rand.New(constSource(k<<12)))
			if p := mathext.RegIncBeta(a[arm], b[arm], x); math.Abs(p-u) > 1e-13 {
				t.Errorf("Beta(%g,%g) at U = %v: quantile %v has CDF %v", a[arm], b[arm], u, x, p)
			}
		}
	}
}

// constSource always returns the same word.
type constSource uint64

func (c constSource) Uint64() uint64 { return uint64(c) }

// TestOneDrawPerPull checks the coupling contract: every Pull consumes
// exactly one Uint64 from its stream, whatever the kind and arm.
func TestOneDrawPerPull(t *testing.T) {
	for _, spec := range testSpecs {
		e := mustParse(t, spec)
		for a := range e.K() {
			p := rand.NewPCG(7, uint64(a))
			q := *p
			r, ref := rand.New(p), rand.New(&q)
			for range 100 {
				e.Pull(a, r)
				ref.Uint64()
			}
			if x, y := r.Uint64(), ref.Uint64(); x != y {
				t.Errorf("%s arm %d: stream out of step after 100 pulls", spec, a)
			}
		}
	}
}

// TestComonotone checks that, with the same uniform, an arm that is larger
// in the likelihood-ratio order never pays less: the rewards are quantiles
// at a common U.
func TestComonotone(t *testing.T) {
	specs := []string{ // arms listed from stochastically largest to smallest
		"bernoulli:0.9,0.5,0.4,0",
		"fixed:1,0.7,0.3",
		"truncexp:0.1,1,2,5,10",
		"gaussian:sd=0.2;0.9,0.5,0.1",
		"beta:5/1,3/4,2/5",
	}
	for _, spec := range specs {
		e := mustParse(t, spec)
		xs := make([]float64, e.K())
		for seed := range uint64(2000) {
			for a := range xs {
				xs[a] = e.Pull(a, rand.New(rand.NewPCG(seed, 0)))
			}
			for a := 1; a < len(xs); a++ {
				if xs[a] > xs[a-1] {
					t.Fatalf("%s seed %d: arm %d pays %v > arm %d pays %v", spec, seed, a, xs[a], a-1, xs[a-1])
				}
			}
		}
	}
}

// TestPullAllocs checks that Pull, called through the interface, does not
// allocate.
func TestPullAllocs(t *testing.T) {
	for _, spec := range testSpecs {
		e := mustParse(t, spec)
		r := rand.New(rand.NewPCG(1, 1))
		k := e.K()
		a := 0
		if n := testing.AllocsPerRun(1000, func() {
			e.Pull(a, r)
			a = (a + 1) % k
		}); n != 0 {
			t.Errorf("%s: Pull allocates %v times per call", spec, n)
		}
	}
}

// TestMeansBestK checks K, Best and that Means returns a copy.
func TestMeansBestK(t *testing.T) {
	for _, spec := range testSpecs {
		e := mustParse(t, spec)
		m := e.Means()
		if len(m) != e.K() {
			t.Errorf("%s: len(Means()) = %d, K() = %d", spec, len(m), e.K())
		}
		if e.Best() != slices.Max(m) {
			t.Errorf("%s: Best() = %v, max mean %v", spec, e.Best(), slices.Max(m))
		}
		m[0] = -1
		if e.Means()[0] == -1 {
			t.Errorf("%s: Means() exposes internal state", spec)
		}
	}
}

// TestPullPanicsOnBadArm checks that an arm out of range is a programmer
// error.
func TestPullPanicsOnBadArm(t *testing.T) {
	for _, spec := range testSpecs {
		e := mustParse(t, spec)
		for _, a := range []int{-1, e.K()} {
			func() {
				defer func() {
					if recover() == nil {
						t.Errorf("%s: Pull(%d) did not panic", spec, a)
					}
				}()
				e.Pull(a, rand.New(rand.NewPCG(1, 1)))
			}()
		}
	}
}

// TestConstructorsCopy checks that constructors copy their arguments.
func TestConstructorsCopy(t *testing.T) {
	v := []float64{0.2, 0.4}
	e, err := NewBernoulli(v)
	if err != nil {
		t.Fatal(err)
	}
	v[0] = 0.9
	if e.Means()[0] != 0.2 {
		t.Error("NewBernoulli keeps a reference to its argument")
	}
}

// TestTruncExpTinyRate checks the expansion used below λ = 1e-8 against the
// closed-form quantile, which is still accurate there (1 − e^{−λ} is a
// normal float): they agree to 1e-15.
func TestTruncExpTinyRate(t *testing.T) {
	for _, l := range []float64{9.99e-9, 1e-9, 1e-12} {
		e, err := NewTruncExp([]float64{l})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []uint64{0, 1, 1 << 40, 1 << 51, 3 << 50, 1<<52 - 1} {
			u := (float64(k) + 0.5) * 0x1p-52
			got := e.Pull(0, rand.New(constSource(k<<12)))
			want := -math.Log1p(-u*-math.Expm1(-l)) / l
			if math.Abs(got-want) > 1e-15 {
				t.Errorf("λ = %g, U = %v: expansion %v, closed form %v", l, u, got, want)
			}
		}
	}
}
