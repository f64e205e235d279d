package counting

import (
	"fmt"
	"math"
	"math/bits"
)

// Honaker's efficient tree, streaming form (Honaker 2015; docs/accountant.md §2.5,
// T9; the estimator option of Kairouz et al. 2021's DP-FTRL).
//
// Task. After t leaves, estimate the prefix sum S(t) = x₁ + … + x_t by the
// best linear unbiased estimator (BLUE, = GLS, since node noises are i.i.d.)
// from every node completed by t, that is every dyadic node ending at or
// before t. It is post-processing of released values, so it costs no
// privacy.
//
// 1. Which nodes are completed. Write t = 2^{k₁} + 2^{k₂} + … (k₁ > k₂ > …).
// The decomposition blocks B₁ = (0, 2^{k₁}], B₂ = (2^{k₁}, 2^{k₁}+2^{k₂}], …
// are dyadic, and a dyadic node I ending ≤ t lies inside one block: dyadic
// intervals are nested or disjoint, and a node strictly containing Bᵢ
// contains Bᵢ's parent, whose right half ends after t (Bᵢ starts at a
// multiple of 2^{kᵢ+1}, so it is a left child, and fewer than 2^{kᵢ} leaves
// follow it). So the completed nodes are exactly the complete subtrees
// below the popcount(t) blocks, which cover disjoint leaves with
// independent noise, and the BLUE of S(t) is the sum of the BLUEs of the
// block totals, each from its own subtree.
//
// 2. BLUE of the total of a complete subtree of height k (2ᵏ leaves, all
// 2ᵏ⁺¹ − 1 nodes observed with unit noise variance). Let Vₖ be its variance;
// V₀ = 1. A linear estimator uᵀy is unbiased for the total of v iff Aᵀu = 1
// on v's leaves (A the node×leaf incidence). Split u into u_v (the root's
// own weight) and the parts u_l, u_r on the two child subtrees: unbiasedness
// says u_l/(1 − u_v) is unbiased for the left child's total, so
// ‖u_l‖² ≥ (1 − u_v)²V_{k−1}, and likewise on the right. Hence
//
//	Var ≥ u_v² + 2(1 − u_v)²V_{k−1},
//
// minimised at u_v = 2V_{k−1}/(1 + 2V_{k−1}) with value
// Vₖ = 2V_{k−1}/(1 + 2V_{k−1}), and attained by
//
//	ẑ_v = wₖ·y_v + (1 − wₖ)·(ẑ_l + ẑ_r),  wₖ = Vₖ = 2ᵏ/(2ᵏ⁺¹ − 1),
//
// (induction: Vₖ = 2ᵏ/(2ᵏ⁺¹ − 1) solves the recursion). These are the
// bottom-up weights of Hay, Rastogi, Miklau & Suciu (2010) for the
// binary case, and Honaker's (2015) upward pass.
//
// 3. Streaming. ẑ of a node depends only on its own subtree, so it is
// computed once, when the node is completed, from its children's ẑ; the
// estimate at t is the sum of the ẑ of the popcount(t) blocks, the same
// O(1)-amortised bookkeeping as the plain tree (see Counter.add). The error
// variance at t is Σᵢ V_{kᵢ} times the node variance; for T = 8 this gives
// 1, 2/3, 5/3, 4/7, 11/7, 26/21, 47/21, 8/15 (docs/accountant.md T9, reproduced by
// the tests together with a brute-force GLS on the released nodes).
//
// The top-down pass of Honaker's estimator (which improves a node using
// information from outside its subtree) has nothing to add here: no
// completed node lies outside the blocks' subtrees.

// glsWeights returns, for levels 0..L−1, the weight wₖ = 2ᵏ/(2ᵏ⁺¹ − 1) of a
// node's own released value and 1 − wₖ = (2ᵏ − 1)/(2ᵏ⁺¹ − 1) of the sum of
// its children's estimates (level 0 has no children: w₀ = 1).
func glsWeights(levels int) (own, kids []float64) {
	own, kids = make([]float64, levels), make([]float64, levels)
	for k := range levels {
		own[k] = glsBlockVariance(k)
		h := math.Ldexp(1, -k) // 2⁻ᵏ
		kids[k] = (1 - h) / (2 - h)
	}
	return own, kids
}

// glsBlockVariance returns Vₖ = 2ᵏ/(2ᵏ⁺¹ − 1) = 1/(2 − 2⁻ᵏ), the variance of
// the BLUE of a complete height-k subtree's total with unit node variance.
func glsBlockVariance(k int) float64 { return 1 / (2 - math.Ldexp(1, -k)) }

// GLSVariance returns the variance of the streaming GLS estimate of the
// prefix sum [1, t] with unit node variance: Σ over the set bits k of t of
// 2ᵏ/(2ᵏ⁺¹ − 1) (docs/accountant.md T9; the Appendix's tree_online_gls_var(T, t),
// which does not depend on T ≥ t). Multiply by the node variance for a
// counter's error variance. GLSVariance(0) = 0. It panics if t < 0. Cost:
// popcount(t) terms.
func GLSVariance(t int) float64 {
	if t < 0 {
		panic(fmt.Sprintf("counting: GLSVariance(%d) needs t ≥ 0", t))
	}
	v := 0.0
	for m := uint(t); m != 0; m &= m - 1 {
		v += glsBlockVariance(bits.TrailingZeros(m))
	}
	return v
}
