package ctxenv

import (
	"bytes"
	"compress/gzip"
	"io"
	"path/filepath"
	"strings"
)

// Paths of the MovieLens rating files relative to the data directory.
const (
	MovieLens100kFile = "movielens-100k/u.data"
	// MovieLens1MPartialFile holds only users 1–2999 of MovieLens-1M
	// (487,650 of 1,000,209 ratings): a labelled partial check, never
	// "MovieLens-1M".
	MovieLens1MPartialFile = "movielens-1m/ratings_PARTIAL_users1-2999.dat.gz"
)

// MovieLensSet names a MovieLens file.
type MovieLensSet string

// The MovieLens sets this package reads.
const (
	MovieLens100k       MovieLensSet = "100k"
	MovieLens1MPartial  MovieLensSet = "1m-partial"
	movieLensDefaultThr              = 4
)

// MovieLensOptions configure [LoadMovieLens].
type MovieLensOptions struct {
	Set MovieLensSet // "100k" (default) or "1m-partial"
	RatingsOptions
}

// DefaultMovieLensOptions returns MovieLens-100k, d = 50, K = 5, 80% of the
// users for training, seed 1, reward 1 iff rating ≥ 4 stars, SVD features.
func DefaultMovieLensOptions() MovieLensOptions {
	return MovieLensOptions{Set: MovieLens100k, RatingsOptions: defaultRatingsOptions(movieLensDefaultThr)}
}

// LoadMovieLens reads the MovieLens ratings under dir (or [DataDir] when
// dir is empty) and builds the semi-synthetic environment (see [Ratings]):
// MovieLens-100k u.data (tab-separated user, item, rating, timestamp;
// F. M. Harper and J. A. Konstan, ACM TiiS 5(4), 2015), or the partial
// MovieLens-1M file of users 1–2999 ("::"-separated, gzip). Errors wrap
// [ErrSpec], [ErrNoData] or [ErrData]. Built environments are cached per
// directory and spec.
func LoadMovieLens(dir string, o MovieLensOptions) (*Ratings, error) {
	const kind = "movielens"
	if o.Set != MovieLens100k && o.Set != MovieLens1MPartial {
		return nil, specErrorf("movielens set=%q is not 100k or 1m-partial", o.Set)
	}
	if err := o.validate(kind); err != nil {
		return nil, err
	}
	dir, err := resolveDir(dir)
	if err != nil {
		return nil, err
	}
	name := ratingsName(kind, []string{"set=" + string(o.Set)}, o.RatingsOptions, defaultRatingsOptions(movieLensDefaultThr))
	d, err := cachedRatings(dir+"\x00"+name, func() (*ratingsData, error) {
		raw, err := cachedRaw(dir+"\x00movielens\x00"+string(o.Set), func() (rawRatings, error) {
			all, ids, dataset, err := readMovieLens(dir, o.Set)
			return rawRatings{all, ids, dataset}, err
		})
		if err != nil {
			return nil, err
		}
		d, err := buildRatings(kind, raw.dataset, raw.all, raw.ids, o.RatingsOptions, false)
		if err != nil {
			return nil, err
		}
		d.name = name
		return d, nil
	})
	if err != nil {
		return nil, err
	}
	return newRatingsRun(d), nil
}

// readMovieLens parses the file of the set into a matrix with dense user
// and item indices (in increasing order of the file's ids) and returns the
// users' file ids.
func readMovieLens(dir string, set MovieLensSet) (*Sparse, []int32, string, error) {
	rel, sep, dataset := MovieLens100kFile, []byte{'\t'}, "MovieLens-100k"
	if set == MovieLens1MPartial {
		rel, sep, dataset = MovieLens1MPartialFile, []byte("::"), "MovieLens-1M users 1-2999 (partial)"
	}
	b, err := readFile(dir, rel)
	if err != nil {
		return nil, nil, "", err
	}
	path := filepath.Join(dir, filepath.FromSlash(rel))
	if strings.HasSuffix(rel, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return nil, nil, "", dataErrorf("%s: %v", path, err)
		}
		var buf bytes.Buffer
		buf.Grow(12 << 20)
		if _, err := io.Copy(&buf, zr); err != nil {
			return nil, nil, "", dataErrorf("%s: %v", path, err)
		}
		b = buf.Bytes()
	}
	n := bytes.Count(b, []byte{'\n'}) + 1
	us, is := make([]int32, 0, n), make([]int32, 0, n)
	vs := make([]float32, 0, n)
	maxU, maxI := 0, 0
	err = lines(b, func(ln int, line []byte) error {
		var f [4][]byte
		rest := line
		for c := range 3 {
			i := bytes.Index(rest, sep)
			if i < 0 {
				return dataErrorf("%s line %d has %d fields, want 4 separated by %q", path, ln, c+1, sep)
			}
			f[c], rest = rest[:i], rest[i+len(sep):]
		}
		f[3] = rest
		u, ok1 := parseUint(f[0])
		it, ok2 := parseUint(f[1])
		r, ok3 := parseUint(f[2])
		if !ok1 || !ok2 || !ok3 || u < 1 || it < 1 || r < 1 || r > 5 {
			return dataErrorf("%s line %d: %q is not user ≥ 1, item ≥ 1, rating in 1..5", path, ln, line)
		}
		if _, ok := parseUint(bytes.TrimSpace(f[3])); !ok {
			return dataErrorf("%s line %d: timestamp %q is not an integer", path, ln, f[3])
		}
		us, is, vs = append(us, int32(u)), append(is, int32(it)), append(vs, float32(r))
		maxU, maxI = max(maxU, u), max(maxI, it)
		return nil
	})
	if err != nil {
		return nil, nil, "", err
	}
	if len(us) == 0 {
		return nil, nil, "", dataErrorf("%s has no ratings", path)
	}
	uIdx, ids := denseIndex(us, maxU)
	iIdx, items := denseIndex(is, maxI)
	for k := range us {
		us[k] = uIdx[us[k]]
		is[k] = iIdx[is[k]]
	}
	s, err := newSparse(len(ids), len(items), us, is, vs, path)
	return s, ids, dataset, err
}

// denseIndex maps the ids present in xs (1..maxID) to 0..n−1 in increasing
// id order; it returns the map (indexed by id) and the ids.
func denseIndex(xs []int32, maxID int) ([]int32, []int32) {
	seen := make([]bool, maxID+1)
	for _, x := range xs {
		seen[x] = true
	}
	idx := make([]int32, maxID+1)
	var ids []int32
	for id, ok := range seen {
		if ok {
			idx[id] = int32(len(ids))
			ids = append(ids, int32(id))
		}
	}
	return idx, ids
}

func parseMovieLensSpec(params, dataDir string) (Env, error) {
	const kind = "movielens"
	kv, err := parseKV(kind, params, append([]string{"set"}, ratingsKeys...))
	if err != nil {
		return nil, err
	}
	o := DefaultMovieLensOptions()
	if s, ok := kv["set"]; ok {
		o.Set = MovieLensSet(strings.ToLower(s))
	}
	if err := parseRatingsKV(kind, kv, &o.RatingsOptions); err != nil {
		return nil, err
	}
	return LoadMovieLens(dataDir, o)
}
