package deploy_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/dpbandit/dpbandit/internal/cli"
)

// ---- the binary, built once -------------------------------------------

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
	binDir    string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// binary builds cmd/dpbandit with `go build` into a temporary directory (or
// uses $DPBANDIT_E2E_BIN, a prebuilt binary).
func binary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		if b := os.Getenv("DPBANDIT_E2E_BIN"); b != "" {
			binPath = b
			return
		}
		if binDir, buildErr = os.MkdirTemp("", "dpbandit-deploy-test"); buildErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "dpbandit")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/dpbandit/dpbandit/cmd/dpbandit").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

// ---- manifests ----------------------------------------------------------

type obj = map[string]any

// doc is one YAML document of a manifest file.
type doc struct {
	file string
	m    obj
}

func (d doc) kind() string { return str(d.m, "kind") }
func (d doc) name() string { return str(d.m, "metadata", "name") }
func (d doc) String() string {
	return fmt.Sprintf("%s %s (%s)", d.kind(), d.name(), filepath.Base(d.file))
}

// get walks maps by key and lists by index ("0").
func get(v any, path ...string) any {
	for _, p := range path {
		switch x := v.(type) {
		case obj:
			v = x[p]
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func str(v any, path ...string) string { s, _ := get(v, path...).(string); return s }
func num(v any, path ...string) int    { n, _ := get(v, path...).(int); return n }
func list(v any, path ...string) []any { l, _ := get(v, path...).([]any); return l }

func strs(v any, path ...string) []string {
	var out []string
	for _, x := range list(v, path...) {
		s, ok := x.(string)
		if !ok {
			s = fmt.Sprint(x)
		}
		out = append(out, s)
	}
	return out
}

// loadManifests decodes every document of every kubernetes/*.yaml file.
func loadManifests(t *testing.T) []doc {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("kubernetes", "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no manifests in kubernetes/")
	}
	var docs []doc
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(b))
		dec.KnownFields(true)
		for {
			var m obj
			err := dec.Decode(&m)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if m == nil {
				continue
			}
			docs = append(docs, doc{file: f, m: m})
		}
	}
	return docs
}

func byKind(docs []doc, kind string) []doc {
	var out []doc
	for _, d := range docs {
		if d.kind() == kind {
			out = append(out, d)
		}
	}
	return out
}

// podSpec returns the pod template spec of a Deployment or Job.
func podSpec(d doc) obj { m, _ := get(d.m, "spec", "template", "spec").(obj); return m }

func containers(d doc) []obj {
	var out []obj
	for _, c := range list(podSpec(d), "containers") {
		if m, ok := c.(obj); ok {
			out = append(out, m)
		}
	}
	return out
}

var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// sampleSecrets are the values the tests give to variables read from a
// Secret.
var sampleSecrets = map[string]string{
	"database-url": "postgres://dpbandit@postgres.default.svc:5432/dpbandit?sslmode=require",
	"admin-key":    "0123456789abcdef0123456789abcdef",
}

// commandLine returns the dpbandit arguments of container c with the
// $(VAR) references expanded as the kubelet does from the container's env:
// JOB_COMPLETION_INDEX is index, a secretKeyRef gets sampleSecrets, a plain
// value its value. A reference to an undeclared variable is an error (the
// kubelet would pass it on literally). The image's entrypoint is the
// binary, so a command must not be set.
func commandLine(t *testing.T, d doc, c obj, index int) []string {
	t.Helper()
	if cmd := list(c, "command"); len(cmd) > 0 {
		t.Fatalf("%s: container %s sets command %v; the image's entrypoint is dpbandit, give args", d, str(c, "name"), cmd)
	}
	env := map[string]string{}
	for _, e := range list(c, "env") {
		name := str(e, "name")
		switch {
		case get(e, "value") != nil:
			env[name] = str(e, "value")
		case str(e, "valueFrom", "fieldRef", "fieldPath") == "metadata.annotations['batch.kubernetes.io/job-completion-index']":
			env[name] = strconv.Itoa(index)
		case get(e, "valueFrom", "secretKeyRef") != nil:
			v, ok := sampleSecrets[str(e, "valueFrom", "secretKeyRef", "key")]
			if !ok {
				t.Fatalf("%s: env %s reads unknown secret key %q", d, name, str(e, "valueFrom", "secretKeyRef", "key"))
			}
			env[name] = v
		default:
			t.Fatalf("%s: env %s has no value the test knows", d, name)
		}
	}
	args := strs(c, "args")
	if len(args) == 0 {
		t.Fatalf("%s: container %s has no args", d, str(c, "name"))
	}
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = varRef.ReplaceAllStringFunc(a, func(ref string) string {
			name := varRef.FindStringSubmatch(ref)[1]
			v, ok := env[name]
			if !ok {
				t.Fatalf("%s: %q references $(%s), which the container does not declare", d, a, name)
			}
			return v
		})
	}
	return out
}

// mounts maps each volume mount path of container c to the claim behind it.
func mounts(t *testing.T, d doc, c obj) map[string]string {
	t.Helper()
	claims := map[string]string{}
	for _, v := range list(podSpec(d), "volumes") {
		claims[str(v, "name")] = str(v, "persistentVolumeClaim", "claimName")
	}
	out := map[string]string{}
	for _, m := range list(c, "volumeMounts") {
		claim, ok := claims[str(m, "name")]
		if !ok || claim == "" {
			t.Fatalf("%s: volume mount %s has no PersistentVolumeClaim volume", d, str(m, "name"))
		}
		out[str(m, "mountPath")] = claim
	}
	return out
}

// indexCount returns the number of indices an Indexed Job runs (0 for
// another Job).
func indexCount(d doc) int {
	if str(d.m, "spec", "completionMode") != "Indexed" {
		return 0
	}
	return num(d.m, "spec", "completions")
}

// flagValue returns the value of --name in args ("--name=v" or "--name v").
func flagValue(args []string, name string) (string, bool) {
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
		if a == "--"+name && i+1 < len(args) {
			return args[i+1], true
		}
	}
	return "", false
}

// positional returns the arguments after the subcommand that are not flags
// (every flag of the manifests is written --name=value).
func positional(args []string) []string {
	var out []string
	for _, a := range args[1:] {
		if !strings.HasPrefix(a, "-") {
			out = append(out, a)
		}
	}
	return out
}

// rebase moves every path under one of the mount paths to the same path
// under root (the volume, locally).
func rebase(args []string, mountPaths []string, root string) []string {
	out := slices.Clone(args)
	for i, a := range out {
		for _, mp := range mountPaths {
			pre := mp + "/"
			if k := strings.Index(a, pre); k >= 0 && (k == 0 || a[k-1] == '=') {
				out[i] = a[:k] + filepath.Join(root, strings.TrimPrefix(a[k:], pre))
			}
		}
	}
	return out
}

// ---- the tests ----------------------------------------------------------

// TestManifestsParse: every document of every manifest decodes (strict
// YAML), is of a kind this directory ships, is named, and every dpbandit
// command line in it, for every index of an Indexed Job, is accepted by the
// CLI's parser (cli.Parse: flags, values, the sweep's environment and
// policies, the shard, the reproduction's name). Merge commands are checked
// with their shard directories present.
func TestManifestsParse(t *testing.T) {
	docs := loadManifests(t)
	known := map[string]string{"Deployment": "apps/v1", "Service": "v1", "Job": "batch/v1", "PersistentVolumeClaim": "v1"}
	lines := 0
	for _, d := range docs {
		api, ok := known[d.kind()]
		if !ok || str(d.m, "apiVersion") != api {
			t.Errorf("%s: kind %q apiVersion %q; want one of %v", d, d.kind(), str(d.m, "apiVersion"), known)
		}
		if d.name() == "" {
			t.Errorf("%s: no metadata.name", d)
		}
		if d.kind() != "Deployment" && d.kind() != "Job" {
			continue
		}
		for _, c := range containers(d) {
			if !strings.HasPrefix(str(c, "image"), "dpbandit") {
				t.Errorf("%s: image %q is not dpbandit's", d, str(c, "image"))
			}
			root := t.TempDir()
			var mps []string
			for mp := range mounts(t, d, c) {
				mps = append(mps, mp)
			}
			for i := range max(indexCount(d), 1) {
				args := rebase(commandLine(t, d, c, i), mps, root)
				if args[0] == "merge" {
					for _, dir := range positional(args) {
						if err := os.MkdirAll(dir, 0o755); err != nil {
							t.Fatal(err)
						}
					}
				}
				if err := cli.Parse(args); err != nil {
					t.Errorf("%s, index %d: dpbandit %s: %v", d, i, strings.Join(args, " "), err)
				}
				lines++
			}
		}
	}
	if lines < 1+8+1+8+1 {
		t.Errorf("checked %d command lines; the manifests have the service, two 8-shard Jobs and two merges", lines)
	}
}

// TestServiceManifest: the Deployment runs several replicas of serve
// --replica, listens on the container port its probes and Service use,
// probes /healthz for readiness and liveness, reads the database URL and
// the admin key from a Secret, and runs as non-root; the Service selects
// its pods.
func TestServiceManifest(t *testing.T) {
	docs := loadManifests(t)
	deps := byKind(docs, "Deployment")
	svcs := byKind(docs, "Service")
	if len(deps) != 1 || len(svcs) != 1 {
		t.Fatalf("%d Deployments and %d Services, want 1 each", len(deps), len(svcs))
	}
	d, s := deps[0], svcs[0]
	if n := num(d.m, "spec", "replicas"); n < 2 {
		t.Errorf("%s: %d replicas, want ≥ 2", d, n)
	}
	if v, _ := get(podSpec(d), "securityContext", "runAsNonRoot").(bool); !v {
		t.Errorf("%s: pod does not set runAsNonRoot", d)
	}
	cs := containers(d)
	if len(cs) != 1 {
		t.Fatalf("%s: %d containers, want 1", d, len(cs))
	}
	c := cs[0]
	args := commandLine(t, d, c, 0)
	if args[0] != "serve" || !slices.Contains(args, "--replica") {
		t.Errorf("%s: args %v, want serve --replica", d, args)
	}
	if db, _ := flagValue(args, "db"); db != sampleSecrets["database-url"] {
		t.Errorf("%s: --db is %q, not the Secret's database-url", d, db)
	}
	if !slices.Contains(strs(c, "args"), "--db=$(DPBANDIT_DB)") {
		t.Errorf("%s: --db is not taken from $(DPBANDIT_DB)", d)
	}
	secretEnv := map[string]string{}
	for _, e := range list(c, "env") {
		if key := str(e, "valueFrom", "secretKeyRef", "key"); key != "" {
			secretEnv[str(e, "name")] = key
		}
	}
	if secretEnv["DPBANDIT_DB"] != "database-url" || secretEnv["DPBANDIT_ADMIN_KEY"] != "admin-key" {
		t.Errorf("%s: env from Secret %v, want DPBANDIT_DB ← database-url and DPBANDIT_ADMIN_KEY ← admin-key", d, secretEnv)
	}
	addr, _ := flagValue(args, "addr")
	_, port, _ := strings.Cut(addr, ":")
	var portName string
	for _, p := range list(c, "ports") {
		if strconv.Itoa(num(p, "containerPort")) == port {
			portName = str(p, "name")
		}
	}
	if portName == "" {
		t.Fatalf("%s: --addr %s has no matching containerPort", d, addr)
	}
	for _, probe := range []string{"readinessProbe", "livenessProbe"} {
		if p := str(c, probe, "httpGet", "path"); p != "/healthz" {
			t.Errorf("%s: %s path %q, want /healthz", d, probe, p)
		}
		if p := fmt.Sprint(get(c, probe, "httpGet", "port")); p != portName && p != port {
			t.Errorf("%s: %s port %s, want %s (%s)", d, probe, p, portName, port)
		}
	}
	sel, _ := get(s.m, "spec", "selector").(obj)
	labels, _ := get(d.m, "spec", "template", "metadata", "labels").(obj)
	if len(sel) == 0 {
		t.Fatalf("%s: no selector", s)
	}
	for k, v := range sel {
		if labels[k] != v {
			t.Errorf("%s selects %s=%v, which the pods of %s do not carry (%v)", s, k, v, d, labels)
		}
	}
	if tp := fmt.Sprint(get(s.m, "spec", "ports", "0", "targetPort")); tp != portName && tp != port {
		t.Errorf("%s: targetPort %s, want %s", s, tp, portName)
	}
}

// shardedJob is an Indexed Job paired with the Job that merges it.
type shardedJob struct {
	job, merge doc
	n          int      // completions = shards
	base       string   // the directory holding shard-i (on the volume)
	mountPaths []string // of the Indexed Job's container
}

// shardedJobs pairs every Indexed Job with its merge Job and checks the
// shard arithmetic: --shard=$(JOB_COMPLETION_INDEX)/N with N = completions,
// --out=BASE/shard-$(JOB_COMPLETION_INDEX) on a ReadWriteMany claim, and a
// merge Job that mounts the same claim at the same path and lists exactly
// BASE/shard-0 … BASE/shard-(N−1).
func shardedJobs(t *testing.T, docs []doc) []shardedJob {
	t.Helper()
	rwx := map[string]bool{}
	for _, p := range byKind(docs, "PersistentVolumeClaim") {
		rwx[p.name()] = slices.Contains(strs(p.m, "spec", "accessModes"), "ReadWriteMany")
	}
	var out []shardedJob
	jobs := byKind(docs, "Job")
	for _, j := range jobs {
		n := indexCount(j)
		if n == 0 {
			continue
		}
		c := containers(j)[0]
		raw := strs(c, "args")
		if sh, _ := flagValue(raw, "shard"); sh != "$(JOB_COMPLETION_INDEX)/"+strconv.Itoa(n) {
			t.Errorf("%s: --shard=%s, want $(JOB_COMPLETION_INDEX)/%d (completions)", j, sh, n)
		}
		o, _ := flagValue(raw, "out")
		base, ok := strings.CutSuffix(o, "/shard-$(JOB_COMPLETION_INDEX)")
		if !ok {
			t.Fatalf("%s: --out=%s is not BASE/shard-$(JOB_COMPLETION_INDEX)", j, o)
		}
		ms := mounts(t, j, c)
		var mps []string
		var claim string
		for mp, cl := range ms {
			mps = append(mps, mp)
			if strings.HasPrefix(base, mp+"/") {
				claim = cl
			}
		}
		if claim == "" || !rwx[claim] {
			t.Errorf("%s: %s is not on a ReadWriteMany claim of results-pvc.yaml (claim %q)", j, base, claim)
		}
		var want []string
		for i := range n {
			want = append(want, base+"/shard-"+strconv.Itoa(i))
		}
		var merge *doc
		for _, m := range jobs {
			if indexCount(m) == 0 && slices.Equal(positional(strs(containers(m)[0], "args")), want) {
				merge = &m
			}
		}
		if merge == nil {
			t.Errorf("%s: no merge Job lists %v", j, want)
			continue
		}
		mc := containers(*merge)[0]
		if args := strs(mc, "args"); args[0] != "merge" {
			t.Errorf("%s: runs %s, not merge", *merge, args[0])
		}
		if mm := mounts(t, *merge, mc); !mapsEqual(mm, ms) {
			t.Errorf("%s mounts %v but %s mounts %v", *merge, mm, j, ms)
		}
		out = append(out, shardedJob{job: j, merge: *merge, n: n, base: base, mountPaths: mps})
	}
	return out
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestIndexedJobsPairWithMerge(t *testing.T) {
	jobs := shardedJobs(t, loadManifests(t))
	if len(jobs) != 2 {
		t.Fatalf("%d Indexed Jobs with a merge Job, want 2 (a sweep and a reproduction)", len(jobs))
	}
}

// scaleDown replaces the size flags of a manifest's command line so that it
// runs in a test: --horizon and --runs take the given values (added when
// absent), and a reproduction runs --quick. Everything else (shard, paths,
// policies, the merge's list) is the manifest's.
func scaleDown(args []string, horizon, runs int) []string {
	var out []string
	for _, a := range args {
		if strings.HasPrefix(a, "--horizon=") || strings.HasPrefix(a, "--runs=") || a == "--quick" {
			continue
		}
		out = append(out, a)
	}
	if out[0] == "merge" {
		return out
	}
	out = append(out, "--horizon="+strconv.Itoa(horizon), "--runs="+strconv.Itoa(runs))
	if out[0] == "reproduce" {
		out = append(out, "--quick")
	}
	return out
}

// run runs the binary; a reproduction or its merge may exit 1 when a check
// fails at the scaled-down size (its files are written in any case).
func run(t *testing.T, args []string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Stdout = io.Discard
	return cmd
}

func wait(t *testing.T, cmd *exec.Cmd, stderr *bytes.Buffer) {
	t.Helper()
	if err := cmd.Wait(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() == 1 && strings.Contains(stderr.String(), "not expected to fail did not pass") {
			return
		}
		t.Fatalf("dpbandit %s: %v\n%s", strings.Join(cmd.Args[1:], " "), err, stderr.String())
	}
}

func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		out[rel] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

var (
	runtimeLine = regexp.MustCompile(`(?m)^- Runtime: .*$`)
	commandLn   = regexp.MustCompile("(?m)^- Command: `.*`$")
	secondsCell = regexp.MustCompile(`(?m)\|\s*[0-9.]+\s*\|$`)
	mergedFrom  = regexp.MustCompile(`(?s)\s*"merged_from": \[.*?\],?`)
	workersLine = regexp.MustCompile(`(?m)^\s*"workers": \d+,\n`)
)

// normalise removes what legitimately differs between a merge and a single
// run of the binary: README.md's runtimes and recorded --out, and
// manifest.json's merged_from and workers (how it ran, not what).
func normalise(name string, b []byte) []byte {
	switch filepath.Base(name) {
	case "README.md":
		b = runtimeLine.ReplaceAll(b, []byte("- Runtime: (normalised)"))
		b = commandLn.ReplaceAll(b, []byte("- Command: (normalised)"))
		b = secondsCell.ReplaceAll(b, []byte("| (s) |"))
	case "manifest.json":
		b = mergedFrom.ReplaceAll(b, nil)
		b = workersLine.ReplaceAll(b, nil)
	}
	return b
}

// TestIndexedJobsRunLocally runs each Indexed Job's shard commands, as the
// manifest writes them (index substituted, the volume a temporary
// directory) but scaled down (--horizon, --runs, and --quick for a
// reproduction), as separate concurrent processes of the built binary; then
// its merge Job's command; and compares the merged directory with a single
// unsharded run of the same command: summary.json, curves.csv, runs.csv,
// checks.json, results.md, the figures and every sweep's files byte for
// byte, README.md and manifest.json after removing the runtimes, the
// recorded --out, merged_from and workers.
func TestIndexedJobsRunLocally(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	for _, sj := range shardedJobs(t, loadManifests(t)) {
		t.Run(sj.job.name(), func(t *testing.T) {
			root := t.TempDir()
			c := containers(sj.job)[0]
			var cmds []*exec.Cmd
			var errs []*bytes.Buffer
			var single []string
			for i := range sj.n {
				args := scaleDown(rebase(commandLine(t, sj.job, c, i), sj.mountPaths, root), 300, 3)
				if i == 0 {
					for _, a := range args {
						switch {
						case strings.HasPrefix(a, "--shard="):
						case strings.HasPrefix(a, "--out="):
							single = append(single, "--out="+filepath.Join(root, "single"))
						default:
							single = append(single, a)
						}
					}
				}
				cmd := run(t, args)
				var e bytes.Buffer
				cmd.Stderr = &e
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				cmds, errs = append(cmds, cmd), append(errs, &e)
			}
			for i, cmd := range cmds {
				wait(t, cmd, errs[i])
			}
			margs := scaleDown(rebase(commandLine(t, sj.merge, containers(sj.merge)[0], 0), sj.mountPaths, root), 0, 0)
			var e bytes.Buffer
			mc := run(t, margs)
			mc.Stderr = &e
			if err := mc.Start(); err != nil {
				t.Fatal(err)
			}
			wait(t, mc, &e)
			merged, _ := flagValue(margs, "out")

			e.Reset()
			sc := run(t, single)
			sc.Stderr = &e
			if err := sc.Start(); err != nil {
				t.Fatal(err)
			}
			wait(t, sc, &e)

			got, want := files(t, merged), files(t, filepath.Join(root, "single"))
			if len(want) < 4 {
				t.Fatalf("the single run wrote only %d files", len(want))
			}
			for name, w := range want {
				g, ok := got[name]
				if !ok {
					t.Errorf("merged output lacks %s", name)
					continue
				}
				if !bytes.Equal(normalise(name, g), normalise(name, w)) {
					t.Errorf("%s differs between the merged shards and the single run", name)
				}
			}
			for name := range got {
				if _, ok := want[name]; !ok {
					t.Errorf("merged output has extra file %s", name)
				}
			}
		})
	}
}
