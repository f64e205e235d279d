// Package ctxenv provides the contextual (linear) bandit environments of the
// dpbandit simulator: the synthetic linear/logistic problem of docs/reproductions.md E12 ([ADA] §4),
// and dataset-backed problems (UCI mushroom, UCI statlog shuttle, a
// per-item Bernoulli simulator fitted on the Open Bandit Dataset sample, and
// the semi-synthetic MovieLens and Jester rating bandits of [Ratings], with
// item features from [TruncatedSVD] or linear.DPSVD on a training split).
// The K-armed environments live in package env; this package shares its
// error sentinel ([ErrSpec] is env.ErrSpec), its [Kind] help record and its
// stream derivation (env.Streams).
//
// # Model
//
// Each round t the environment offers K candidate feature vectors
// x_{t,1}, …, x_{t,K} ∈ R^d ([Env.Next]); the learner picks one index i and
// observes the reward X_t(i) ∈ [0,1] ([Env.Reward]). [Env.Mean] gives
// E[X_t(i) | round t], so the pseudo-regret of round t is
// [Env.Best] − Mean(i). Every candidate vector has Euclidean norm ≤ 1, as
// the private linear policies assume (docs/privacy-model.md rule 6).
//
// # Randomness and common random numbers
//
// [Env.Next] consumes a fixed number of r.Uint64() values per round that does
// not depend on anything the learner did, and draws everything random about
// the round, including the one reward uniform U_t; [Env.Reward] draws
// nothing and returns F_i⁻¹(U_t). Hence:
//
//   - two policies run on copies of the same environment stream (env.Streams
//     gives every cell of a run the same stream) see the same candidate sets
//     and the same reward table X_t(·): a paired comparison with common
//     random numbers, as in package env;
//   - Reward may be called for several candidates of the same round (for
//     example to evaluate several policies on one environment instance, or
//     to measure realised regret) without moving the stream out of step.
//
// The draws are: a uniform index in [0, n) from one word W as ⌊W·n/2⁶⁴⌋ (the
// multiply-shift map; its bias, at most n/2⁶⁴, is negligible and it never
// rejects), and the open-interval uniform U = (⌊W/2¹²⌋ + ½)/2⁵² of package
// env. A Bernoulli(μ) reward is 1 if 1 − U < μ, else 0, exactly as in
// env.Bernoulli. Draws per round:
//
//	synthetic-linear   k (a partial Fisher–Yates shuffle of the pool) + 1 (U)
//	mushroom           1 (the row) + 1 (U)
//	shuttle            1 (the row) + 1 (U, drawn and unused: rewards are deterministic)
//	obd                k if k < items (partial Fisher–Yates), else 0; + 1 (U)
//	movielens, jester  1 (the test user) + k (Floyd's sample of the user's rated items)
//
// # Disjoint encoding
//
// The dataset problems have one context x_t ∈ R^p per round and K actions.
// A shared-model linear policy (one θ for all candidates) is made to work by
// the disjoint encoding x_{t,a} = x_t ⊗ e_a: candidate a is the vector of
// length d = K·p that holds x_t in coordinates [a·p, (a+1)·p) and zeros
// elsewhere, so θᵀx_{t,a} = θ_aᵀx_t with θ = (θ_0; …; θ_{K−1}): a separate
// linear model per action, learned by one ridge regression. These
// environments also implement [Disjoint], whose Context returns x_t itself,
// for per-arm (Li et al. 2010 "disjoint") models.
//
// # Data
//
// Dataset environments read the files under a data directory, never copied
// into the repository: the directory passed to [ParseData] or the Load
// functions, else [DataDir] (the environment variable DPBANDIT_DATA, else
// the first directory named shared/data beside the working directory or one
// of its ancestors, which finds ../shared/data from the repository root).
// A missing file gives an error wrapping [ErrNoData]. Loaders validate the
// files (column counts, labels, row counts are reported by the loaded
// values) and keep only compact, immutable arrays.
//
// # Ownership and concurrency
//
// An [Env] carries the state of the current round and is not safe for
// concurrent use. [Env.ForRun] returns a fresh, independent instance that
// shares the immutable data (the pool, the loaded dataset); instances may be
// used concurrently by different goroutines. Next writes into the caller's
// buffers and neither allocates nor retains them.
package ctxenv
