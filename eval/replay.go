package eval

import (
	"errors"
	"fmt"
	"math"

	"github.com/dpbandit/dpbandit/bandit"
)

// Replay evaluation (Li, Chu, Langford & Wang, "Unbiased offline evaluation
// of contextual-bandit-based news article recommendation algorithms", WSDM
// 2011, Algorithm 3) runs a learning policy through a log collected by a
// uniformly random logger: at every logged round the policy is asked for
// its choice; the round is kept ("matched") only when the choice equals the
// logged action, and then the logged reward is fed back to the policy.
// Because the logger's choice is independent of everything else and
// uniform, the matched rounds are distributed as rounds the policy itself
// would have played, and the CTR over them (clicks / matches) is an
// unbiased estimate of the policy's per-round reward over about n/A of its
// own rounds.
//
// Positions: the policy picks an action only; a round matches when its
// logged action equals the choice, whatever its position (on the Open
// Bandit Dataset, whose random logger draws the item of every position
// uniformly, each position's rounds are uniform, so the match ignoring the
// position stays unbiased and keeps about 3× more rounds than matching one
// position).

// ReplayOptions configure Replay.
type ReplayOptions struct {
	// Delay D: the reward of a matched round is fed back D matched rounds
	// later (0: at once). The rewards still pending at the end of the log
	// are never fed back.
	Delay int
	// Seed seeds the policy's generator (bandit.NewRand(Seed, replaySeed2)).
	Seed uint64
	// Horizon is the T the policy is built for; 0 means ⌈n/A⌉, the expected
	// number of matched rounds (the rounds the policy is updated on).
	Horizon int
	// Candidates gives a contextual policy the candidate feature vectors of
	// round i, one per action (index = action); it may reuse its result
	// between calls. Nil: DisjointCandidates on the log's context, or, for
	// a policy with one model per arm (parameter disjoint=1, Li et al.
	// 2010), ContextCandidates. Unused for K-armed policies, which see no
	// features.
	Candidates CandidateFunc
	// Dim is the candidates' dimension (required with Candidates).
	Dim int
	// UniformTol is the relative tolerance of the uniform-logger check:
	// every pscore within UniformTol of 1/A (0: 0.05).
	UniformTol float64
}

// CandidateFunc returns the candidate feature vectors of round i.
type CandidateFunc func(i int) [][]float64

// replaySeed2 is the second word of the policy generator's seed.
const replaySeed2 = 0x7265706c6179 // "replay"

// ReplayResult is Replay's output.
type ReplayResult struct {
	Policy  string // the spec, canonical
	Rounds  int    // logged rounds read
	Matches int    // rounds whose logged action equalled the policy's choice
	Clicks  float64
	// CTR is Clicks / Matches (NaN without matches); Normal its 95% normal
	// interval over the matched rounds' rewards (mean ± 1.96 s/√m).
	CTR    float64
	Normal Interval
	Delay  int
	// Uniform reports whether every pscore is within the tolerance of 1/A;
	// PScoreLo/Hi are the logged range. Warning is non-empty when the
	// logger is not (near-)uniform: replay is then biased.
	Uniform            bool
	PScoreLo, PScoreHi float64
	Warning            string
}

// UniformLogger reports whether every pscore of l is within relative
// tolerance tol of 1/A, and the pscores' range.
func UniformLogger(l *Log, tol float64) (ok bool, lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	for _, p := range l.PScore {
		lo, hi = min(lo, p), max(hi, p)
	}
	u := 1 / float64(l.A)
	return l.N > 0 && math.Abs(lo-u) <= tol*u && math.Abs(hi-u) <= tol*u, lo, hi
}

// Replay builds the policy described by spec ("name[:key=value,...]", as
// bandit.ParseSpec reads it) for the log's A actions and replays it.
// K-armed policies see no features; contextual ones get o.Candidates (or
// DisjointCandidates on the log's per-round context).
func Replay(l *Log, spec string, o ReplayOptions) (*ReplayResult, error) {
	if l == nil || l.N == 0 {
		return nil, errors.New("empty log")
	}
	if o.Delay < 0 {
		return nil, fmt.Errorf("replay delay must be ≥ 0, got %d", o.Delay)
	}
	for i, v := range l.Reward {
		if !(v >= 0 && v <= 1) {
			return nil, fmt.Errorf("replay: round %d's reward %v is outside [0, 1], which the policies require", i+1, v)
		}
	}
	sp, d, err := lookupSpec(spec)
	if err != nil {
		return nil, err
	}
	s := bandit.Setting{K: l.A, Horizon: o.Horizon}
	if s.Horizon <= 0 {
		s.Horizon = (l.N + l.A - 1) / l.A
	}
	cands := o.Candidates
	if d.NewContextual != nil {
		if cands == nil {
			if l.D == 0 {
				return nil, fmt.Errorf("%s is contextual and the log has no context columns", sp.Name)
			}
			if sp.Params["disjoint"] == 1 {
				cands, s.Dim = ContextCandidates(l), l.D
			} else {
				cands, s.Dim = DisjointCandidates(l), l.A*l.D
			}
		} else {
			if o.Dim < 1 {
				return nil, errors.New("replay: Candidates needs Dim")
			}
			s.Dim = o.Dim
		}
	}
	p, err := d.CompleteFor(s, sp.Params)
	if err != nil {
		return nil, err
	}
	r := bandit.NewRand(o.Seed, replaySeed2)
	res := &ReplayResult{Policy: bandit.Spec{Name: sp.Name, Params: sp.Params}.String(), Delay: o.Delay}
	tol := o.UniformTol
	if tol == 0 {
		tol = 0.05
	}
	res.Uniform, res.PScoreLo, res.PScoreHi = UniformLogger(l, tol)
	if !res.Uniform {
		res.Warning = fmt.Sprintf("the logger is not uniform (pscore in [%.4g, %.4g], 1/A = %.4g): replay assumes a uniformly random logger and is biased here",
			res.PScoreLo, res.PScoreHi, 1/float64(l.A))
	}
	var m []float64
	if d.NewContextual != nil {
		pol, err := d.NewContextual(s, p, r)
		if err != nil {
			return nil, err
		}
		if m, err = replayContextual(l, pol, cands, s.Dim, o.Delay); err != nil {
			return nil, err
		}
	} else {
		pol, err := d.New(s, p, r)
		if err != nil {
			return nil, err
		}
		m = ReplayPolicy(l, pol, o.Delay)
	}
	res.fill(l.N, m)
	return res, nil
}

func (res *ReplayResult) fill(n int, m []float64) {
	res.Rounds, res.Matches = n, len(m)
	for _, v := range m {
		res.Clicks += v
	}
	res.CTR = math.NaN()
	res.Normal = Interval{math.NaN(), math.NaN()}
	if len(m) > 0 {
		res.CTR = res.Clicks / float64(len(m))
		res.Normal = NormalInterval(m)
	}
}

// ReplayPolicy replays a K-armed policy through l with feedback delay
// delay (in matched rounds) and returns the matched rounds' rewards in
// order. Select is called at every logged round (Li et al.'s Algorithm 3:
// the policy's choice at an unmatched round is discarded); the policy is
// updated only with matched rounds.
func ReplayPolicy(l *Log, pol bandit.Policy, delay int) []float64 {
	type fb struct {
		arm int
		r   float64
	}
	var pending []fb
	var m []float64
	for i := range l.N {
		a := pol.Select()
		if a != int(l.Action[i]) {
			continue
		}
		m = append(m, l.Reward[i])
		pending = append(pending, fb{a, l.Reward[i]})
		if len(pending) > delay {
			pol.Update(pending[0].arm, pending[0].r)
			pending = pending[1:]
		}
	}
	return m
}

// replayContextual is ReplayPolicy for a contextual policy: round i's
// candidates are cands(i), the chosen index is the action.
func replayContextual(l *Log, pol bandit.Contextual, cands CandidateFunc, dim, delay int) ([]float64, error) {
	rp := newReplayer(pol, dim, delay)
	for i := range l.N {
		if err := rp.step(cands(i), int(l.Action[i]), l.Reward[i]); err != nil {
			return nil, fmt.Errorf("round %d: %w", i+1, err)
		}
	}
	return rp.matched, nil
}

// replayer is the replay loop of a contextual policy (Li et al. 2011,
// Algorithm 3) with a feedback delay, one logged round at a time.
type replayer struct {
	pol bandit.Contextual
	// ua is set for a policy with one model per arm: it trains the arm of
	// the delayed reward, not the arm its last Select returned.
	ua interface {
		UpdateArm(arm int, x []float64, r float64)
	}
	dim, delay int
	pending    []replayFeedback
	matched    []float64 // the matched rounds' rewards, in order
}

type replayFeedback struct {
	arm int
	x   []float64
	r   float64
}

func newReplayer(pol bandit.Contextual, dim, delay int) *replayer {
	rp := &replayer{pol: pol, dim: dim, delay: delay}
	rp.ua, _ = pol.(interface {
		UpdateArm(arm int, x []float64, r float64)
	})
	return rp
}

// step lets the policy choose among cands; when its choice is the logged
// candidate, reward counts and is fed back delay matched rounds later. A
// policy that panics (a candidate count or dimension it cannot take) is
// reported as an error.
func (rp *replayer) step(cands [][]float64, logged int, reward float64) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the policy failed: %v", r)
		}
	}()
	a := rp.pol.Select(cands)
	if a != logged {
		return nil
	}
	rp.matched = append(rp.matched, reward)
	x := append(make([]float64, 0, rp.dim), cands[a]...)
	rp.pending = append(rp.pending, replayFeedback{a, x, reward})
	if len(rp.pending) > rp.delay {
		f := rp.pending[0]
		if rp.ua != nil {
			rp.ua.UpdateArm(f.arm, f.x, f.r)
		} else {
			rp.pol.Update(f.x, f.r)
		}
		rp.pending = rp.pending[1:]
	}
	return nil
}

// DisjointCandidates is the flat log's contextual candidates: a flat CSV
// or JSONL log carries one context vector x_i per round (context_<j>
// columns) and no per-action features, so candidate a is e_a ⊗ x_i, the
// context placed in action a's block of an A·D vector (zeros elsewhere).
// A linear policy on these candidates is the disjoint linear model of Li,
// Chu, Langford & Schapire (WWW 2010): one weight vector per action. Its
// dimension A·D makes a d²-per-step policy slow for large A·D.
func DisjointCandidates(l *Log) CandidateFunc {
	d := l.D
	buf := make([]float64, l.A*l.A*d)
	c := make([][]float64, l.A)
	for a := range c {
		c[a] = buf[a*l.A*d : (a+1)*l.A*d]
	}
	return func(i int) [][]float64 {
		x := l.Context[i*d : (i+1)*d]
		for a := range c {
			copy(c[a][a*d:(a+1)*d], x) // the other blocks stay 0
		}
		return c
	}
}

// ContextCandidates gives every action round i's context x_i itself (the
// candidates of a policy with one model per action, Li et al.'s disjoint
// LinUCB: candidate a is scored by action a's model). For a non-private
// linear policy this is the disjoint model of DisjointCandidates computed
// in dimension D instead of A·D: the same choices up to rounding, at a
// cost per round A times D² instead of A times (A·D)².
func ContextCandidates(l *Log) CandidateFunc {
	c := make([][]float64, l.A)
	d := l.D
	return func(i int) [][]float64 {
		x := l.Context[i*d : (i+1)*d]
		for a := range c {
			c[a] = x
		}
		return c
	}
}

// ItemCandidates gives every round the same candidates, one fixed feature
// vector per action (e.g. ReadOBDItems' item features).
func ItemCandidates(items [][]float64) CandidateFunc {
	return func(int) [][]float64 { return items }
}
