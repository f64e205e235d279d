package ctxenv

import (
	"bytes"
	"path/filepath"
	"strconv"
)

// JesterFile is Jester dataset 1, file 1 of 3, relative to the data
// directory (24,983 users who rated ≥ 36 of 100 jokes).
const JesterFile = "jester/jester-data-1.csv"

// DefaultJesterOptions returns d = 50, K = 5, 80% of the users for
// training, seed 1, reward 1 iff rating > 0, SVD features.
func DefaultJesterOptions() RatingsOptions { return defaultRatingsOptions(0) }

// LoadJester reads Jester dataset 1, file 1 of 3 (K. Goldberg, T. Roeder,
// D. Gupta and C. Perkins, "Eigentaste", Information Retrieval 4(2), 2001)
// under dir (or [DataDir] when dir is empty) and builds the semi-synthetic
// environment (see [Ratings]); reward 1 iff the rating (in [−10, 10]) is
// > Threshold. The CSV has no header; column 0 is the user's rating count,
// columns 1..100 the jokes, 99 meaning not rated. Errors wrap [ErrSpec],
// [ErrNoData] or [ErrData]. Built environments are cached per directory
// and spec.
func LoadJester(dir string, o RatingsOptions) (*Ratings, error) {
	const kind = "jester"
	if err := o.validate(kind); err != nil {
		return nil, err
	}
	dir, err := resolveDir(dir)
	if err != nil {
		return nil, err
	}
	name := ratingsName(kind, nil, o, DefaultJesterOptions())
	d, err := cachedRatings(dir+"\x00"+name, func() (*ratingsData, error) {
		raw, err := cachedRaw(dir+"\x00jester", func() (rawRatings, error) {
			all, ids, err := readJester(dir)
			return rawRatings{all, ids, "Jester dataset 1, file 1 of 3"}, err
		})
		if err != nil {
			return nil, err
		}
		d, err := buildRatings(kind, raw.dataset, raw.all, raw.ids, o, true)
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

// jesterJokes is the number of joke columns.
const jesterJokes = 100

func readJester(dir string) (*Sparse, []int32, error) {
	b, err := readFile(dir, JesterFile)
	if err != nil {
		return nil, nil, err
	}
	path := filepath.Join(dir, filepath.FromSlash(JesterFile))
	n := bytes.Count(b, []byte{'\n'}) + 1
	s := &Sparse{Items: jesterJokes, Start: make([]int32, 1, n+1), Item: make([]int32, 0, 75*n), Value: make([]float32, 0, 75*n)}
	var ids []int32
	err = lines(b, func(ln int, line []byte) error {
		col, count, rated := 0, 0, 0
		for len(line) > 0 || col <= jesterJokes {
			var f []byte
			if i := bytes.IndexByte(line, ','); i >= 0 {
				f, line = line[:i], line[i+1:]
			} else {
				f, line = line, nil
			}
			if col > jesterJokes {
				return dataErrorf("%s line %d has more than %d columns", path, ln, jesterJokes+1)
			}
			f = bytes.TrimSpace(f)
			if col == 0 {
				c, ok := parseUint(f)
				if !ok || c > jesterJokes {
					return dataErrorf("%s line %d column 1: rating count %q is not an integer in [0,%d]", path, ln, f, jesterJokes)
				}
				count = c
			} else {
				v, ok := parseDecimal(f)
				if !ok {
					fv, err := strconv.ParseFloat(string(f), 64) // exponents, long forms
					if err != nil {
						return dataErrorf("%s line %d column %d: %q is not a number", path, ln, col+1, f)
					}
					v = fv
				}
				if v != 99 {
					if !(v >= -10 && v <= 10) {
						return dataErrorf("%s line %d column %d: rating %v is outside [-10,10] (99 = not rated)", path, ln, col+1, v)
					}
					s.Item = append(s.Item, int32(col-1))
					s.Value = append(s.Value, float32(v))
					rated++
				}
			}
			col++
			if line == nil && col <= jesterJokes {
				return dataErrorf("%s line %d has %d columns, want %d", path, ln, col, jesterJokes+1)
			}
		}
		if rated != count {
			return dataErrorf("%s line %d: column 1 says %d rated jokes, the row has %d", path, ln, count, rated)
		}
		s.Start = append(s.Start, int32(len(s.Item)))
		ids = append(ids, int32(ln))
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	s.Users = len(ids)
	if s.Users == 0 {
		return nil, nil, dataErrorf("%s has no users", path)
	}
	return s, ids, nil
}

func parseJesterSpec(params, dataDir string) (Env, error) {
	const kind = "jester"
	kv, err := parseKV(kind, params, ratingsKeys)
	if err != nil {
		return nil, err
	}
	o := DefaultJesterOptions()
	if err := parseRatingsKV(kind, kv, &o); err != nil {
		return nil, err
	}
	return LoadJester(dataDir, o)
}
