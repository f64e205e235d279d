package eval

import (
	"strings"
	"testing"
)

// ReadService keeps the usable lines in order, counts the others by
// reason, and reads the chosen candidate's features as the context.
func TestReadService(t *testing.T) {
	in := strings.Join([]string{
		`{"seq":1,"event_id":"a","arm_index":2,"features":[0.5,0.25],"propensity":0.25,"propensity_released":true,"reward":1}`,
		`{"seq":2,"event_id":"b","arm_index":0,"features":[0,1],"propensity":0.5,"propensity_released":true}`,
		`{"seq":3,"event_id":"c","arm_index":1,"features":[1,0],"propensity_released":false,"reward":0}`,
		`{"seq":4,"event_id":"d","arm_index":1,"features":[1,0],"propensity":0,"propensity_released":true,"reward":0}`,
		`{"seq":5,"event_id":"e","arm_index":1,"features":[1,0],"propensity_released":true,"reward_purged":true}`,
		``,
		`{"seq":6,"event_id":"f","arm_index":0,"features":[0.1,0.2],"propensity":1,"propensity_released":true,"reward":0.5}`,
	}, "\n")
	l, c, err := ReadService(strings.NewReader(in), "log")
	if err != nil {
		t.Fatal(err)
	}
	if l.N != 2 || l.A != 3 || l.D != 2 || l.Action[0] != 2 || l.Action[1] != 0 || l.PScore[0] != 0.25 || l.Reward[1] != 0.5 || l.Context[3] != 0.2 {
		t.Errorf("log: %+v", l)
	}
	if c.Lines != 6 || c.String() != "1 no reward yet, 1 reward deleted, 1 no released propensity, 1 propensity estimated as 0" {
		t.Errorf("counts: %d lines, %q", c.Lines, c.String())
	}
	for _, bad := range []struct{ in, want string }{
		{`{"arm_index":0,"features":[1],"propensity":0.5,"propensity_released":true,"reward":1}` + "\n" + `{"arm_index":0,"propensity":0.5,"propensity_released":true,"reward":1}`, "line 2"},
		{`{"arm_index":-1,"propensity":0.5,"propensity_released":true,"reward":1}`, "arm_index -1"},
		{`not json`, "not a decision-log line"},
		{`{"arm_index":0,"propensity_released":false,"reward":1}`, "no usable rows"},
	} {
		if _, _, err := ReadService(strings.NewReader(bad.in), "log"); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want %q", bad.in, err, bad.want)
		}
	}
}

// No input makes ReadService panic; what it accepts is a valid log.
func FuzzReadService(f *testing.F) {
	f.Add(`{"seq":1,"arm_index":2,"features":[0.5],"propensity":0.25,"propensity_released":true,"reward":1}`)
	f.Add(`{"arm_index":1e9,"propensity":1e-300,"propensity_released":true,"reward":-1e308}`)
	f.Add("{}\n{\"reward\":1}")
	f.Fuzz(func(t *testing.T, in string) {
		l, _, err := ReadService(strings.NewReader(in), "fuzz")
		if err != nil {
			return
		}
		if len(l.Action) != l.N || len(l.Context) != l.N*l.D {
			t.Fatalf("inconsistent log: %+v", l)
		}
		for i, p := range l.PScore {
			if !(p > 0 && p <= 1) || int(l.Action[i]) >= l.A {
				t.Fatalf("row %d: pscore %v, action %d of %d", i, p, l.Action[i], l.A)
			}
		}
	})
}
