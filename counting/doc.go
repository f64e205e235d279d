// Package counting is dpbandit's continual counter: the binary tree
// mechanism ("tree-based aggregation") of Dwork, Naor, Pitassi & Rothblum
// (2010) and Chan, Shi & Song (2011), with Laplace (pure ε-DP) or Gaussian
// (GDP / zCDP) node noise and, as an option, Honaker's (2015) efficient
// GLS/BLUE estimate of each prefix sum.
//
// It is the one tree counter of the project (docs/accountant.md §2.5): Mishra &
// Thakurta's private UCB and TS keep one [Counter] per arm for the reward
// sums ([MT] Alg 1; docs/tree-based.md §1.7–1.8), and the private LinUCB/LinTS keep one [Counter]
// per scalar stream (each entry of the Gram matrix and of b, [MT] §5.1; docs/tree-based.md §1.9).
// There is no vector-valued variant.
//
// # The mechanism
//
// A counter of capacity T accepts T leaves x₁, …, x_T, each in the declared
// interval [Lower, Lower+Δ], and after t leaves releases an estimate of the
// prefix sum x₁ + … + x_t. It is built on the dyadic intervals of [1, T]:
// level j holds the nodes (m·2ʲ, (m+1)·2ʲ], and a node is completed (its
// noisy sum is drawn) when its last leaf arrives. With L = ⌊log₂T⌋ + 1 =
// bits.Len(T) levels (so T = 2ᵏ has L = k+1 levels and the root is used at
// t = T), every leaf lies in at most L nodes, and the prefix [1, t] is the
// disjoint union of popcount(t) completed nodes (docs/accountant.md §2.5, pitfall 9).
//
// Each node's noise is drawn once, when the node is completed, and kept
// (docs/privacy-model.md rule 5): [Counter.Sum] is a deterministic function of
// the kept values, and [Counter.State] / [Restore] persist and restore them
// without redrawing anything.
//
// # Privacy (docs/accountant.md §2.5, §3 T8)
//
// Neighbouring streams differ in one leaf (event-level substitution,
// docs/privacy-model.md), which moves by at most Δ, so at most L released node values move, each
// by at most Δ: the vector of released nodes has ℓ₁ sensitivity LΔ and ℓ₂
// sensitivity √L·Δ.
//
//   - Laplace node noise Lap(b) with b = LΔ/ε gives ε-DP (pure).
//   - Gaussian node noise N(0, σ²) gives ρ = LΔ²/(2σ²) zCDP, and, because the
//     mechanism is a Gaussian mechanism on a vector, exactly μ-GDP with
//     μ = √L·Δ/σ = √(2ρ).
//
// Every estimate, including the GLS one, is post-processing of the released
// nodes and costs nothing more. The guarantee covers the whole output stream
// of the counter (all T prefix sums); it is computed from the counter's own
// parameters, never from the sampler.
//
// # Noise
//
// The counter asks a [Noise] for its node [Mechanism] with the scale and the
// per-node sensitivity it computed, so a sampler can never be mis-scaled.
// [SimNoise] is the fast floating-point sampler on a seeded *rand.Rand for
// simulation; [SecureNoise] releases nodes with the grid-snapped discrete
// Laplace / discrete Gaussian of package noise, as docs/privacy-model.md rule 4
// requires for every value the service keeps or releases.
//
// # References
//
//   - [DNPR10] C. Dwork, M. Naor, T. Pitassi, G. N. Rothblum. Differential
//     privacy under continual observation. STOC 2010.
//   - [CSS11] T.-H. H. Chan, E. Shi, D. Song. Private and continual release
//     of statistics. ACM TISSEC 14(3), 2011 (the binary mechanism).
//   - [Hon15] J. Honaker. Efficient use of differentially private binary
//     trees. TPDP 2015.
//   - [HRMS10] M. Hay, V. Rastogi, G. Miklau, D. Suciu. Boosting the accuracy
//     of differentially private histograms through consistency. VLDB 2010
//     (the bottom-up weights of the BLUE on a complete tree).
//   - [MT15] N. Mishra, A. Thakurta. (Nearly) optimal differentially private
//     stochastic multi-arm bandits. UAI 2015 (§2.1, Alg. 1–2).
//   - [KMST21] P. Kairouz et al. Practical and private (deep) learning
//     without sampling or shuffling (DP-FTRL). ICML 2021.
//   - [CKS20] C. L. Canonne, G. Kamath, T. Steinke. The discrete Gaussian for
//     differential privacy. NeurIPS 2020.
//   - [DRS22] J. Dong, A. Roth, W. J. Su. Gaussian differential privacy.
//     JRSSB 84(1), 2022.
package counting
