package eval

import (
	"math"
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
// draws from its own four xoshiro256** streams (seedStreams(seed, j)), so
// the result does not depend on how many goroutines run it; they split the
// replicates among themselves. The multiplicities come from a 16-bit
// uniform through poissonTable (fillPoisson), and the weighted sums from
// dots2x5, whose AVX2 and portable forms give the same bits.
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
	// Columns are swept five at a time (a short last group is padded with
	// a zero column), two replicates at a time, by dots2x5: each column
	// value loaded serves both replicates.
	nc := len(cols)
	ng := (nc + dotsWidth - 1) / dotsWidth
	var zero []float64
	if nc%dotsWidth != 0 {
		zero = make([]float64, n)
	}
	// sums[j*(nc+1)+k]: replicate j's Σ c·cols[k]; k = nc: Σ c.
	sums := make([]float64, r*(nc+1))
	pairs := (r + 1) / 2
	workers := min(runtime.GOMAXPROCS(0), pairs)
	const chunk = 2048
	var wg sync.WaitGroup
	for w := range workers {
		// Replicate pairs are split among the workers.
		lo, hi := 2*(w*pairs/workers), min(2*((w+1)*pairs/workers), r)
		wg.Go(func() {
			gens := make([]poissonStreams, hi-lo)
			for j := range gens {
				gens[j] = seedStreams(seed, lo+j)
			}
			c0 := make([]uint16, chunk)
			c1 := make([]uint16, chunk)
			var group [dotsWidth][]float64
			for start := 0; start < n; start += chunk {
				end := min(start+chunk, n)
				m := end - start
				for j := 0; j < len(gens); j += 2 {
					// The streams step 16 counts at a time; a last
					// chunk's unused counts are drawn and dropped.
					m16 := (m + 15) &^ 15
					w0, w1 := c0[:m], c1[:m]
					fillPoisson(&gens[j], c0[:m16])
					two := j+1 < len(gens)
					if two {
						fillPoisson(&gens[j+1], c1[:m16])
					} else {
						clear(w1) // an odd last replicate: its partner weighs nothing
					}
					row0 := sums[(lo+j)*(nc+1):]
					var row1 []float64
					if two {
						row1 = sums[(lo+j+1)*(nc+1):]
					}
					for g := range ng {
						for k := range group {
							if c := g*dotsWidth + k; c < nc {
								group[k] = cols[c][start:end]
							} else {
								group[k] = zero[start:end]
							}
						}
						s := dots2x5(w0, w1, &group)
						if g == 0 {
							row0[nc] += s[10]
							if two {
								row1[nc] += s[11]
							}
						}
						for k := range dotsWidth {
							if c := g*dotsWidth + k; c < nc {
								row0[c] += s[k]
								if two {
									row1[c] += s[dotsWidth+k]
								}
							}
						}
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
