package ctxenv

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dpbandit/dpbandit/env"
)

func TestParseSynthetic(t *testing.T) {
	for _, c := range []struct{ spec, name string }{
		{"synthetic-linear:d=20,pool=100,k=5", "synthetic-linear:d=20,pool=100,k=5,theta=2,link=logistic,seed=1,problem=fixed"},
		{"synthetic-linear", "synthetic-linear:d=20,pool=100,k=5,theta=2,link=logistic,seed=1,problem=fixed"},
		{" Synthetic-Linear : K=3 , D=4,pool=10,link=LINEAR,theta=0.5,seed=18446744073709551615,problem=per-run",
			"synthetic-linear:d=4,pool=10,k=3,theta=0.5,link=linear,seed=18446744073709551615,problem=per-run"},
	} {
		e, err := Parse(c.spec)
		if err != nil {
			t.Fatalf("%s: %v", c.spec, err)
		}
		if e.Name() != c.name {
			t.Errorf("%s: Name %q, want %q", c.spec, e.Name(), c.name)
		}
		again, err := Parse(e.Name())
		if err != nil || again.Name() != e.Name() {
			t.Fatalf("round trip of %q: %v", e.Name(), err)
		}
		if !slices.Equal(again.(*Synthetic).Theta(), e.(*Synthetic).Theta()) {
			t.Errorf("round trip of %q changed θ*", e.Name())
		}
	}
}

func TestParseDatasets(t *testing.T) {
	for _, c := range []struct{ spec, name string }{
		{"mushroom", "mushroom"},
		{"mushroom:", "mushroom"},
		{"shuttle", "shuttle:clip=3"},
		{"shuttle:clip=inf", "shuttle:clip=+Inf"},
		{"obd", "obd:campaign=men,k=all,prior=100,features=item"},
		{"obd:campaign=women,k=46,prior=0,features=item+id", "obd:campaign=women,k=all,prior=0,features=item+id"},
		{"OBD:Campaign=Women,k=7,features=ID", "obd:campaign=women,k=7,prior=100,features=id"},
	} {
		e := mustParse(t, c.spec)
		if e.Name() != c.name {
			t.Errorf("%s: Name %q, want %q", c.spec, e.Name(), c.name)
		}
		again := mustParse(t, e.Name())
		if again.Name() != e.Name() || again.Dim() != e.Dim() || again.K() != e.K() {
			t.Errorf("round trip of %q", e.Name())
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ spec, want string }{
		{"bernoulli:0.5", `unknown contextual environment kind "bernoulli"`},
		{"synthetic-linear:d=0", "d=0 is outside [1,10000]"},
		{"synthetic-linear:d=x", `d="x" is not an integer`},
		{"synthetic-linear:pool=0", "pool=0 is outside [1,1000000]"},
		{"synthetic-linear:k=101", "k=101 is outside [1,pool=100]"},
		{"synthetic-linear:k=0", "k=0 is outside [1,pool=100]"},
		{"synthetic-linear:theta=0", "theta=0 is outside (0,1e+06]"},
		{"synthetic-linear:theta=nan", `theta="nan" is not a number`},
		{"synthetic-linear:link=probit", `link="probit" is not one of logistic, linear`},
		{"synthetic-linear:seed=-1", `seed="-1" is not an integer in [0,18446744073709551615]`},
		{"synthetic-linear:problem=each", `problem="each" is not one of fixed, per-run`},
		{"synthetic-linear:dim=3", `synthetic-linear has no parameter "dim" (keys: d, pool, k, theta, link, seed, problem)`},
		{"synthetic-linear:d=3,d=4", "parameter d is given twice"},
		{"synthetic-linear:d", `parameter "d" at position 1 is not KEY=VALUE`},
		{"synthetic-linear:d=", "d= has no value"},
		{"synthetic-linear:d=10000,pool=10000", "pool×d = 10000×10000 exceeds 50000000"},
		{"mushroom:k=2", `mushroom has no parameter "k" (keys: none)`},
		{"shuttle:clip=0", "shuttle clip=0 is outside (0,+Inf]"},
		{"shuttle:clip=-1", "shuttle clip=-1 is outside (0,+Inf]"},
		{"obd:campaign=kids", `obd campaign="kids" is not men or women`},
		{"obd:k=0", "obd k=0 is outside [1,items] (or all)"},
		{"obd:prior=-1", "obd prior=-1 is outside [0,+Inf)"},
		{"obd:prior=inf", "obd prior=+Inf is outside [0,+Inf)"},
		{"obd:features=user", `features="user" is not one of item, id, item+id`},
	} {
		_, err := ParseData(c.spec, "/nonexistent")
		if err == nil {
			t.Errorf("%s: no error", c.spec)
			continue
		}
		if !errors.Is(err, ErrSpec) || !errors.Is(err, env.ErrSpec) {
			t.Errorf("%s: error %v does not wrap ErrSpec", c.spec, err)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %q does not contain %q", c.spec, err, c.want)
		}
	}
}

// k beyond the item count is reported once the data is read.
func TestParseOBDKRange(t *testing.T) {
	_, err := ParseData("obd:campaign=men,k=35", testDataDir())
	skipNoData(t, nilIfSpec(err))
	if err == nil || !errors.Is(err, ErrSpec) || !strings.Contains(err.Error(), "obd k=35 is outside [1,34]") {
		t.Errorf("obd k=35: %v", err)
	}
}

// nilIfSpec hides spec errors from skipNoData.
func nilIfSpec(err error) error {
	if errors.Is(err, ErrSpec) {
		return nil
	}
	return err
}

func TestMissingData(t *testing.T) {
	for _, spec := range []string{"mushroom", "shuttle", "obd:campaign=women"} {
		_, err := ParseData(spec, t.TempDir())
		if !errors.Is(err, ErrNoData) {
			t.Errorf("%s: %v does not wrap ErrNoData", spec, err)
		} else if !strings.Contains(err.Error(), DataEnv) {
			t.Errorf("%s: %v does not say how to set the data directory", spec, err)
		}
	}
}

func TestDataDirEnv(t *testing.T) {
	t.Setenv(DataEnv, "/some/where")
	if d, err := DataDir(); err != nil || d != "/some/where" {
		t.Errorf("DataDir() = %q, %v", d, err)
	}
	t.Setenv(DataEnv, "")
	// From this package's directory, the walk finds ../../shared/data when
	// it exists.
	if d, err := DataDir(); err == nil && !strings.HasSuffix(d, "shared/data") {
		t.Errorf("DataDir() = %q", d)
	}
}

func TestHelpAndKinds(t *testing.T) {
	h := Help()
	for _, k := range Kinds() {
		if !strings.Contains(h, k.Syntax) || !IsKind(k.Example) {
			t.Errorf("help or IsKind misses %s", k.Name)
		}
		if _, err := ParseData(k.Example, testDataDir()); err != nil && !errors.Is(err, ErrNoData) {
			t.Errorf("example %q: %v", k.Example, err)
		}
	}
	if IsKind("bernoulli:0.5") || !IsKind(" OBD:campaign=men") {
		t.Error("IsKind")
	}
	if !slices.Equal(Names(), []string{"synthetic-linear", "mushroom", "shuttle", "obd", "movielens", "jester"}) {
		t.Errorf("Names %v", Names())
	}
}
