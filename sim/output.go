package sim

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/dpbandit/dpbandit/report"
)

// Output file names in a result directory.
const (
	SummaryFile  = "summary.json"
	CurvesFile   = "curves.csv"
	RunsFile     = "runs.csv"
	ManifestFile = "manifest.json"
	PartialFile  = "partial.json"
	PlotBase     = "regret" // regret.svg, regret.png
)

// partialFormat identifies partial.json files.
const partialFormat = "dpbandit-partial/1"

// WriteOptions control the files of WriteFiles.
type WriteOptions struct {
	LogX    bool // log-scale round axis in the plots
	NoPlots bool // skip regret.svg and regret.png
}

// WriteFiles writes summary.json, curves.csv, runs.csv, regret.svg and
// regret.png into dir (created if needed). It does not write the manifest
// (see WriteManifest).
func (a *Aggregate) WriteFiles(dir string, o WriteOptions) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := a.WriteSummary(&buf); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, SummaryFile), buf.Bytes(), 0o644); err != nil {
		return err
	}
	buf.Reset()
	if err := a.WriteCurves(&buf); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, CurvesFile), buf.Bytes(), 0o644); err != nil {
		return err
	}
	buf.Reset()
	if err := a.WriteRuns(&buf); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, RunsFile), buf.Bytes(), 0o644); err != nil {
		return err
	}
	if o.NoPlots {
		return nil
	}
	return a.Figure(o.LogX).Save(filepath.Join(dir, PlotBase))
}

// WriteSummary writes summary.json (indented JSON).
func (a *Aggregate) WriteSummary(w io.Writer) error { return writeJSON(w, a.Summary) }

// WriteCurves writes curves.csv: one row per policy and checkpoint with the
// mean and 95% band of the pseudo-regret and of the realised regret.
func (a *Aggregate) WriteCurves(w io.Writer) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"policy", "t", "pseudo_mean", "pseudo_lo95", "pseudo_hi95",
		"realised_mean", "realised_lo95", "realised_hi95"})
	for _, c := range a.Curves {
		for j, t := range c.T {
			_ = cw.Write([]string{c.Name, strconv.Itoa(t),
				num(c.Pseudo.Mean[j]), num(c.Pseudo.Lo[j]), num(c.Pseudo.Hi[j]),
				num(c.Realised.Mean[j]), num(c.Realised.Lo[j]), num(c.Realised.Hi[j])})
		}
	}
	cw.Flush()
	return cw.Error()
}

// WriteRuns writes runs.csv: one row per cell with its final pseudo-regret,
// realised regret, total reward and pulls per arm (pulls_0 … pulls_{K−1}).
// Contextual plans add expected_reward (Σ μ_t(a_t)) and oracle_reward
// (Σ max_i μ_t(i)) after reward, and count pulls per candidate slot.
func (a *Aggregate) WriteRuns(w io.Writer) error {
	cw := csv.NewWriter(w)
	head := []string{"policy", "run", "regret", "realised_regret", "reward"}
	ctx := a.Plan.Contextual()
	if ctx {
		head = append(head, "expected_reward", "oracle_reward")
	}
	for arm := range a.Plan.Setting.K {
		head = append(head, "pulls_"+strconv.Itoa(arm))
	}
	_ = cw.Write(head)
	last := len(a.Plan.Checkpoints) - 1
	for _, r := range a.Runs {
		row := []string{a.Plan.Entries[r.Entry].Name, strconv.Itoa(r.Run),
			num(r.Pseudo[last]), num(r.Realised[last]), num(r.Reward)}
		if ctx {
			row = append(row, num(r.Oracle-r.Pseudo[last]), num(r.Oracle))
		}
		for _, n := range r.Pulls {
			row = append(row, strconv.FormatInt(n, 10))
		}
		_ = cw.Write(row)
	}
	cw.Flush()
	return cw.Error()
}

func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// Figure returns the regret plot: pseudo-regret and realised regret against
// t, one line per policy with its shaded 95% band.
func (a *Aggregate) Figure(logX bool) report.Figure {
	pseudo := report.Panel{Title: "Pseudo-regret", XLabel: "round t", YLabel: "Σ (μ* − μ(a))", LogX: logX}
	realised := report.Panel{Title: "Realised regret", XLabel: "round t", YLabel: "μ*·t − Σ r", LogX: logX, NoLegend: true}
	if a.Plan.Contextual() {
		pseudo.YLabel, realised.YLabel = "Σ (μ*_t − μ_t(a_t))", "Σ μ*_t − Σ r_t"
	}
	budget := a.Plan.Spec.Budget != nil
	for i, c := range a.Curves {
		x := make([]float64, len(c.T))
		for j, t := range c.T {
			x[j] = float64(t)
		}
		label := c.Name
		if en := a.Plan.Entries[i]; budget && !en.Private {
			label += " (not private)"
		}
		pseudo.Series = append(pseudo.Series, report.Series{Label: label, X: x, Y: c.Pseudo.Mean, Lo: c.Pseudo.Lo, Hi: c.Pseudo.Hi})
		realised.Series = append(realised.Series, report.Series{Label: label, X: x, Y: c.Realised.Mean, Lo: c.Realised.Lo, Hi: c.Realised.Hi})
	}
	return report.Figure{Panels: []report.Panel{pseudo, realised}}
}

// Partial is the content of partial.json: one shard's raw results.
type Partial struct {
	Format   string `json:"format"`
	Spec     Spec   `json:"spec"`
	SpecHash string `json:"spec_hash"`
	Shard    Shard  `json:"shard"`
	// Entries are the resolved policy names, to check that a merge
	// resolves the spec the same way.
	Entries     []string    `json:"entries"`
	Checkpoints []int       `json:"checkpoints"`
	Runs        []RunResult `json:"runs"`
}

// WritePartial writes this result's raw runs to dir/partial.json, for
// `dpbandit merge`.
func (r *Result) WritePartial(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	p := Partial{Format: partialFormat, Spec: r.Plan.Spec, SpecHash: HashString(r.Plan.hash), Shard: r.Shard,
		Checkpoints: r.Plan.Checkpoints, Runs: r.Runs}
	for _, en := range r.Plan.Entries {
		p.Entries = append(p.Entries, en.Name)
	}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(p); err != nil {
		return err
	}
	// Atomic: a shard killed while writing leaves no torn partial.json.
	return WriteFileAtomic(filepath.Join(dir, PartialFile), buf.Bytes())
}

// ReadPartial reads dir/partial.json.
func ReadPartial(dir string) (*Partial, error) {
	b, err := os.ReadFile(filepath.Join(dir, PartialFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil, inputErrorf("%s has no %s: is it the --out of `dpbandit simulate --shard i/n`?", dir, PartialFile)
	}
	if err != nil {
		return nil, err
	}
	var p Partial
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, inputErrorf("%s: %v", filepath.Join(dir, PartialFile), err)
	}
	if p.Format != partialFormat {
		return nil, inputErrorf("%s: format %q, want %q", filepath.Join(dir, PartialFile), p.Format, partialFormat)
	}
	return &p, nil
}

// Merge combines the partial results in dirs (one per shard, any order)
// into the complete result of the sweep. It checks that all come from the
// same spec (hash), that the shards are distinct parts of one split, and
// that every cell occurs exactly once; errors name the directories. The
// spec is re-resolved with reg and must give the same policies as the
// shards recorded.
func Merge(dirs []string, reg Registry) (*Result, error) {
	if len(dirs) == 0 {
		return nil, inputErrorf("merge: no shard directories given")
	}
	parts := make([]*Partial, len(dirs))
	for i, d := range dirs {
		p, err := ReadPartial(d)
		if err != nil {
			return nil, err
		}
		parts[i] = p
	}
	first := parts[0]
	owner := map[int]string{}
	for i, p := range parts {
		if p.SpecHash != first.SpecHash {
			return nil, inputErrorf("merge: %s is from a different sweep (spec hash %s) than %s (spec hash %s)",
				dirs[i], p.SpecHash, dirs[0], first.SpecHash)
		}
		if p.Shard.Count != first.Shard.Count {
			return nil, inputErrorf("merge: %s is shard %s but %s is shard %s: the sweep was split differently",
				dirs[i], p.Shard, dirs[0], first.Shard)
		}
		if d, dup := owner[p.Shard.Index]; dup {
			return nil, inputErrorf("merge: %s and %s are both shard %s", d, dirs[i], p.Shard)
		}
		owner[p.Shard.Index] = dirs[i]
	}
	if n := max(first.Shard.Count, 1); len(owner) != n {
		var missing []string
		for i := range n {
			if _, ok := owner[i]; !ok {
				missing = append(missing, fmt.Sprintf("%d/%d", i, n))
			}
		}
		return nil, inputErrorf("merge: shard(s) %s missing (have %d of %d)", strings.Join(missing, ", "), len(owner), n)
	}
	plan, err := NewPlan(first.Spec, reg)
	if err != nil {
		return nil, fmt.Errorf("merge: resolving the spec of %s: %w", dirs[0], err)
	}
	if got := HashString(plan.hash); got != first.SpecHash {
		return nil, inputErrorf("merge: the spec in %s hashes to %s, not the recorded %s (edited file?)", dirs[0], got, first.SpecHash)
	}
	names := make([]string, len(plan.Entries))
	for i, en := range plan.Entries {
		names[i] = en.Name
	}
	if !slices.Equal(names, first.Entries) || !slices.Equal(plan.Checkpoints, first.Checkpoints) {
		return nil, inputErrorf("merge: this dpbandit resolves the spec to policies %v, but the shards ran %v (different dpbandit versions?)",
			names, first.Entries)
	}
	res := &Result{Plan: plan}
	for i, p := range parts {
		for _, r := range p.Runs {
			if r.Entry >= 0 && r.Entry < len(plan.Entries) && r.Run >= 0 && r.Run < plan.Spec.Runs &&
				!p.Shard.owns(r.Entry*plan.Spec.Runs+r.Run) {
				return nil, inputErrorf("merge: %s (shard %s) holds cell %s run %d, which belongs to another shard",
					dirs[i], p.Shard, plan.Entries[r.Entry].Name, r.Run)
			}
		}
		res.Runs = append(res.Runs, p.Runs...)
	}
	if _, err := complete(plan, res.Runs); err != nil {
		return nil, fmt.Errorf("merge: %w", err)
	}
	return res, nil
}

// Manifest is the content of manifest.json: what was run, by which build,
// with which seeds.
type Manifest struct {
	Tool      string            `json:"tool"`
	Module    string            `json:"module"`
	Version   string            `json:"version"`
	Build     map[string]string `json:"build,omitempty"` // vcs.revision, vcs.time, vcs.modified when known
	GoVersion string            `json:"go_version"`
	Spec      Spec              `json:"spec"`
	SpecHash  string            `json:"spec_hash"`
	Seed      uint64            `json:"seed"`
	// StreamHash is the specHash passed to env.Streams (see Plan).
	StreamHash string      `json:"stream_hash"`
	Streams    string      `json:"streams"`
	Cells      []CellSeeds `json:"cells"`
	Shard      Shard       `json:"shard"`
	Workers    int         `json:"workers,omitempty"`
	MergedFrom []string    `json:"merged_from,omitempty"`
	Files      []string    `json:"files"`
}

// CellSeeds are the PCG seeds of one cell, as hex.
type CellSeeds struct {
	Policy     string    `json:"policy"`
	Run        int       `json:"run"`
	EnvSeed    [2]string `json:"env_seed"`
	PolicySeed [2]string `json:"policy_seed"`
}

// NewManifest describes a run of plan. Cells lists the seeds of every cell
// of the plan (not only the shard's).
func NewManifest(plan *Plan, shard Shard, workers int, files []string) Manifest {
	m := Manifest{Tool: "dpbandit", Module: "github.com/dpbandit/dpbandit", Version: "(devel)", GoVersion: runtime.Version(),
		Spec: plan.Spec, SpecHash: HashString(plan.hash), Seed: plan.Spec.Seed, StreamHash: HashString(plan.streamHash),
		Streams: "env stream of run r: env.Streams(stream_hash, ·, r) (environment and seed only: common random numbers); " +
			"policy stream: env.Streams(stream_hash, FNV-1a(complete policy spec), r); each a PCG with the seeds below",
		Shard: shard, Workers: workers, Files: files}
	if plan.Contextual() {
		m.Streams += "; contextual environment: run r plays on the instance ForRun(r) of the environment spec, " +
			"whose Next draws each round's candidates and reward uniform from the env stream"
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Path != "" {
			m.Module = bi.Main.Path
		}
		if bi.Main.Version != "" {
			m.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			if strings.HasPrefix(s.Key, "vcs.") {
				if m.Build == nil {
					m.Build = map[string]string{}
				}
				m.Build[s.Key] = s.Value
			}
		}
	}
	hex := func(v uint64) string { return fmt.Sprintf("%#016x", v) }
	for e, en := range plan.Entries {
		for r := range plan.Spec.Runs {
			es, ps := plan.StreamSeeds(e, r)
			m.Cells = append(m.Cells, CellSeeds{Policy: en.Name, Run: r,
				EnvSeed: [2]string{hex(es[0]), hex(es[1])}, PolicySeed: [2]string{hex(ps[0]), hex(ps[1])}})
		}
	}
	return m
}

// WriteManifest writes dir/manifest.json.
func (m Manifest) WriteManifest(dir string) error {
	var buf bytes.Buffer
	if err := writeJSON(&buf, m); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, ManifestFile), buf.Bytes(), 0o644)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
