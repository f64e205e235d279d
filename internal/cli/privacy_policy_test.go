package cli

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
)

// TestPrivacyPolicyContextual checks that `privacy policy` states contextual
// policies too, and that the noise scale derived from (ε, δ) is reported as
// `sigma` in params (issue 4): AdaPrivate-TS at ε = 1, δ = 1e-5 has
// σ = 1/√(2ρ_BS) = 4.901 ([ADA]; docs/linear.md §1.11 table).
func TestPrivacyPolicyContextual(t *testing.T) {
	m := runPrivacyJSON(t, "privacy", "policy", "--policy", "adaprivate-ts:epsilon=1,delta=1e-5",
		"--arms", "5", "--dim", "20", "--horizon", "10000", "--delta", "1e-5")
	params, ok := m["params"].(map[string]any)
	if !ok {
		t.Fatalf("no params in %v", m)
	}
	sigma, _ := params["sigma"].(float64)
	if math.Abs(sigma-4.901) > 5e-4 {
		t.Errorf("sigma = %v, want 4.901 (Riyazat & Ukwatta, AdaPrivate-TS; docs/linear.md §1.11)", sigma)
	}
	// The certified GDP value 1/σ converts to at most the target ε = 1.
	if eps, _ := m["epsilon"].(float64); !(eps > 0 && eps <= 1) {
		t.Errorf("certified ε = %v, want in (0, 1]", eps)
	}
	_, stderr, code := runPrivacyCLI(t, "privacy", "policy", "--policy", "adaprivate-ts", "--arms", "5", "--horizon", "100")
	if code != 2 || !strings.Contains(stderr, "--dim") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Errorf("missing --dim: exit %d, stderr %q; want exit 2 and one line naming --dim", code, stderr)
	}
}

// TestPoliciesListsBothKinds: `dpbandit policies` lists the K-armed and the
// contextual policies, each with its kind and whether the service runs it.
func TestPoliciesListsBothKinds(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"policies", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var m struct {
		Policies []struct {
			Name, Kind string
			Served     bool
		}
	}
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	served := map[string]bool{}
	for _, p := range m.Policies {
		got[p.Name], served[p.Name] = p.Kind, p.Served
	}
	for name, kind := range map[string]string{"ts-gaussian": "k-armed", "dp-se": "k-armed", "adaprivate-ts": "contextual", "lints": "contextual"} {
		if got[name] != kind {
			t.Errorf("%s: kind %q, want %q", name, got[name], kind)
		}
	}
	if !served["ts-gaussian"] || !served["dp-se"] || served["jdp-linucb"] {
		t.Errorf("served: ts-gaussian %v, dp-se %v (want both true), jdp-linucb %v (want false: simulation only)", served["ts-gaussian"], served["dp-se"], served["jdp-linucb"])
	}
}
