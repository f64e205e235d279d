package sim

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"

	"github.com/dpbandit/dpbandit/bandit"
)

// CellsDir is the directory, inside a run's output directory, that holds
// the finished cells of an unfinished run (see [CellCache]).
const CellsDir = ".cells"

// cellFormat identifies a cell file; a change of the file layout or of the
// meaning of its fields bumps it, which changes every cache key.
const cellFormat = "dpbandit-cell/1"

// CellCache keeps the finished cells of one plan on disk so that a killed
// run resumes where it stopped: [Plan.Run] writes each cell's result when it
// finishes and skips the cells already there. The cells live in
// DIR/.cells/KEY/, where KEY hashes everything the results depend on (the
// normalized spec, the resolved policies with all their parameters, the
// checkpoints, the number of arms, the cell file format and the module
// version and VCS revision of the build), so a run with a changed
// configuration or another build never reuses them.
//
// Each cell is one file written atomically (temporary file in the same
// directory, then rename), so a killed process leaves either the whole file
// or none. Cell files are not fsynced (that would cost more than a short
// cell): a file torn by a machine crash is caught on reading instead. A file
// that does not decode, whose checksum (SHA-256 of the result's JSON) does
// not match, or whose shape does not fit the plan is reported as corrupt,
// removed and recomputed.
type CellCache struct {
	dir  string // DIR/.cells/KEY
	root string // DIR/.cells
	plan *Plan
	key  string
	// Corrupt counts the cell files rejected by Load.
	Corrupt int
}

// cellFile is the content of one cell file.
type cellFile struct {
	Format string          `json:"format"`
	Key    string          `json:"key"`
	Entry  int             `json:"entry"`
	Run    int             `json:"run"`
	SHA256 string          `json:"sha256"` // of Result, as stored
	Result json.RawMessage `json:"result"`
}

// CacheKey returns the hash that names the plan's cell directory (32 hex
// digits).
func (p *Plan) CacheKey() string {
	var b strings.Builder
	b.WriteString(cellFormat)
	b.WriteString("\x00spec=" + HashString(p.hash))
	b.WriteString("\x00k=" + strconv.Itoa(p.Setting.K))
	b.WriteString("\x00checkpoints=")
	for _, t := range p.Checkpoints {
		b.WriteString(strconv.Itoa(t) + ",")
	}
	for _, en := range p.Entries {
		b.WriteString("\x00entry=" + en.Name + "=" + bandit.Spec{Name: en.Spec.Name, Params: en.Params}.String())
	}
	b.WriteString("\x00build=" + buildID())
	sum := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(sum[:16])
}

// buildID is the module version and VCS revision of this binary ("" parts
// when unknown, e.g. under go test).
func buildID() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	id := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
			id += " " + s.Key + "=" + s.Value
		}
	}
	return id
}

// OpenCellCache opens (creating it) the cell directory of plan p under
// out/.cells.
func OpenCellCache(out string, p *Plan) (*CellCache, error) {
	key := p.CacheKey()
	root := filepath.Join(out, CellsDir)
	dir := filepath.Join(root, key)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cell cache: %w", err)
	}
	return &CellCache{dir: dir, root: root, plan: p, key: key}, nil
}

// Dir returns the directory of the cached cells.
func (c *CellCache) Dir() string { return c.dir }

func (c *CellCache) path(entry, run int) string {
	return filepath.Join(c.dir, fmt.Sprintf("e%d-r%d.json", entry, run))
}

// Load returns the cached result of cell (entry, run), if a valid one is
// there. A corrupt file is removed (and counted in Corrupt) so that the
// cell is recomputed.
func (c *CellCache) Load(entry, run int) (RunResult, bool) {
	path := c.path(entry, run)
	b, err := os.ReadFile(path)
	if err != nil {
		return RunResult{}, false
	}
	r, err := c.decode(b, entry, run)
	if err != nil {
		c.Corrupt++
		_ = os.Remove(path)
		return RunResult{}, false
	}
	return r, true
}

func (c *CellCache) decode(b []byte, entry, run int) (RunResult, error) {
	var f cellFile
	if err := json.Unmarshal(b, &f); err != nil {
		return RunResult{}, err
	}
	if f.Format != cellFormat || f.Key != c.key || f.Entry != entry || f.Run != run {
		return RunResult{}, errors.New("cell file of another plan or cell")
	}
	sum := sha256.Sum256(f.Result)
	if hex.EncodeToString(sum[:]) != f.SHA256 {
		return RunResult{}, errors.New("checksum mismatch")
	}
	var r RunResult
	dec := json.NewDecoder(bytes.NewReader(f.Result))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		return RunResult{}, err
	}
	if err := c.plan.checkCell(r); err != nil {
		return RunResult{}, err
	}
	if r.Entry != entry || r.Run != run {
		return RunResult{}, errors.New("cell file holds another cell")
	}
	return r, nil
}

// checkCell checks that r has the shape of one of p's cells: its entry and
// run in range, one value per checkpoint, one pull count per arm summing to
// the horizon, and finite values.
func (p *Plan) checkCell(r RunResult) error {
	if r.Entry < 0 || r.Entry >= len(p.Entries) || r.Run < 0 || r.Run >= p.Spec.Runs {
		return fmt.Errorf("cell (entry %d, run %d) outside the plan (%d entries × %d runs)", r.Entry, r.Run, len(p.Entries), p.Spec.Runs)
	}
	if len(r.Pseudo) != len(p.Checkpoints) || len(r.Realised) != len(p.Checkpoints) || len(r.Pulls) != p.Setting.K {
		return fmt.Errorf("cell has %d/%d checkpoints and %d arms, want %d and %d",
			len(r.Pseudo), len(r.Realised), len(r.Pulls), len(p.Checkpoints), p.Setting.K)
	}
	var n int64
	for _, x := range r.Pulls {
		if x < 0 {
			return fmt.Errorf("negative pull count %d", x)
		}
		n += x
	}
	if n != int64(p.Spec.Horizon) {
		return fmt.Errorf("pulls sum to %d, not the horizon %d", n, p.Spec.Horizon)
	}
	for _, xs := range [][]float64{r.Pseudo, r.Realised, {r.Reward, r.Oracle}} {
		for _, x := range xs {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return errors.New("non-finite value")
			}
		}
	}
	return nil
}

// Save writes the result of one finished cell atomically.
func (c *CellCache) Save(r RunResult) error {
	res, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("cell cache: %w", err)
	}
	sum := sha256.Sum256(res)
	b, err := json.Marshal(cellFile{Format: cellFormat, Key: c.key, Entry: r.Entry, Run: r.Run,
		SHA256: hex.EncodeToString(sum[:]), Result: res})
	if err != nil {
		return fmt.Errorf("cell cache: %w", err)
	}
	if err := writeFileAtomic(c.path(r.Entry, r.Run), append(b, '\n'), false); err != nil {
		return fmt.Errorf("cell cache: %w", err)
	}
	return nil
}

// Remove deletes the plan's cell directory, and DIR/.cells when nothing
// else is left in it (call it once the run's outputs are written).
func (c *CellCache) Remove() error {
	if err := os.RemoveAll(c.dir); err != nil {
		return err
	}
	if err := os.Remove(c.root); err != nil && !errors.Is(err, fs.ErrNotExist) && !isNotEmpty(err) {
		return err
	}
	return nil
}

func isNotEmpty(err error) bool {
	var pe *fs.PathError
	return errors.As(err, &pe) && (strings.Contains(pe.Err.Error(), "not empty") || strings.Contains(pe.Err.Error(), "exists"))
}

// WriteFileAtomic writes data to path through a temporary file in the same
// directory that is synced and renamed over path, so that readers (and a
// run resumed after a kill) see the old file or the new one, never a part.
func WriteFileAtomic(path string, data []byte) error { return writeFileAtomic(path, data, true) }

func writeFileAtomic(path string, data []byte, sync bool) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		_ = os.Remove(tmp)
	}
	return err
}
