package eval

import "math"

// dotsWidth is the number of columns the bootstrap's kernel sweeps at once.
const dotsWidth = 5

// dots2x5 returns, for the weight vectors w0 and w1 (Poisson multiplicities) and the five columns x = cols[0..4], the sums Σ_i w0_i·x_i
// (s[0..4]), Σ_i w1_i·x_i (s[5..9]), Σ_i w0_i (s[10]) and Σ_i w1_i (s[11]).
// Every vector has the length of w0.
//
// The summation order is part of the contract, so that the AVX2 kernel
// (dots_amd64.s) and the portable loop give the same bits: over the first
// n4 = n − n mod 4 rounds, lane l ∈ {0..3} sums the rounds i ≡ l (mod 4)
// in order with fused multiply-adds; the lanes are combined as
// (l0 + l2) + (l1 + l3); the last n mod 4 rounds are then added in order,
// again with fused multiply-adds. The weight sums are exact (integers far
// below 2⁵³), whatever the order.
func dots2x5(w0, w1 []uint16, cols *[dotsWidth][]float64) [12]float64 {
	return dots2x5Using(useAVX2, w0, w1, cols)
}

// dots2x5Using is dots2x5 with the kernel chosen: avx selects the AVX2
// kernel (only where useAVX2 holds), else the portable loop.
func dots2x5Using(avx bool, w0, w1 []uint16, cols *[dotsWidth][]float64) (s [12]float64) {
	n := len(w0)
	w1 = w1[:n]
	for k := range cols {
		cols[k] = cols[k][:n]
	}
	n4 := n &^ 3
	if n4 > 0 {
		if avx {
			dots2x5AVX(&w0[0], &w1[0], &cols[0][0], &cols[1][0], &cols[2][0], &cols[3][0], &cols[4][0], n4, &s)
		} else {
			s = dots2x5Lanes(w0[:n4], w1[:n4], cols)
		}
	}
	for i := n4; i < n; i++ {
		x, y := float64(w0[i]), float64(w1[i])
		for k := range dotsWidth {
			s[k] = math.FMA(x, cols[k][i], s[k])
			s[dotsWidth+k] = math.FMA(y, cols[k][i], s[dotsWidth+k])
		}
		s[10] += x
		s[11] += y
	}
	return s
}

// dots2x5Lanes is the portable form of dots2x5AVX: len(w0) is a multiple
// of 4, and the result follows dots2x5's summation order exactly.
func dots2x5Lanes(w0, w1 []uint16, cols *[dotsWidth][]float64) (s [12]float64) {
	var acc [10][4]float64
	var t0, t1 float64
	for i := 0; i < len(w0); i += 4 {
		for l := range 4 {
			x, y := float64(w0[i+l]), float64(w1[i+l])
			t0 += x
			t1 += y
			for k := range dotsWidth {
				v := cols[k][i+l]
				acc[k][l] = math.FMA(x, v, acc[k][l])
				acc[dotsWidth+k][l] = math.FMA(y, v, acc[dotsWidth+k][l])
			}
		}
	}
	for k := range acc {
		a := &acc[k]
		s[k] = (a[0] + a[2]) + (a[1] + a[3])
	}
	s[10], s[11] = t0, t1
	return s
}
