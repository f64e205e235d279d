// Package eval estimates, from logged bandit feedback, what a target policy
// would have earned: off-policy evaluation (OPE).
//
// A Log holds n logged rounds (action, position, reward, the logging
// policy's propensity, optional context and timestamp, and optionally the
// target policy's action distribution and a reward model's predictions).
// ReadCSV and ReadJSONL load one from a flat file. The estimators are those
// of the Open Bandit Pipeline (Saito et al., "Open Bandit Dataset and
// Pipeline", NeurIPS 2021 Datasets and Benchmarks; st-tech/zr-obp,
// obp/ope/estimators.py), written from their definitions:
//
//   - IPS, inverse propensity scoring (Horvitz & Thompson 1952; Precup,
//     Sutton & Singh 2000);
//   - SNIPS, self-normalised IPS (Swaminathan & Joachims, NeurIPS 2015);
//   - DM, the direct method (a reward model averaged under the target);
//   - DR, doubly robust (Dudík, Langford & Li, ICML 2011);
//   - Switch-DR (Wang, Agarwal & Dudík, ICML 2017), in OBP's per-round form.
//
// Each estimate comes with the effective sample size of its importance
// weights, a normal-approximation 95% interval and a percentile bootstrap
// 95% interval. Evaluate runs the whole pipeline; FitRewardModel cross-fits
// the reward model when the log carries no predictions.
//
// Positions follow OBP's handling of the Open Bandit Dataset: the target's
// distribution and the reward model are indexed by the logged position.
package eval
