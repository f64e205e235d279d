package ctxenv

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

var kinds = []Kind{
	{
		Name:   "synthetic-linear",
		Syntax: "synthetic-linear:d=D,pool=N,k=K[,theta=S][,link=logistic|linear][,seed=SEED][,problem=fixed|per-run]",
		Doc: "Riyazat & Ukwatta, AdaPrivate-TS, §4; docs/reproductions.md E12: N pool arms ~ N(0,I_D) normalised to unit norm, θ* ~ N(0,I_D) rescaled to ‖θ*‖=S, " +
			"K candidates per round uniformly without replacement from the pool, reward Bernoulli(σ(θ*ᵀx)) " +
			"(logistic) or Bernoulli((1+θ*ᵀx/S)/2) (linear); D in [1,10000] (20), N in [1,1e6] (100), " +
			"K in [1,N] (5), S in (0,1e6] (2), SEED a uint64 selecting the problem (1); problem=fixed: every " +
			"run faces the problem of SEED, per-run: run r draws its own (defaults in parentheses)",
		Example: "synthetic-linear:d=20,pool=100,k=5",
	},
	{
		Name:   "mushroom",
		Syntax: "mushroom",
		Doc: "UCI mushroom, 2 actions (0 not eat, 1 eat), Riquelme et al. 2018 rewards mapped by (r+35)/40: " +
			"not eat 0.875, eat edible 1, eat poisonous 0 or 1 w.p. ½; 117 one-hot context features / √22, " +
			"disjoint candidates x⊗e_a (d=234); reads " + MushroomFile + " under the data directory",
		Example: "mushroom",
	},
	{
		Name:   "shuttle",
		Syntax: "shuttle[:clip=C]",
		Doc: "UCI statlog shuttle (training split), 7 actions = 7 classes, reward 1 for the true class; " +
			"9 standardised features clipped to [-C,C] plus a constant, normalised to unit norm, disjoint " +
			"candidates x⊗e_a (d=70); C in (0,+Inf] (3); reads " + ShuttleFile,
		Example: "shuttle:clip=3",
	},
	{
		Name:   "obd",
		Syntax: "obd:campaign=men|women[,k=K|all][,prior=M][,features=item|id|item+id]",
		Doc: "per-item Bernoulli simulator fitted on the Open Bandit Dataset random/ sample: CTR_j = " +
			"(clicks_j + M·p̄)/(impressions_j + M), p̄ the campaign CTR; K candidate items per round " +
			"(all, or K uniformly without replacement; K in [1,34] men, [1,46] women); M in [0,+Inf) (100); " +
			"item features (item_feature_0 and one-hot categoricals), item id one-hot, or both; reads " + OBDDir,
		Example: "obd:campaign=men",
	},
	{
		Name: "movielens",
		Syntax: "movielens[:set=100k|1m-partial][,d=D][,k=K][,train=F][,seed=S][,threshold=R][,features=svd|cov|dp-svd]" +
			"[,feps=E][,fdelta=DF][,ridge=L]",
		Doc: "semi-synthetic MovieLens bandit ([ADA] §4.1, docs/reproduction-decisions.md §4): users split at random (S) into a " +
			"training fraction F and test users; D item features fitted on the training users only (svd: truncated SVD of " +
			"the mean-centred matrix; cov: [ADA] §6.3's clipped covariance without noise; dp-svd: linear.DPSVD at (E, DF)), " +
			"divided by the largest item norm; each round a test user and K distinct items they rated, reward 1 iff " +
			"rating ≥ R; D in [1,200] (50), K in [1,20] (5), F in (0,1) (0.8), S (1), R (4), E (1), DF (1e-5), warm-start " +
			"ridge λ_w L (1); reads " + MovieLens100kFile + " (100k) or " + MovieLens1MPartialFile + " (users 1-2999 only)",
		Example: "movielens:set=100k,d=50,k=5",
	},
	{
		Name:   "jester",
		Syntax: "jester[:d=D][,k=K][,train=F][,seed=S][,threshold=R][,features=svd|cov|dp-svd][,feps=E][,fdelta=DF][,ridge=L]",
		Doc: "semi-synthetic Jester bandit (dataset 1, file 1 of 3), as movielens but reward 1 iff rating > R (0); " +
			"ratings in [-10,10], 99 = not rated; reads " + JesterFile,
		Example: "jester:d=50,k=5",
	},
}

// Kinds returns the environment kinds that Parse accepts, with their syntax.
func Kinds() []Kind { return slices.Clone(kinds) }

// Names returns the kind names that Parse accepts, in help order.
func Names() []string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.Name
	}
	return names
}

// IsKind reports whether spec names a kind of this package (so a caller can
// route a spec to this package or to env.Parse).
func IsKind(spec string) bool {
	kind, _, _ := strings.Cut(strings.TrimSpace(spec), ":")
	return slices.Contains(Names(), strings.ToLower(strings.TrimSpace(kind)))
}

// Help returns a multi-line description of the spec syntax, for --help.
func Help() string {
	var b strings.Builder
	b.WriteString("Contextual environment specs (KIND[:KEY=VALUE,...]; candidates have norm ≤ 1, rewards in [0,1]):\n")
	for _, k := range kinds {
		b.WriteString("  " + k.Syntax + "\n")
		b.WriteString("      " + k.Doc + "\n")
		b.WriteString("      e.g. " + k.Example + "\n")
	}
	b.WriteString("  Dataset kinds read $" + DataEnv + ", else the first shared/data beside the working directory or an ancestor.\n")
	return b.String()
}

// Parse builds an environment from a spec "KIND[:KEY=VALUE,...]" (see
// [Help] and [Kinds]), reading dataset kinds from [DataDir]. It is
// ParseData(spec, "").
func Parse(spec string) (Env, error) { return ParseData(spec, "") }

// ParseData is [Parse] with an explicit data directory (empty: [DataDir]).
//
// KIND and KEY are case-insensitive, spaces around fields are ignored, keys
// may come in any order but at most once, omitted keys take the defaults
// listed in [Help]. Every spec error wraps [ErrSpec] and names the bad value
// and its valid range, e.g. "env: invalid spec: synthetic-linear k=200 is
// outside [1,pool=100]"; unknown keys list the valid ones. Dataset errors
// wrap [ErrNoData] or [ErrData]. Parse(e.Name()) rebuilds e.
func ParseData(spec, dataDir string) (Env, error) {
	kind, params, _ := strings.Cut(strings.TrimSpace(spec), ":")
	kind = strings.ToLower(strings.TrimSpace(kind))
	switch kind {
	case "synthetic-linear":
		return parseSyntheticSpec(params)
	case "mushroom":
		if _, err := parseKV(kind, params, nil); err != nil {
			return nil, err
		}
		return LoadMushroom(dataDir)
	case "shuttle":
		return parseShuttleSpec(params, dataDir)
	case "obd":
		return parseOBDSpec(params, dataDir)
	case "movielens":
		return parseMovieLensSpec(params, dataDir)
	case "jester":
		return parseJesterSpec(params, dataDir)
	}
	return nil, specErrorf("unknown contextual environment kind %q in %q (kinds: %s)", kind, spec, strings.Join(Names(), ", "))
}

// parseKV splits "k1=v1,k2=v2" into a map with lower-case keys, rejecting
// keys not in valid, repeated keys and fields without '='.
func parseKV(kind, params string, valid []string) (map[string]string, error) {
	kv := map[string]string{}
	if strings.TrimSpace(params) == "" {
		return kv, nil
	}
	keys := "none"
	if len(valid) > 0 {
		keys = strings.Join(valid, ", ")
	}
	for i, f := range strings.Split(params, ",") {
		k, v, ok := strings.Cut(f, "=")
		k = strings.ToLower(strings.TrimSpace(k))
		v = strings.TrimSpace(v)
		switch {
		case !ok:
			return nil, specErrorf("%s parameter %q at position %d is not KEY=VALUE (keys: %s)", kind, strings.TrimSpace(f), i+1, keys)
		case !slices.Contains(valid, k):
			return nil, specErrorf("%s has no parameter %q (keys: %s)", kind, k, keys)
		case v == "":
			return nil, specErrorf("%s %s= has no value", kind, k)
		}
		if _, dup := kv[k]; dup {
			return nil, specErrorf("%s parameter %s is given twice", kind, k)
		}
		kv[k] = v
	}
	return kv, nil
}

// intParam parses kv[key] (if present) into *dst.
func intParam(kind string, kv map[string]string, key string, dst *int) error {
	s, ok := kv[key]
	if !ok {
		return nil
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return specErrorf("%s %s=%q is not an integer", kind, key, s)
	}
	*dst = v
	return nil
}

// floatParam parses kv[key] (if present) into *dst; NaN is rejected.
func floatParam(kind string, kv map[string]string, key string, dst *float64) error {
	s, ok := kv[key]
	if !ok {
		return nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) {
		return specErrorf("%s %s=%q is not a number", kind, key, s)
	}
	*dst = v
	return nil
}

// choiceParam returns the index of kv[key] (case-insensitive) in choices,
// or def if absent.
func choiceParam(kind string, kv map[string]string, key string, choices []string, def int) (int, error) {
	s, ok := kv[key]
	if !ok {
		return def, nil
	}
	i := slices.Index(choices, strings.ToLower(s))
	if i < 0 {
		return 0, specErrorf("%s %s=%q is not one of %s", kind, key, s, strings.Join(choices, ", "))
	}
	return i, nil
}

func parseSyntheticSpec(params string) (Env, error) {
	const kind = "synthetic-linear"
	kv, err := parseKV(kind, params, []string{"d", "pool", "k", "theta", "link", "seed", "problem"})
	if err != nil {
		return nil, err
	}
	o := DefaultSyntheticOptions()
	for _, p := range []struct {
		key string
		dst *int
	}{{"d", &o.D}, {"pool", &o.Pool}, {"k", &o.K}} {
		if err := intParam(kind, kv, p.key, p.dst); err != nil {
			return nil, err
		}
	}
	if err := floatParam(kind, kv, "theta", &o.Theta); err != nil {
		return nil, err
	}
	link, err := choiceParam(kind, kv, "link", []string{"logistic", "linear"}, 0)
	if err != nil {
		return nil, err
	}
	o.Link = Link(link)
	if s, ok := kv["seed"]; ok {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return nil, specErrorf("%s seed=%q is not an integer in [0,%d]", kind, s, uint64(math.MaxUint64))
		}
		o.Seed = v
	}
	problem, err := choiceParam(kind, kv, "problem", []string{"fixed", "per-run"}, 0)
	if err != nil {
		return nil, err
	}
	o.PerRun = problem == 1
	return NewSynthetic(o)
}

func parseShuttleSpec(params, dataDir string) (Env, error) {
	kv, err := parseKV("shuttle", params, []string{"clip"})
	if err != nil {
		return nil, err
	}
	o := DefaultShuttleOptions()
	if err := floatParam("shuttle", kv, "clip", &o.Clip); err != nil {
		return nil, err
	}
	return LoadShuttle(dataDir, o)
}

func parseOBDSpec(params, dataDir string) (Env, error) {
	const kind = "obd"
	kv, err := parseKV(kind, params, []string{"campaign", "k", "prior", "features"})
	if err != nil {
		return nil, err
	}
	o := DefaultOBDOptions()
	if c, ok := kv["campaign"]; ok {
		o.Campaign = strings.ToLower(c)
	}
	if s := kv["k"]; strings.EqualFold(s, "all") {
		delete(kv, "k")
	}
	if err := intParam(kind, kv, "k", &o.K); err != nil {
		return nil, err
	}
	if _, ok := kv["k"]; ok && o.K < 1 {
		return nil, specErrorf("obd k=%d is outside [1,items] (or all)", o.K)
	}
	if err := floatParam(kind, kv, "prior", &o.Prior); err != nil {
		return nil, err
	}
	f, err := choiceParam(kind, kv, "features", []string{"item", "id", "item+id"}, 0)
	if err != nil {
		return nil, err
	}
	o.Features = OBDFeatures(f)
	return LoadOBD(dataDir, o)
}
