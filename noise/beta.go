package noise

import (
	"math"
	"math/rand/v2"
)

// Beta returns a draw from the Beta(a, b) distribution (mean a/(a+b)) for
// simulation, as X/(X+Y) with independent X ~ Gamma(a, 1) and Y ~ Gamma(b, 1)
// drawn by Marsaglia–Tsang (see [Gamma]). When a < 1 or b < 1 the boosted
// draws are combined in log space, 1/(1 + e^{ln(Y/X)}), so that small shapes
// (Jeffreys' Beta(½, ½) prior, or smaller) never give 0/0 when both Gamma
// draws underflow.
//
// Contract: a > 0 and b > 0, otherwise it panics (programmer error). Cost:
// two Gamma draws (40–60 ns on PCG for a, b ≥ 1, ≈ 140 ns for a = b = ½;
// BENCHMARKS.txt), no allocation. r is used by one goroutine at a time.
//
// Privacy: simulation only; Beta Thompson sampling may use it on a strong
// generator because only the argmax leaves the system (docs/privacy-model.md rule 4).
func Beta(r *rand.Rand, a, b float64) float64 {
	if !(a > 0) || !(b > 0) {
		panic("noise: Beta needs a > 0 and b > 0")
	}
	if a >= 1 && b >= 1 {
		x := marsagliaTsang(r, a)
		y := marsagliaTsang(r, b)
		return x / (x + y)
	}
	// With X = G_a·U₁^{1/a} and Y = G_b·U₂^{1/b} (the boost of [Gamma] for
	// shapes below 1, G ~ Gamma(shape+1)), ln(Y/X) = ln(G_b/G_a) +
	// ln(U₂)/b − ln(U₁)/a, and X/(X+Y) = 1/(1 + e^{ln(Y/X)}).
	var boost float64
	if a < 1 {
		a++
		boost -= math.Log(openUniform(r)) / (a - 1)
	}
	if b < 1 {
		b++
		boost += math.Log(openUniform(r)) / (b - 1)
	}
	x := marsagliaTsang(r, a)
	y := marsagliaTsang(r, b)
	return 1 / (1 + math.Exp(math.Log(y/x)+boost))
}
