package ctxenv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/dpbandit/dpbandit/bandit"
	"github.com/dpbandit/dpbandit/internal/chol"
	"github.com/dpbandit/dpbandit/linear"
	"github.com/dpbandit/dpbandit/privacy"
)

// RatingFeatures selects how the item features of a rating environment are
// built from the training split.
type RatingFeatures int

const (
	// FeaturesSVD: the rank-d truncated SVD of the training matrix centred
	// by its global mean (missing ratings count as the mean), item j's
	// feature x_j = (S_k·V_jk)_k ([TruncatedSVD]).
	FeaturesSVD RatingFeatures = iota
	// FeaturesCov: [ADA] §6.3's DP-SVD pipeline without noise: rows clipped
	// to unit norm, C = R̃ᵀR̃/n_train, item j's feature (sqrt(λ_k)·v_k[j])_k
	// for the top-d eigenpairs. The non-private reference of FeaturesDPSVD.
	FeaturesCov
	// FeaturesDPSVD: the same with symmetric Gaussian noise on C calibrated
	// by linear.DPSVD to (FeatEps, FeatDelta) with Δ₂ = √2/n_train
	// (docs/reproduction-decisions.md A16).
	FeaturesDPSVD
)

var featureNames = []string{"svd", "cov", "dp-svd"}

func (f RatingFeatures) String() string {
	if int(f) >= 0 && int(f) < len(featureNames) {
		return featureNames[f]
	}
	return "RatingFeatures(" + strconv.Itoa(int(f)) + ")"
}

// RatingsOptions configure the semi-synthetic rating environments
// ([LoadMovieLens], [LoadJester]).
type RatingsOptions struct {
	Dim   int     // feature dimension d, [1, 200] (50)
	K     int     // candidates per round, [1, 20] (5)
	Train float64 // fraction of users in the training split, (0, 1) (0.8)
	Seed  uint64  // seed of the user split (and of the randomized SVD and the DP-SVD noise) (1)
	// Threshold binarises a rating: MovieLens pays 1 iff rating ≥ Threshold
	// (4), Jester iff rating > Threshold (0).
	Threshold float64
	Features  RatingFeatures
	FeatEps   float64 // ε_f of FeaturesDPSVD (paper basis, as [ADA] §6.3), > 0 (1)
	FeatDelta float64 // δ_f of FeaturesDPSVD, (0, 1) (1e-5)
	// Ridge is the ridge penalty λ_w > 0 of the warm-start prior θ0 (1).
	Ridge float64
}

func defaultRatingsOptions(threshold float64) RatingsOptions {
	return RatingsOptions{Dim: 50, K: 5, Train: 0.8, Seed: 1, Threshold: threshold, FeatEps: 1, FeatDelta: 1e-5, Ridge: 1}
}

func (o RatingsOptions) validate(kind string) error {
	switch {
	case o.Dim < 1 || o.Dim > 200:
		return specErrorf("%s d=%d is outside [1,200]", kind, o.Dim)
	case o.K < 1 || o.K > 20:
		return specErrorf("%s k=%d is outside [1,20]", kind, o.K)
	case !(o.Train > 0 && o.Train < 1):
		return specErrorf("%s train=%s is outside (0,1)", kind, fmtFloat(o.Train))
	case math.IsNaN(o.Threshold) || math.IsInf(o.Threshold, 0):
		return specErrorf("%s threshold=%s is not finite", kind, fmtFloat(o.Threshold))
	case o.Features < FeaturesSVD || o.Features > FeaturesDPSVD:
		return specErrorf("%s features %v is not svd, cov or dp-svd", kind, o.Features)
	case !(o.FeatEps > 0) || math.IsInf(o.FeatEps, 1):
		return specErrorf("%s feps=%s is outside (0,+Inf)", kind, fmtFloat(o.FeatEps))
	case !(o.FeatDelta > 0 && o.FeatDelta < 1):
		return specErrorf("%s fdelta=%s is outside (0,1)", kind, fmtFloat(o.FeatDelta))
	case !(o.Ridge > 0) || math.IsInf(o.Ridge, 1):
		return specErrorf("%s ridge=%s is outside (0,+Inf)", kind, fmtFloat(o.Ridge))
	}
	return nil
}

// RatingsInfo describes a built rating environment: the split (recorded
// in reports), the features and the rewards.
type RatingsInfo struct {
	Dataset       string // e.g. "MovieLens-100k", "Jester dataset 1, file 1 of 3"
	Users, Items  int    // in the file
	Ratings       int
	TrainUsers    int
	TestUsers     int     // test users with at least K eligible items
	DroppedUsers  int     // test users with fewer than K eligible items
	DroppedItems  int     // items without a training rating (never candidates)
	TestRatings   int     // eligible test ratings
	PositiveRate  float64 // share of eligible test ratings that pay 1
	SplitSeed     uint64
	Features      string  // how the features were built
	FeatureScale  float64 // the divisor that puts every feature in the unit ball
	SingularValue []float64
	Privacy       *privacy.Report // the DP-SVD report (FeaturesDPSVD), else nil
}

// ratingsData is the immutable built environment.
type ratingsData struct {
	name      string
	kind      string
	opt       RatingsOptions
	d         int
	x         []float64 // items × d
	userID    []int32   // test user u's id in the file (1-based)
	start     []int32   // CSR over test users
	item      []int32
	reward    []uint8
	prior     []float64
	trainIDs  []int32
	info      RatingsInfo
	trainRows *Sparse // the training matrix (raw ratings)
}

// Ratings is a semi-synthetic contextual bandit built from a rating
// dataset, following the protocol of [ADA] §4.1 (Riyazat & Ukwatta) for
// MovieLens and Jester as docs/reproduction-decisions.md §4 fixes it:
//
//   - the users are split at random (Seed) into a training set (a fraction
//     Train) and a disjoint test set;
//   - d item features are fitted on the training users only (see
//     [RatingFeatures]) and divided by the largest item norm, so every
//     candidate has norm ≤ 1, as the private policies require;
//   - items without a training rating have no features and are never
//     candidates; test users with fewer than K such items are dropped;
//   - each round samples a test user uniformly and K distinct items that
//     user rated (uniformly, Floyd's algorithm); the reward of a candidate
//     is its binarised rating (deterministic: Mean = Reward ∈ {0, 1}).
//
// Draws per round: 1 (the user) + K (Floyd's sample). The warm-start prior
// [Ratings.Prior] is the ridge fit θ0 = (λ_w I + Σ x_j x_jᵀ)⁻¹ Σ y x_j over
// the training split's ratings (y the binarised rating), independent of
// the test users' rewards ([ADA]'s warm start, docs/reproduction-decisions.md
// A14 condition 6).
type Ratings struct {
	data *ratingsData
	cur  []int32 // items of the current round
	rew  [20]float64
	best float64
	user int
}

// buildRatings builds the environment from the whole rating matrix.
func buildRatings(kind, dataset string, all *Sparse, ids []int32, o RatingsOptions, strict bool) (*ratingsData, error) {
	n, m := all.Users, all.Items
	nTrain := int(math.Round(o.Train * float64(n)))
	if nTrain < o.Dim || n-nTrain < 1 {
		return nil, specErrorf("%s train=%s gives %d training and %d test users of %d; need ≥ d=%d training users and ≥ 1 test user",
			kind, fmtFloat(o.Train), nTrain, n-nTrain, n, o.Dim)
	}
	if o.Dim > m {
		return nil, specErrorf("%s d=%d exceeds the %d items", kind, o.Dim, m)
	}
	perm := identity(n)
	r := rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15))
	partialShuffle(r, perm, n)
	train := slices.Clone(perm[:nTrain])
	test := slices.Clone(perm[nTrain:])
	slices.Sort(train)
	slices.Sort(test)
	tr := subRows(all, train)
	pos := func(v float32) bool {
		if strict {
			return float64(v) > o.Threshold
		}
		return float64(v) >= o.Threshold
	}
	d := o.Dim
	data := &ratingsData{kind: kind, opt: o, d: d, trainRows: tr}
	info := RatingsInfo{Dataset: dataset, Users: n, Items: m, Ratings: all.NNZ(), TrainUsers: nTrain, SplitSeed: o.Seed}
	x := make([]float64, m*d)
	switch o.Features {
	case FeaturesSVD:
		s, err := TruncatedSVD(tr, SVDOptions{Dim: d, Seed: o.Seed})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", kind, err)
		}
		for j := range m {
			for k := range d {
				x[j*d+k] = s.S[k] * s.V[j*d+k]
			}
		}
		info.SingularValue = s.S
		info.Features = fmt.Sprintf("rank-%d truncated SVD of the training matrix centred by its mean %.4f (missing = mean), %s; x_j = S·V_j", d, s.Mean, s.Method)
	default:
		rows := make([]linear.RatingRow, tr.Users)
		for u := range tr.Users {
			it, va := tr.Row(u)
			rows[u].Items = make([]int, len(it))
			rows[u].Values = make([]float64, len(it))
			for a := range it {
				rows[u].Items[a], rows[u].Values[a] = int(it[a]), float64(va[a])
			}
		}
		opts := linear.DPSVDOptions{Dim: d, Epsilon: o.FeatEps, Delta: o.FeatDelta, Basis: bandit.BasisPaper,
			Rand: rand.New(rand.NewPCG(o.Seed, 0xd9e5d))}
		if o.Features == FeaturesCov {
			// No noise: the smallest positive σ adds at most ~1e-323 per entry.
			opts.Sigma = math.SmallestNonzeroFloat64
		}
		res, err := linear.DPSVD(m, rows, opts)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", kind, err)
		}
		for j := range m {
			for k := range d {
				x[j*d+k] = math.Sqrt(res.Eigenvalues[k]) * res.Features[j][k]
			}
		}
		sv := make([]float64, d)
		for k := range d {
			sv[k] = math.Sqrt(res.Eigenvalues[k])
		}
		info.SingularValue = sv
		if o.Features == FeaturesCov {
			info.Features = fmt.Sprintf("top-%d eigenvectors of C = R̃ᵀR̃/n_train (rows clipped to unit norm, no noise; [ADA] §6.3 without privacy); x_j = (sqrt(λ_k) v_k[j])_k", d)
		} else {
			rep := res.Report
			info.Privacy = &rep
			info.Features = fmt.Sprintf("DP-SVD ([ADA] §6.3, linear.DPSVD) at ε_f = %s, δ_f = %s (paper basis), Δ₂ = √2/n_train, σ_f = %.4g; x_j = (sqrt(λ_k) v_k[j])_k",
				fmtFloat(o.FeatEps), fmtFloat(o.FeatDelta), res.Sigma)
		}
	}
	// Eligible items: at least one training rating.
	eligible := make([]bool, m)
	cnt := make([]float64, m)
	posCnt := make([]float64, m)
	for k, j := range tr.Item {
		eligible[j] = true
		cnt[j]++
		if pos(tr.Value[k]) {
			posCnt[j]++
		}
	}
	scale := 0.0
	for j := range m {
		if !eligible[j] {
			info.DroppedItems++
			clear(x[j*d : (j+1)*d])
			continue
		}
		scale = max(scale, math.Sqrt(dot(x[j*d:(j+1)*d], x[j*d:(j+1)*d])))
	}
	if !(scale > 0) {
		return nil, dataErrorf("%s: every item feature is zero", kind)
	}
	for i := range x {
		x[i] /= scale
	}
	info.FeatureScale = scale
	data.x = x
	// Test users and their eligible items.
	data.start = []int32{0}
	var npos int
	for _, u := range test {
		it, va := all.Row(int(u))
		c := 0
		for a := range it {
			if eligible[it[a]] {
				c++
			}
		}
		if c < o.K {
			info.DroppedUsers++
			continue
		}
		for a := range it {
			if eligible[it[a]] {
				data.item = append(data.item, it[a])
				var y uint8
				if pos(va[a]) {
					y = 1
					npos++
				}
				data.reward = append(data.reward, y)
			}
		}
		data.start = append(data.start, int32(len(data.item)))
		data.userID = append(data.userID, ids[u])
	}
	info.TestUsers = len(data.userID)
	if info.TestUsers == 0 {
		return nil, dataErrorf("%s: no test user has %d rated items with features", kind, o.K)
	}
	info.TestRatings = len(data.item)
	info.PositiveRate = float64(npos) / float64(len(data.item))
	for _, u := range train {
		data.trainIDs = append(data.trainIDs, ids[u])
	}
	// Warm-start prior: ridge on the training ratings.
	g := make([]float64, d*d)
	b := make([]float64, d)
	for j := range m {
		if cnt[j] == 0 {
			continue
		}
		xj := x[j*d : (j+1)*d]
		for p := range d {
			b[p] += posCnt[j] * xj[p]
			for q := range d {
				g[p*d+q] += cnt[j] * xj[p] * xj[q]
			}
		}
	}
	for p := range d {
		g[p*d+p] += o.Ridge
	}
	f, ok := chol.NewFromSym(d, g)
	if !ok {
		return nil, fmt.Errorf("%s: the warm-start Gram matrix is not positive definite", kind)
	}
	data.prior = make([]float64, d)
	f.SolveTo(data.prior, b)
	data.info = info
	return data, nil
}

// subRows returns the rows of s listed in users (in that order).
func subRows(s *Sparse, users []int32) *Sparse {
	out := &Sparse{Users: len(users), Items: s.Items, Start: make([]int32, 1, len(users)+1)}
	for _, u := range users {
		it, va := s.Row(int(u))
		out.Item = append(out.Item, it...)
		out.Value = append(out.Value, va...)
		out.Start = append(out.Start, int32(len(out.Item)))
	}
	return out
}

// newSparse builds a CSR matrix from triples (user, item, value) with dense
// 0-based indices; items within a row are sorted and must be distinct.
func newSparse(users, items int, u, it []int32, v []float32, path string) (*Sparse, error) {
	s := &Sparse{Users: users, Items: items, Start: make([]int32, users+1), Item: make([]int32, len(it)), Value: make([]float32, len(v))}
	for _, x := range u {
		s.Start[x+1]++
	}
	for i := range users {
		s.Start[i+1] += s.Start[i]
	}
	next := slices.Clone(s.Start[:users])
	for k := range u {
		p := next[u[k]]
		next[u[k]]++
		s.Item[p], s.Value[p] = it[k], v[k]
	}
	for r := range users {
		a, b := s.Start[r], s.Start[r+1]
		row := rowSorter{s.Item[a:b], s.Value[a:b]}
		if !slices.IsSorted(row.it) {
			row.sort()
		}
		for k := 1; k < len(row.it); k++ {
			if row.it[k] == row.it[k-1] {
				return nil, dataErrorf("%s: user index %d rates item index %d twice", path, r, row.it[k])
			}
		}
	}
	return s, nil
}

type rowSorter struct {
	it []int32
	v  []float32
}

func (r rowSorter) sort() {
	idx := make([]int, len(r.it))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return int(r.it[a]) - int(r.it[b]) })
	it := slices.Clone(r.it)
	v := slices.Clone(r.v)
	for i, k := range idx {
		r.it[i], r.v[i] = it[k], v[k]
	}
}

// ratingsCache keeps built environments by data directory and canonical
// spec, so that the sweeps of one reproduction load and factorise once.
var ratingsCache sync.Map // string → *ratingsData

// rawCache keeps parsed rating files by path (and set), so that
// environments that differ only in their options parse the file once.
var rawCache sync.Map // string → rawRatings

type rawRatings struct {
	all     *Sparse
	ids     []int32
	dataset string
}

func cachedRaw(key string, read func() (rawRatings, error)) (rawRatings, error) {
	if v, ok := rawCache.Load(key); ok {
		return v.(rawRatings), nil
	}
	r, err := read()
	if err != nil {
		return r, err
	}
	v, _ := rawCache.LoadOrStore(key, r)
	return v.(rawRatings), nil
}

func cachedRatings(key string, build func() (*ratingsData, error)) (*ratingsData, error) {
	if v, ok := ratingsCache.Load(key); ok {
		return v.(*ratingsData), nil
	}
	d, err := build()
	if err != nil {
		return nil, err
	}
	v, _ := ratingsCache.LoadOrStore(key, d)
	return v.(*ratingsData), nil
}

func newRatingsRun(d *ratingsData) *Ratings {
	return &Ratings{data: d, cur: make([]int32, d.opt.K), user: -1}
}

// Dim returns d.
func (e *Ratings) Dim() int { return e.data.d }

// K returns the number of candidates per round.
func (e *Ratings) K() int { return e.data.opt.K }

// Next samples a test user (1 draw) and K distinct items the user rated
// (Floyd's algorithm, K draws), and copies their features. O(K·d).
func (e *Ratings) Next(r *rand.Rand, cands [][]float64) {
	d, k := e.data, e.data.opt.K
	checkCands(cands, k, d.d)
	u := index(r, len(d.userID))
	a, n := int(d.start[u]), int(d.start[u+1]-d.start[u])
	// Floyd: for j = n−k..n−1 draw t in [0, j]; take t unless taken, else j.
	var chosen [20]int32
	for c, j := 0, n-k; j < n; c, j = c+1, j+1 {
		t := int32(index(r, j+1))
		if slices.Contains(chosen[:c], t) {
			t = int32(j)
		}
		chosen[c] = t
	}
	e.best = 0
	for i, t := range chosen[:k] {
		item := d.item[a+int(t)]
		e.cur[i] = item
		e.rew[i] = float64(d.reward[a+int(t)])
		e.best = max(e.best, e.rew[i])
		copy(cands[i][:d.d], d.x[int(item)*d.d:(int(item)+1)*d.d])
	}
	e.user = u
}

// Reward returns the binarised rating of candidate i (0 before the first
// round).
func (e *Ratings) Reward(i int) float64 {
	if e.user < 0 {
		return 0
	}
	return e.rew[i]
}

// Mean equals Reward: the reward of a candidate is deterministic given the
// round.
func (e *Ratings) Mean(i int) float64 { return e.Reward(i) }

// Best returns the largest reward among the candidates.
func (e *Ratings) Best() float64 { return e.best }

// Name returns the canonical spec.
func (e *Ratings) Name() string { return e.data.name }

// ForRun returns a fresh instance sharing the built data.
func (e *Ratings) ForRun(int) Env { return newRatingsRun(e.data) }

// Options returns the options.
func (e *Ratings) Options() RatingsOptions { return e.data.opt }

// Info describes the split, the features and the rewards.
func (e *Ratings) Info() RatingsInfo { return e.data.info }

// Prior returns a copy of the warm-start prior θ0 (ridge on the training
// split).
func (e *Ratings) Prior() []float64 { return slices.Clone(e.data.prior) }

// Feature returns item j's feature vector (a view; do not modify). Items
// without a training rating have the zero vector.
func (e *Ratings) Feature(j int) []float64 { return e.data.x[j*e.data.d : (j+1)*e.data.d] }

// Items returns the number of items.
func (e *Ratings) Items() int { return e.data.info.Items }

// Item returns the item index of candidate i of the current round.
func (e *Ratings) Item(i int) int { return int(e.cur[i]) }

// User returns the file's id of the current round's test user (−1 before
// the first round).
func (e *Ratings) User() int {
	if e.user < 0 {
		return -1
	}
	return int(e.data.userID[e.user])
}

// Split returns the file ids of the training users and of the (kept) test
// users, ascending.
func (e *Ratings) Split() (train, test []int32) {
	return slices.Clone(e.data.trainIDs), slices.Clone(e.data.userID)
}

// TrainMatrix returns the training users' raw ratings (shared; do not
// modify).
func (e *Ratings) TrainMatrix() *Sparse { return e.data.trainRows }

// ratingsName renders the canonical spec.
func ratingsName(kind string, extra []string, o RatingsOptions, def RatingsOptions) string {
	p := append(slices.Clone(extra),
		"d="+strconv.Itoa(o.Dim), "k="+strconv.Itoa(o.K), "train="+fmtFloat(o.Train), "seed="+strconv.FormatUint(o.Seed, 10),
		"threshold="+fmtFloat(o.Threshold), "features="+o.Features.String())
	if o.Features == FeaturesDPSVD {
		p = append(p, "feps="+fmtFloat(o.FeatEps), "fdelta="+fmtFloat(o.FeatDelta))
	}
	if o.Ridge != def.Ridge {
		p = append(p, "ridge="+fmtFloat(o.Ridge))
	}
	return kind + ":" + strings.Join(p, ",")
}

// parseRatingsKV fills o from the common keys of the rating kinds.
func parseRatingsKV(kind string, kv map[string]string, o *RatingsOptions) error {
	for _, p := range []struct {
		key string
		dst *int
	}{{"d", &o.Dim}, {"k", &o.K}} {
		if err := intParam(kind, kv, p.key, p.dst); err != nil {
			return err
		}
	}
	for _, p := range []struct {
		key string
		dst *float64
	}{{"train", &o.Train}, {"threshold", &o.Threshold}, {"feps", &o.FeatEps}, {"fdelta", &o.FeatDelta}, {"ridge", &o.Ridge}} {
		if err := floatParam(kind, kv, p.key, p.dst); err != nil {
			return err
		}
	}
	if s, ok := kv["seed"]; ok {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return specErrorf("%s seed=%q is not an integer in [0,%d]", kind, s, uint64(math.MaxUint64))
		}
		o.Seed = v
	}
	f, err := choiceParam(kind, kv, "features", featureNames, int(FeaturesSVD))
	if err != nil {
		return err
	}
	o.Features = RatingFeatures(f)
	return nil
}

var ratingsKeys = []string{"d", "k", "train", "seed", "threshold", "features", "feps", "fdelta", "ridge"}

// parseDecimal parses an optionally signed decimal like "-9.95", "10" or
// "0.1" exactly as strconv.ParseFloat would (integer mantissa < 2⁵³ over an
// exact power of ten is correctly rounded); ok is false for anything else.
func parseDecimal(b []byte) (float64, bool) {
	neg := false
	if len(b) > 0 && (b[0] == '-' || b[0] == '+') {
		neg = b[0] == '-'
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 15 {
		return 0, false
	}
	var m int64
	frac, dot, digits := 0, false, 0
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			m = m*10 + int64(c-'0')
			digits++
			if dot {
				frac++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return 0, false
		}
	}
	if digits == 0 {
		return 0, false
	}
	v := float64(m) / pow10[frac]
	if neg {
		v = -v
	}
	return v, true
}

var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// parseUint parses a non-negative decimal integer below 2³¹.
func parseUint(b []byte) (int, bool) {
	if len(b) == 0 || len(b) > 10 {
		return 0, false
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, n <= math.MaxInt32
}
