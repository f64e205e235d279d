package bandit_test

import (
	"math"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/bandit"
	_ "github.com/dpbandit/dpbandit/mab" // registers the K-armed policies
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		in      string
		name    string
		params  bandit.Params
		set     []string
		wantErr string
	}{
		{in: "ts-gaussian", name: "ts-gaussian", params: bandit.Params{}},
		{in: " mts-gaussian:b=10,c=5 ", name: "mts-gaussian", params: bandit.Params{"b": 10, "c": 5}, set: []string{"b", "c"}},
		{in: "dp-ts-ucb:alpha=0.5", name: "dp-ts-ucb", params: bandit.Params{"alpha": 0.5}, set: []string{"alpha"}},
		{in: "x:a=1e-3", name: "x", params: bandit.Params{"a": 1e-3}, set: []string{"a"}},
		{in: ":b=1", wantErr: "missing policy name"},
		{in: "x:b", wantErr: `"b" is not key=value`},
		{in: "x:b=one", wantErr: "value of b is not a number"},
		{in: "x:b=1,b=2", wantErr: "parameter b given twice"},
		{in: "x:=2", wantErr: "is not key=value"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			sp, err := bandit.ParseSpec(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseSpec(%q) error = %v, want it to contain %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if sp.Name != tt.name || len(sp.Params) != len(tt.params) || len(sp.Set) != len(tt.set) {
				t.Fatalf("ParseSpec(%q) = %+v", tt.in, sp)
			}
			for k, v := range tt.params {
				if sp.Params[k] != v {
					t.Errorf("param %s = %v, want %v", k, sp.Params[k], v)
				}
			}
			for i, k := range tt.set {
				if sp.Set[i] != k {
					t.Errorf("Set[%d] = %s, want %s", i, sp.Set[i], k)
				}
			}
		})
	}
}

func TestSpecStringRoundTrip(t *testing.T) {
	sp, err := bandit.ParseSpec("mts-gaussian:c=5,b=10")
	if err != nil {
		t.Fatal(err)
	}
	if got := sp.String(); got != "mts-gaussian:b=10,c=5" {
		t.Fatalf("String() = %q, want canonical sorted form", got)
	}
	again, err := bandit.ParseSpec(sp.String())
	if err != nil || again.String() != sp.String() {
		t.Fatalf("round trip: %v %q", err, again.String())
	}
}

func TestParamCheck(t *testing.T) {
	p := bandit.Param{Name: "b", Min: 0, Max: math.Inf(1), Integer: true}
	if err := p.Check("mts-gaussian", 3); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []float64{-1, 1.5, math.NaN()} {
		err := p.Check("mts-gaussian", bad)
		if err == nil || !strings.Contains(err.Error(), "parameter b") || !strings.Contains(err.Error(), "[0, ∞)") {
			t.Errorf("Check(%v) = %v, want an error naming b and [0, ∞)", bad, err)
		}
	}
	q := bandit.Param{Name: "alpha", Min: 0, Max: 1}
	if got := q.Range(); got != "[0, 1]" {
		t.Errorf("Range() = %q", got)
	}
}

func TestCompleteAndLookup(t *testing.T) {
	d, err := bandit.Lookup(bandit.KArmed, "mts-gaussian")
	if err != nil {
		t.Fatal(err)
	}
	p, err := d.Complete(bandit.Params{"b": 3})
	if err != nil {
		t.Fatal(err)
	}
	if p["b"] != 3 {
		t.Errorf("b = %v, want the given 3", p["b"])
	}
	for _, q := range d.Params {
		if q.Name != "b" && p[q.Name] != q.Default {
			t.Errorf("%s = %v, want default %v", q.Name, p[q.Name], q.Default)
		}
	}
	if _, err := d.Complete(bandit.Params{"bogus": 1}); err == nil || !strings.Contains(err.Error(), `unknown parameter "bogus"`) {
		t.Errorf("unknown parameter error = %v", err)
	}
	none := bandit.Descriptor{Name: "plain"}
	if _, err := none.Complete(bandit.Params{"bogus": 1}); err == nil || !strings.Contains(err.Error(), "plain takes no parameters") {
		t.Errorf("unknown parameter of a parameterless policy: %v, want it to say it takes none", err)
	}
	if _, err := bandit.Lookup(bandit.KArmed, "no-such-policy"); err == nil || !strings.Contains(err.Error(), "ts-gaussian") {
		t.Errorf("Lookup error should list the known names, got %v", err)
	}
	if _, err := bandit.Lookup(bandit.ContextualKind, "ts-gaussian"); err == nil {
		t.Error("a K-armed policy must not be found as contextual")
	}
}

func TestRegisterRejectsBadDescriptors(t *testing.T) {
	mustPanic := func(name string, d bandit.Descriptor) {
		t.Helper()
		defer func() {
			if recover() == nil {
				t.Errorf("%s: Register did not panic", name)
			}
		}()
		bandit.Register(d)
	}
	mustPanic("no constructor", bandit.Descriptor{Name: "test-none"})
	mustPanic("duplicate", bandit.Descriptor{Name: "ts-gaussian",
		New: func(bandit.Setting, bandit.Params, bandit.Rand) (bandit.Policy, error) { return nil, nil }})
}
