package audit

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/privacy"
)

// Mechanism is one pair of neighbouring inputs (world 0 is D, world 1 is D′)
// together with the randomised algorithm under audit. Run executes the
// algorithm once on the input of the given world with the randomness r, and
// writes into out (len(Stats())) the values of the statistics of its output
// transcript from which the audit's events {statistic ≥ c} are formed. Run
// is called concurrently from several goroutines (each with its own r); it
// must not share mutable state between calls.
type Mechanism interface {
	Stats() []string
	Run(world int, r *rand.Rand, out []float64)
}

// Categorical is implemented by mechanisms some of whose statistics are
// category codes (an encoded arm sequence) rather than numbers: for those
// the audit's events are sets of codes, ranked by their likelihood ratio on
// the selection runs, instead of thresholds.
type Categorical interface {
	Categorical() []bool
}

// seqLen returns the length L of the arm sequence a_{τ+1..τ+L} encoded as
// one categorical statistic: at most 16 rounds and K^L ≤ 2^50, so the code
// is an exact float64 (0 when K = 1: nothing to encode).
func seqLen(k, tau, T int) int {
	if k < 2 {
		return 0
	}
	l, c := 0, 1.0
	for l < 16 && tau+l+1 <= T && c*float64(k) <= 1<<50 {
		l++
		c *= float64(k)
	}
	return l
}

// seqCode encodes arms[τ..τ+L−1] (0-based: rounds τ+1..τ+L) in base K,
// after relabelling so that the arm played at τ is 0 when relabel is set
// (K-armed policies: the arms are exchangeable, the changed one is not).
func seqCode(arms []int, tau, l, k int, relabel bool) float64 {
	at := arms[tau-1]
	code := 0.0
	for j := l - 1; j >= 0; j-- {
		a := arms[tau+j]
		if relabel {
			switch {
			case a == at:
				a = 0
			case a < at:
				a++
			}
		}
		code = code*float64(k) + float64(a)
	}
	return code
}

// Candidate is one neighbouring pair of the family searched: a name that
// states the pair, and its mechanism.
type Candidate struct {
	Name string
	Mech Mechanism
}

// GaussianRelease is the one-step Gaussian release of one Thompson-sampling
// round ([OU] Alg 1, Ou, Avella Medina & Cummings, AISTATS 2024; the
// per-round mechanism of docs/privacy-model.md): an arm that has been pulled
// N times holds a reward sum whose one changed reward moves the posterior
// mean S/(N+1) by 1/(N+1), and the round releases θ ~ N(S/(N+1), 1/(N+1)).
// World 0 has the changed reward 0, world 1 has it 1; the other rewards are
// equal in both worlds and are taken as 0 without loss of generality. The
// certificate is the Gaussian mechanism's μ = Δ/σ = 1/sqrt(N+1) (Dong, Roth
// & Su 2022, Thm 2.7).
//
// NoiseScale multiplies the noise s.d. the mechanism actually uses (1: the
// correct mechanism; ½: a "halved noise" bug), while Report keeps stating the
// certificate of the correct mechanism, so an audit of NoiseScale ½ must
// find a lower bound above the (wrong) certified value.
type GaussianRelease struct {
	N          int     // pulls of the arm before the round, ≥ 1
	NoiseScale float64 // multiplier of the s.d., (0, ∞); 1 is correct
}

// Stats names the one statistic: the released θ.
func (g GaussianRelease) Stats() []string { return []string{"released θ"} }

// Run releases θ for the world.
func (g GaussianRelease) Run(world int, r *rand.Rand, out []float64) {
	n1 := float64(g.N + 1)
	out[0] = float64(world)/n1 + g.NoiseScale*r.NormFloat64()/math.Sqrt(n1)
}

// Report states the certificate of the correct mechanism, μ = 1/sqrt(N+1),
// whatever NoiseScale is.
func (g GaussianRelease) Report() privacy.Report {
	mu := 1 / math.Sqrt(float64(g.N+1))
	return privacy.Report{Mechanism: "gaussian-release", Neighbouring: privacy.EventLevel,
		Certified: privacy.Guarantee{Notion: privacy.NotionGDP, Value: mu}, PaperValid: true,
		Derivation: "Gaussian mechanism: mean shift 1/(N+1) against noise s.d. 1/sqrt(N+1), μ = 1/sqrt(N+1) (Dong, Roth & Su 2022, Thm 2.7)"}
}

// Neighbour is one pair of neighbouring reward streams in the reward-table
// model (docs/privacy-model.md; every source paper's event-level relation):
// every round's reward vector is Background in every coordinate, except
// round Tau (1-based), whose vector is Background in world 0 and
// 1 − Background in world 1. Background is 0 or 1, so the changed entry
// moves by the full range of the rewards.
type Neighbour struct {
	Tau        int
	Background float64
	Where      string // "early", "middle" or "late"
}

func (n Neighbour) String() string {
	return fmt.Sprintf("round τ=%d (%s), rewards %g, changed to %g", n.Tau, n.Where, n.Background, 1-n.Background)
}

func (n Neighbour) reward(t, world int) float64 {
	if t == n.Tau && world == 1 {
		return 1 - n.Background
	}
	return n.Background
}

// Family returns the neighbouring pairs searched for a horizon T ≥ 2: the
// changed round early (τ = 1), in the middle (τ = ⌈T/2⌉) and late (τ = T−1;
// a reward at round T influences nothing), each with background rewards 0
// (the changed round's rewards become 1) and 1 (they become 0). Duplicate
// rounds (small T) are listed once.
func Family(T int) ([]Neighbour, error) {
	if T < 2 {
		return nil, fmt.Errorf("audit: horizon %d is outside the valid range [2, ∞) (a reward changed at the last round influences nothing)", T)
	}
	type at struct {
		tau   int
		where string
	}
	var taus []at
	for _, a := range []at{{1, "early"}, {(T + 1) / 2, "middle"}, {T - 1, "late"}} {
		if len(taus) == 0 || taus[len(taus)-1].tau != a.tau {
			taus = append(taus, a)
		}
	}
	var out []Neighbour
	for _, a := range taus {
		for _, b := range []float64{0, 1} {
			out = append(out, Neighbour{Tau: a.tau, Background: b, Where: a.where})
		}
	}
	return out, nil
}

// windows returns the statistics of a transcript after round τ of T rounds
// and their names: sim(τ+1), sim(τ+2), sim(τ+3) (where they exist) and the
// sums of sim over rounds τ+1..τ+w for w = 2, 4, 8, … and w = T − τ, where
// sim(t) says how much the choice at round t resembles the choice at τ.
func windowNames(tau, T int, what string) ([]string, []int) {
	var names []string
	var ws []int // w > 0: single round τ+w; w < 0: window of −w rounds
	for w := 1; w <= 3 && tau+w <= T; w++ {
		names = append(names, fmt.Sprintf("%s at round τ+%d", what, w))
		ws = append(ws, w)
	}
	for w := 2; w < T-tau; w *= 2 {
		names = append(names, fmt.Sprintf("%s summed over rounds τ+1..τ+%d", what, w))
		ws = append(ws, -w)
	}
	if T-tau >= 2 {
		names = append(names, fmt.Sprintf("%s summed over rounds τ+1..T (%d rounds)", what, T-tau))
		ws = append(ws, -(T - tau))
	}
	return names, ws
}

func windowStats(sim []float64, tau int, ws []int, out []float64) {
	for i, w := range ws {
		if w > 0 {
			out[i] = sim[tau+w-1]
			continue
		}
		s := 0.0
		for t := tau + 1; t <= tau-w; t++ {
			s += sim[t-1]
		}
		out[i] = s
	}
}

// PolicyMechanism is a K-armed policy from the registry run for T rounds on
// a pair of neighbouring reward streams. Its statistics are functions of the
// arm sequence a_1..a_T: whether a_{τ+j} = a_τ for j = 1, 2, 3, the number
// of pulls of a_τ in windows after τ (a changed reward for a_τ moves only
// that arm's statistics, so its later pulls are what leaks), and the arm
// sequence a_{τ+1..τ+L} itself, with a_τ relabelled 0 (categorical).
type PolicyMechanism struct {
	desc    bandit.Descriptor
	setting bandit.Setting
	params  bandit.Params
	nb      Neighbour
	names   []string
	ws      []int
	seq     int // L, the length of the encoded sequence statistic (0: none)
}

// NewPolicyMechanism returns the mechanism of a K-armed descriptor with
// completed parameters on the pair nb. It builds the policy once to check
// the parameters.
func NewPolicyMechanism(d bandit.Descriptor, s bandit.Setting, p bandit.Params, nb Neighbour) (*PolicyMechanism, error) {
	if d.New == nil {
		return nil, fmt.Errorf("audit: %s is not a K-armed policy", d.Name)
	}
	if nb.Tau < 1 || nb.Tau >= s.Horizon {
		return nil, fmt.Errorf("audit: changed round %d is outside the valid range [1, %d]", nb.Tau, s.Horizon-1)
	}
	if _, err := d.New(s, p, bandit.NewRand(1, 1)); err != nil {
		return nil, err
	}
	names, ws := windowNames(nb.Tau, s.Horizon, "pulls of a_τ")
	l := seqLen(s.K, nb.Tau, s.Horizon)
	if l > 0 {
		names = append(names, fmt.Sprintf("arm sequence a_{τ+1..τ+%d} (a_τ relabelled 0)", l))
	}
	return &PolicyMechanism{desc: d, setting: s, params: p, nb: nb, names: names, ws: ws, seq: l}, nil
}

// Categorical marks the arm-sequence statistic.
func (m *PolicyMechanism) Categorical() []bool { return categoricalLast(len(m.names), m.seq > 0) }

func categoricalLast(n int, last bool) []bool {
	c := make([]bool, n)
	if last && n > 0 {
		c[n-1] = true
	}
	return c
}

// Stats names the statistics.
func (m *PolicyMechanism) Stats() []string { return m.names }

// Run plays the policy for T rounds on the world's stream.
func (m *PolicyMechanism) Run(world int, r *rand.Rand, out []float64) {
	pol, err := m.desc.New(m.setting, m.params, r)
	if err != nil {
		panic("audit: policy built once, failed now: " + err.Error())
	}
	T := m.setting.Horizon
	arms := make([]int, T)
	for t := 1; t <= T; t++ {
		a := pol.Select()
		arms[t-1] = a
		pol.Update(a, m.nb.reward(t, world))
	}
	sim := make([]float64, T)
	at := arms[m.nb.Tau-1]
	for t, a := range arms {
		if a == at {
			sim[t] = 1
		}
	}
	windowStats(sim, m.nb.Tau, m.ws, out)
	if m.seq > 0 {
		out[len(m.ws)] = seqCode(arms, m.nb.Tau, m.seq, m.setting.K, true)
	}
}

// ContextualMechanism is a contextual policy run for T rounds on fixed
// public features (K candidates of dimension d per round, uniform on the
// unit sphere, from a seeded generator, the same in both worlds and every
// run) and a pair of neighbouring reward streams. sim(t) = ⟨x_t, x_τ⟩, the
// inner product of the features chosen at t and at τ: a changed reward at
// τ moves the estimate along x_τ.
type ContextualMechanism struct {
	desc    bandit.Descriptor
	setting bandit.Setting
	params  bandit.Params
	nb      Neighbour
	feats   [][][]float64 // [t][candidate] → x
	names   []string
	ws      []int
	seq     int
}

// NewContextualMechanism returns the mechanism of a contextual descriptor
// with completed parameters on the pair nb, with features from seed.
func NewContextualMechanism(d bandit.Descriptor, s bandit.Setting, p bandit.Params, nb Neighbour, seed uint64) (*ContextualMechanism, error) {
	if d.NewContextual == nil {
		return nil, fmt.Errorf("audit: %s is not a contextual policy", d.Name)
	}
	if s.Dim < 1 {
		return nil, fmt.Errorf("audit: feature dimension %d is outside the valid range [1, ∞)", s.Dim)
	}
	if nb.Tau < 1 || nb.Tau >= s.Horizon {
		return nil, fmt.Errorf("audit: changed round %d is outside the valid range [1, %d]", nb.Tau, s.Horizon-1)
	}
	if _, err := d.NewContextual(s, p, bandit.NewRand(1, 1)); err != nil {
		return nil, err
	}
	r := bandit.NewRand(seed, 0x6665617475726573) // "features"
	feats := make([][][]float64, s.Horizon)
	for t := range feats {
		feats[t] = make([][]float64, s.K)
		for i := range feats[t] {
			x := make([]float64, s.Dim)
			for {
				n := 0.0
				for j := range x {
					x[j] = r.NormFloat64()
					n += x[j] * x[j]
				}
				if n > 1e-12 {
					n = math.Sqrt(n)
					for j := range x {
						x[j] /= n
					}
					break
				}
			}
			feats[t][i] = x
		}
	}
	names, ws := windowNames(nb.Tau, s.Horizon, "⟨x_t, x_τ⟩")
	l := seqLen(s.K, nb.Tau, s.Horizon)
	if l > 0 {
		names = append(names, fmt.Sprintf("candidate sequence a_{τ+1..τ+%d}", l))
	}
	return &ContextualMechanism{desc: d, setting: s, params: p, nb: nb, feats: feats, names: names, ws: ws, seq: l}, nil
}

// Categorical marks the candidate-sequence statistic.
func (m *ContextualMechanism) Categorical() []bool { return categoricalLast(len(m.names), m.seq > 0) }

// Stats names the statistics.
func (m *ContextualMechanism) Stats() []string { return m.names }

// Run plays the policy for T rounds on the world's stream.
func (m *ContextualMechanism) Run(world int, r *rand.Rand, out []float64) {
	pol, err := m.desc.NewContextual(m.setting, m.params, r)
	if err != nil {
		panic("audit: policy built once, failed now: " + err.Error())
	}
	T := m.setting.Horizon
	chosen := make([][]float64, T)
	arms := make([]int, T)
	for t := 1; t <= T; t++ {
		c := m.feats[t-1]
		a := pol.Select(c)
		chosen[t-1], arms[t-1] = c[a], a
		pol.Update(c[a], m.nb.reward(t, world))
	}
	xt := chosen[m.nb.Tau-1]
	sim := make([]float64, T)
	for t, x := range chosen {
		s := 0.0
		for j := range x {
			s += x[j] * xt[j]
		}
		sim[t] = s
	}
	windowStats(sim, m.nb.Tau, m.ws, out)
	if m.seq > 0 {
		out[len(m.ws)] = seqCode(arms, m.nb.Tau, m.seq, m.setting.K, false)
	}
}

// PolicyCandidates returns the candidates of a registered policy (K-armed
// or contextual) with completed parameters over the family of Family(T).
func PolicyCandidates(d bandit.Descriptor, s bandit.Setting, p bandit.Params, featureSeed uint64) ([]Candidate, error) {
	fam, err := Family(s.Horizon)
	if err != nil {
		return nil, err
	}
	out := make([]Candidate, 0, len(fam))
	for _, nb := range fam {
		var m Mechanism
		if d.New != nil {
			m, err = NewPolicyMechanism(d, s, p, nb)
		} else {
			m, err = NewContextualMechanism(d, s, p, nb, featureSeed)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, Candidate{Name: nb.String(), Mech: m})
	}
	return out, nil
}

// GaussianCandidates returns the one candidate of a GaussianRelease.
func GaussianCandidates(g GaussianRelease) ([]Candidate, error) {
	if g.N < 1 {
		return nil, fmt.Errorf("audit: gaussian-release n = %d is outside the valid range [1, ∞)", g.N)
	}
	if !(g.NoiseScale > 0 && g.NoiseScale <= math.MaxFloat64) {
		return nil, fmt.Errorf("audit: gaussian-release noise scale %v is outside the valid range (0, ∞)", g.NoiseScale)
	}
	return []Candidate{{Name: "changed reward 0 → 1 of an arm pulled n=" + strconv.Itoa(g.N) + " times", Mech: g}}, nil
}
