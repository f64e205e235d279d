package linear

import (
	"fmt"
	"math"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/privacy"
)

// The registry entries adaprivate-ts and adaprivate-ucb: parameters with the
// defaults of [ADA] §4.1 / docs/linear.md §1.11, construction, report and
// equal-budget calibration.
//
// The noise σ is the parameter `sigma`. Left at 0 it is derived from
// `epsilon` and `delta` by the paper's procedure (AdaPrivateSigma on the
// paper basis: σ = 1/sqrt(2ρ_BS(ε, δ)), σ_amp by docs/linear.md §1.11's rule);
// Calibrate returns it as `sigma`, so the calibrated noise scale shows in a
// run's params, summary.json and `dpbandit privacy policy`. The report's
// Mechanism string names σ in every case.
//
// In the descriptor the grid noise (grid = 1) reads the policy's generator
// r, which is a seeded PCG in simulation (reproducible) and the service's
// ChaCha8 seeded from crypto/rand in serving; NewAdaPrivate with a nil
// AdaPrivateOptions.GridSource reads crypto/rand directly (SecureNoise).

func adaParams(ucb bool) []bandit.Param {
	inf := math.Inf(1)
	tiny := math.SmallestNonzeroFloat64
	ps := []bandit.Param{
		{Name: "lambda", Default: 1, Min: tiny, Max: inf, Doc: "ridge regulariser λ > 0: A starts at λI"},
	}
	if ucb {
		ps = append(ps, bandit.Param{Name: "alpha", Default: 1, Min: 0, Max: inf, Doc: "UCB width multiplier α ≥ 0"})
	} else {
		ps = append(ps, bandit.Param{Name: "v", Default: 1, Min: 0, Max: inf, Doc: "initial posterior scale v0 ≥ 0 (Adaptive: 1.5)"})
	}
	ps = append(ps,
		bandit.Param{Name: "gammav", Default: 1, Min: tiny, Max: 1, Doc: "decay of v (α for UCB) per release, (0, 1] (Adaptive: 0.95; 1: none, docs/reproduction-decisions.md A18)"},
		bandit.Param{Name: "b", Default: 300, Min: 1, Max: inf, Integer: true, Doc: "batch size B (grid {100, 300, 500, 1000})"},
		bandit.Param{Name: "epsilon", Default: 1, Min: tiny, Max: inf, Doc: "target ε used to derive sigma when sigma = 0"},
		bandit.Param{Name: "delta", Default: 1e-5, Min: tiny, Max: 0.5, Doc: "target δ used to derive sigma when sigma = 0"},
		bandit.Param{Name: "sigma", Default: 0, Min: 0, Max: inf, Doc: "batch noise s.d. σ; 0: derived from epsilon, delta (paper basis)"},
		bandit.Param{Name: "amp", Default: 0, Min: 0, Max: 1, Doc: "Poisson subsampling rate q of -Amp (grid {0.1, 0.3, 0.5, 0.7}); 0: off"},
		bandit.Param{Name: "forced", Default: 0, Min: 0, Max: inf, Doc: "forced exploration γ_f: random candidate w.p. min(1, d ln t/(t γ_f)); 0: off (paper: d)"},
	)
	if !ucb {
		ps = append(ps, bandit.Param{Name: "lambda0", Default: 0, Min: 0, Max: inf,
			Doc: "tuned adaptive: v0 = 1 + σ_b/(d·sqrt(λ0)) with λ0 = λ_min(E[xxᵀ]) (overrides v); 0: off"})
	}
	ps = append(ps,
		bandit.Param{Name: "userclip", Default: 0, Min: 0, Max: inf, Doc: "user-level clipping norm C (paper default √5, [ADA] §6.1); 0: event level"},
		bandit.Param{Name: "userrounds", Default: 0, Min: 0, Max: inf, Integer: true, Doc: "rounds per user k (round t is user ⌊t/k⌋); needed with userclip"},
		bandit.Param{Name: "centre", Default: 0, Min: 0, Max: 1, Integer: true, Doc: "1: clip around the public centre ½Σx (sensitivity C, not 2C)"},
		bandit.Param{Name: "grid", Default: 0, Min: 0, Max: 1, Integer: true, Doc: "1: secure discrete Gaussian batch noise on a grid (serving); report in zCDP"},
	)
	return ps
}

// adaOptionsNoSigma builds options from completed params, without deriving
// sigma (Sigma is the parameter as given, possibly 0).
func adaOptionsNoSigma(ucb bool, s bandit.Setting, p bandit.Params) (AdaPrivateOptions, error) {
	o := AdaPrivateOptions{Dim: s.Dim, UCB: ucb, Lambda: p["lambda"], V: p["v"], Alpha: p["alpha"], GammaV: p["gammav"],
		BatchSize: intParam(p["b"]), Sigma: p["sigma"], Amp: p["amp"], Forced: p["forced"], UserClip: p["userclip"],
		UserRounds: intParam(p["userrounds"]), ClipCentre: p["centre"] == 1, Grid: p["grid"] == 1}
	if o.UserClip > 0 && o.UserRounds == 0 {
		return o, fmt.Errorf("%s: userclip = %v needs userrounds ≥ 1 (the rounds of one user; the service gives user ids to UpdateUser instead)",
			o.name(), o.UserClip)
	}
	return o, nil
}

// adaOptions builds the options of a descriptor call: sigma derived from
// epsilon and delta when 0, and the tuned-adaptive v0 when lambda0 > 0.
func adaOptions(ucb bool, s bandit.Setting, p bandit.Params) (AdaPrivateOptions, error) {
	o, err := adaOptionsNoSigma(ucb, s, p)
	if err != nil {
		return o, err
	}
	if o.Sigma == 0 {
		sig, err := AdaPrivateSigma(o, bandit.Target{Epsilon: p["epsilon"], Delta: p["delta"], Basis: bandit.BasisPaper})
		if err != nil {
			return o, err
		}
		o.Sigma = sig
	}
	if l0 := p["lambda0"]; !ucb && l0 > 0 && o.Dim >= 1 {
		o.V = TunedV0(o, l0)
	}
	return o, checkAdaPrivate(o)
}

// TunedV0 returns [ADA] §4.2's tuned adaptive initial scale
// v0 = 1 + σ_b/(d·sqrt(λ0)), with σ_b the noise standard deviation on b (σ,
// or σ/q with Amp) and λ0 = λ_min(E[xxᵀ]) supplied by the user.
func TunedV0(o AdaPrivateOptions, lambda0 float64) float64 {
	sb := o.Sigma
	if o.Amp > 0 {
		sb /= o.Amp
	}
	return 1 + sb/(float64(o.Dim)*math.Sqrt(lambda0))
}

// calibrateAda returns the Descriptor.Calibrate of adaprivate-ts/-ucb: the
// σ of AdaPrivateSigma for the user's other parameters, as `sigma`. p holds
// only the parameters the user gave; sigma among them leaves nothing to
// calibrate and is an error.
func calibrateAda(ucb bool) func(bandit.Setting, bandit.Target, bandit.Params) (bandit.Params, error) {
	return func(s bandit.Setting, t bandit.Target, p bandit.Params) (bandit.Params, error) {
		name := AdaPrivateOptions{UCB: ucb}.name()
		if v, ok := p["sigma"]; ok && v != 0 {
			return nil, fmt.Errorf("%s: sigma = %v is given, so nothing is left to calibrate to the budget; drop sigma", name, v)
		}
		full := bandit.Params{}
		for _, q := range adaParams(ucb) {
			full[q.Name] = q.Default
		}
		for k, v := range p {
			full[k] = v
		}
		o, err := adaOptionsNoSigma(ucb, s, full)
		if err != nil {
			return nil, err
		}
		sig, err := AdaPrivateSigma(o, t)
		if err != nil {
			return nil, err
		}
		out := bandit.Params{"sigma": sig}
		if t.Mu == 0 {
			// Report the (ε, δ) sigma was calibrated to, not the unused
			// defaults of the epsilon and delta parameters (which derive
			// sigma only when it is 0).
			out["epsilon"], out["delta"] = t.Epsilon, t.Delta
		}
		return out, nil
	}
}

func registerAda(ucb bool) {
	name := AdaPrivateOptions{UCB: ucb}.name()
	summary := "AdaPrivate-TS: linear TS with batched Gaussian noise on b only (amp, adaptive, forced, user clip, grid); certified 1/σ-GDP"
	source := "Riyazat & Ukwatta, AdaPrivate-TS, Algorithm 1, Thm 6, §3.2–3.3, §6.1–6.2 (docs/linear.md §1.11; docs/reproduction-decisions.md A12–A15)"
	if ucb {
		summary = "AdaPrivate-UCB: LinUCB with batched Gaussian noise on b only (amp, forced, user clip, grid); certified 1/σ-GDP"
		source = "Riyazat & Ukwatta, AdaPrivate-TS, §4.1 (AdaPrivate-UCB), Thm 6 (docs/linear.md §1.11; docs/reproduction-decisions.md A12–A15)"
	}
	register(bandit.Descriptor{
		Serving: &bandit.Serving{Why: "released batch increments use the secure discrete Gaussian on a grid (grid=1); decisions between releases are post-processing", Params: bandit.Params{"grid": 1}},
		Name:    name,
		Summary: summary,
		Source:  source,
		Private: true,
		Params:  adaParams(ucb),
		NewContextual: func(s bandit.Setting, p bandit.Params, r bandit.Rand) (bandit.Contextual, error) {
			o, err := adaOptions(ucb, s, p)
			if err != nil {
				return nil, err
			}
			if o.Grid && r != nil {
				o.GridSource = r
			}
			return NewAdaPrivate(o, r)
		},
		Report: func(s bandit.Setting, p bandit.Params) (privacy.Report, error) {
			o, err := adaOptions(ucb, s, p)
			if err != nil {
				return privacy.Report{}, err
			}
			return adaPrivateReport(o)
		},
		Calibrate: calibrateAda(ucb),
		// Resolve reports the σ the policy runs with: when sigma is left at 0,
		// the paper-basis σ derived from epsilon and delta (adaOptions).
		Resolve: func(s bandit.Setting, p bandit.Params) (bandit.Params, error) {
			o, err := adaOptions(ucb, s, p)
			if err != nil {
				return nil, err
			}
			out := bandit.Params{}
			for k, v := range p {
				out[k] = v
			}
			out["sigma"] = o.Sigma
			return out, nil
		},
	})
}

func init() {
	registerAda(false)
	registerAda(true)
}
