package eval

import (
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
)

// Interval is a two-sided confidence interval.
type Interval struct {
	Lo, Hi float64
}

// z975 is the standard normal's 0.975 quantile.
const z975 = 1.959963984540054

// NormalInterval is the 95% normal-approximation interval of the mean of
// per-round contributions c: mean ± z·sd/√n with the sample standard
// deviation (n − 1 in the denominator).
func NormalInterval(c []float64) Interval {
	n := len(c)
	m := mean(c)
	if n < 2 {
		return Interval{math.NaN(), math.NaN()}
	}
	var ss kahan
	for _, v := range c {
		d := v - m
		ss.add(d * d)
	}
	h := z975 * math.Sqrt(ss.sum()/float64(n-1)/float64(n))
	return Interval{m - h, m + h}
}

// Ratio is one bootstrapped statistic: Σ c_i Num_i / Σ c_i Den_i over the
// resampled multiplicities c, with Den nil meaning Σ c_i (a mean).
type Ratio struct {
	Num, Den []float64
}

// poissonTable maps a 16-bit uniform to a Poisson(1) count: count k takes
// round(65536·P(k)) consecutive entries (k = 0..8; P(k ≥ 9) ≈ 1e-6 is
// below the table's resolution). The largest entry absorbs the rounding so
// the table is full.
var poissonTable = func() *[1 << 16]uint8 {
	var t [1 << 16]uint8
	p, at := math.Exp(-1), 0
	for k := 0; k <= 8; k++ {
		m := int(math.Round(65536 * p))
		if k == 0 {
			m = 65536 - func() int {
				s, q := 0, math.Exp(-1)
				for j := 1; j <= 8; j++ {
					q /= float64(j)
					s += int(math.Round(65536 * q))
				}
				return s
			}()
		}
		for j := 0; j < m && at < len(t); j++ {
			t[at] = uint8(k)
			at++
		}
		p /= float64(k + 1)
	}
	return &t
}()

// Bootstrap draws r bootstrap replicates of each statistic and returns, per
// statistic, the sorted replicates (a replicate whose denominator is zero
// is dropped).
//
// The resampling is the Poisson bootstrap (Hanley & MacGibbon 2006;
// Chamandy et al. 2012): each replicate gives every round an independent
// Poisson(1) multiplicity instead of drawing n rounds with replacement; the
// two agree asymptotically, and the Poisson form streams over the rounds
// in order, so the work is O(r·n) on data that stays in cache. Replicate j
// uses its own PCG stream (seed, j), so the result does not depend on how
// many goroutines run it; they split the replicates among themselves.
func Bootstrap(stats []Ratio, r int, seed uint64) [][]float64 {
	if len(stats) == 0 || r <= 0 {
		return make([][]float64, len(stats))
	}
	n := len(stats[0].Num)
	// The distinct columns, and for each statistic its numerator and
	// denominator column (-1: the multiplicity sum).
	var cols [][]float64
	colOf := func(x []float64) int {
		if x == nil {
			return -1
		}
		for k, c := range cols {
			if len(c) > 0 && &c[0] == &x[0] && len(c) == len(x) {
				return k
			}
		}
		cols = append(cols, x)
		return len(cols) - 1
	}
	num := make([]int, len(stats))
	den := make([]int, len(stats))
	for s, st := range stats {
		num[s], den[s] = colOf(st.Num), colOf(st.Den)
	}
	nc := len(cols)
	// sums[j*(nc+1)+k]: replicate j's Σ c·cols[k]; k = nc: Σ c.
	sums := make([]float64, r*(nc+1))
	workers := min(runtime.GOMAXPROCS(0), r)
	const chunk = 2048
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*r/workers, (w+1)*r/workers
		wg.Go(func() {
			gens := make([]rand.PCG, hi-lo)
			for j := range gens {
				gens[j].Seed(seed, uint64(lo+j))
			}
			cnt := make([]float64, chunk)
			tab := poissonTable
			for start := 0; start < n; start += chunk {
				end := min(start+chunk, n)
				m := end - start
				c := cnt[:m]
				for j := range gens {
					g := &gens[j]
					var total float64
					i := 0
					for ; i+4 <= m; i += 4 {
						u := g.Uint64()
						c0 := float64(tab[uint16(u)])
						c1 := float64(tab[uint16(u>>16)])
						c2 := float64(tab[uint16(u>>32)])
						c3 := float64(tab[uint16(u>>48)])
						c[i], c[i+1], c[i+2], c[i+3] = c0, c1, c2, c3
						total += (c0 + c1) + (c2 + c3)
					}
					if i < m {
						u := g.Uint64()
						for ; i < m; i++ {
							c[i] = float64(tab[uint16(u)])
							total += c[i]
							u >>= 16
						}
					}
					row := sums[(lo+j)*(nc+1):]
					row[nc] += total
					for k, col := range cols {
						row[k] += dot(c, col[start:end])
					}
				}
			}
		})
	}
	wg.Wait()
	out := make([][]float64, len(stats))
	for s := range stats {
		reps := make([]float64, 0, r)
		for j := range r {
			row := sums[j*(nc+1):]
			d := row[nc]
			if den[s] >= 0 {
				d = row[den[s]]
			}
			if d == 0 {
				continue
			}
			reps = append(reps, row[num[s]]/d)
		}
		slices.Sort(reps)
		out[s] = reps
	}
	return out
}

// dot is Σ a_i b_i, four-way unrolled.
func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float64
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * b[i]
		s1 += a[i+1] * b[i+1]
		s2 += a[i+2] * b[i+2]
		s3 += a[i+3] * b[i+3]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// PercentileInterval returns the central 95% of sorted replicates, by
// linear interpolation between order statistics (NumPy's default
// percentile, which OBP's bootstrap intervals use).
func PercentileInterval(sorted []float64) Interval {
	if len(sorted) == 0 {
		return Interval{math.NaN(), math.NaN()}
	}
	return Interval{quantile(sorted, 0.025), quantile(sorted, 0.975)}
}

func quantile(sorted []float64, q float64) float64 {
	h := q * float64(len(sorted)-1)
	lo := int(math.Floor(h))
	if lo+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}
