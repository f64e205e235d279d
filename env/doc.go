// Package env provides the stochastic K-armed environments of the
// dpbandit simulator: Bernoulli, truncated exponential on [0,1], clipped
// Gaussian, Beta, and fixed (deterministic) arms, a spec parser for them,
// and the derivation of reproducible, paired random streams.
//
// # Model
//
// docs/privacy-model.md uses a reward-table model: round t carries a reward vector
// X_t ∈ [0,1]^K and the learner observes only X_t(a_t). An [Env] realises
// that table lazily: [Env.Pull] draws X_t(a) for the arm a that was
// actually played, using the environment stream passed to it.
//
// # Common random numbers (the coupling)
//
// Every Pull, of every kind and every arm, consumes exactly one value
// W = r.Uint64() from the stream it is given, maps it to the open-interval
// uniform
//
//	U = (⌊W / 2^12⌋ + 1/2) / 2^52 ∈ [2^−53, 1 − 2^−53]
//
// (exact in float64; the grid is symmetric, so 1 − U is exact and has the
// same law as U) and returns F_a⁻¹(U), the quantile function of arm a at U:
//
//	bernoulli  X = 1 if 1 − U < μ_a, else 0
//	truncexp   X = −ln(1 − U(1 − e^{−λ_a}))/λ_a
//	gaussian   X = clamp(m_a + s_a·Φ⁻¹(U), 0, 1)
//	beta       X = I⁻¹_U(a_a, b_a) (inverse regularised incomplete beta)
//	fixed      X = μ_a (U is drawn and discarded)
//
// The Bernoulli rule is the familiar "U < μ_a" applied to the reflected
// uniform 1 − U; P(X = 1) = μ_a up to 2^−53, and X is non-decreasing in U
// like every other kind.
//
// Consequences:
//   - The t-th Pull on a stream uses the t-th uniform, whatever arm was
//     chosen and whatever happened before. Two policies run on copies of
//     the same environment stream therefore see the same U_1, U_2, …: a
//     paired comparison with common random numbers, and the realised
//     reward table X_t(a) = F_a⁻¹(U_t) is the same for both.
//   - Within a round the coupling across arms is comonotone: if arm a is
//     stochastically larger than arm b and both are of a kind whose
//     quantiles are ordered (Bernoulli, fixed, truncated exponential,
//     Gaussian with a common s.d., Beta with a ≥ a', b ≤ b'), then
//     X_t(a) ≥ X_t(b) in every round. This reduces the variance of
//     differences between policies; it does not change any arm's marginal
//     distribution, which is all a policy can observe.
//   - Pull never allocates and never consumes a variable number of draws
//     (no rejection sampling), so streams cannot drift out of step.
//
// # Streams
//
// [Streams] derives the two random streams of one simulation cell. The
// environment stream depends on (specHash, run) only, so every policy (cell)
// in the same run sees the same reward table; the policy stream depends on
// (specHash, cell, run). See [StreamSeeds] for the exact mixing function.
//
// # Concurrency
//
// Environments are immutable after construction: one Env may be shared by
// any number of goroutines, provided each passes its own *rand.Rand.
package env
