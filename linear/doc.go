// Package linear holds the contextual linear bandit policies of dpbandit, one
// file per algorithm, each registered with a bandit.Descriptor (parameters,
// defaults, valid ranges, privacy report, calibration to a budget) of kind
// bandit.ContextualKind. Every policy implements bandit.Contextual and
// bandit.Private, reads rewards in [0, 1], and neither allocates in Select
// nor in Update.
//
// Policies (docs/linear.md; [MT] §5.1 in docs/tree-based.md §1.9):
//
//   - linucb, lints (linucb.go, lints.go): LinUCB (Li et al. 2010) and
//     linear Thompson sampling (Agrawal & Goyal 2013) with the shared ridge
//     model of [ADA] or Li et al.'s disjoint per-arm models. Not private.
//   - adaprivate-ts, adaprivate-ucb (adaprivate*.go): the AdaPrivate family
//     of Riyazat & Ukwatta ([ADA]): batched Gaussian noise on b only, with
//     Poisson amplification (amp), exploration decay (adaptive), forced
//     exploration, user-level clipping across the stream, and a secure
//     discrete-Gaussian noise option for serving. Certified reports with the
//     corrections of docs/reproduction-decisions.md A12, A14, A15.
//   - DP-SVD private item features (dpsvd.go; [ADA] §6.3 with the
//     sensitivity of docs/reproduction-decisions.md A16), a feature builder rather than a policy.
//
// # Model and conventions
//
// Round t offers candidate feature vectors x_{t,1..K} ∈ R^d (public, as in
// [ADA] Definition 2 and docs/privacy-model.md); Select returns the index of the chosen
// candidate and Update(x, r) feeds back the chosen vector with its reward.
// Candidates and x are read during the call and never retained. Shared-model
// policies accept any number of candidates per round; disjoint models need
// exactly K (candidate index = arm).
//
// The linear algebra runs on internal/chol, the one Cholesky implementation
// of the module: A = λI + Σxxᵀ is kept as a factor updated in O(d²) per
// round (Givens), θ̂ = A⁻¹b and the Thompson draw A⁻¹b + v·L⁻ᵀz cost one
// forward and one back substitution, and LinUCB's width xᵀA⁻¹x one forward
// substitution. gonum's mat is used only on cold paths (DP-SVD) and in tests.
//
// # State
//
// Every policy's learning state serialises with MarshalJSON/UnmarshalJSON
// (the options, the Cholesky factor bit for bit, b, batch accumulators, and
// every released noisy value), so a restored policy continues identically
// when its generator is restored too (docs/privacy-model.md rule 5). The state holds raw
// statistics and is for persistence only, never for release (rule 2).
//
// The conformance suite for contextual policies is package
// linear/lineartest.
//
// Documentation: docs/linear.md (every policy here, DP-SVD, the private
// baselines and their privacy derivations) and docs/tree-based.md §1.9
// (mt-linucb, mt-lints).
package linear
