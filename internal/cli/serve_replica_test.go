package cli

import (
	"bytes"
	"strings"
	"testing"
)

// serve --replica refuses what it cannot run, naming the bad value.
func TestServeReplicaRefusals(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"serve", "--replica", "--db", "./x.db", "--admin-key", "a-long-enough-admin-key"}, "--replica needs a PostgreSQL --db"},
		{[]string{"serve", "--replica", "--db", "postgres://u@127.0.0.1:1/db", "--lease", "10ms", "--admin-key", "a-long-enough-admin-key"}, "--lease 10ms"},
		{[]string{"serve", "--replica", "--db", "postgres://u@127.0.0.1:1/db", "--lease", "1h", "--admin-key", "a-long-enough-admin-key"}, "[200ms, 10m]"},
	} {
		var out, errb bytes.Buffer
		code := Main(c.args, &out, &errb)
		if code == 0 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want an error saying %q", c.args, code, errb.String(), c.want)
		}
	}
	var out, errb bytes.Buffer
	Main([]string{"serve", "--help"}, &out, &errb)
	for _, f := range []string{"--replica", "--lease", "docs/replicas.md"} {
		if !strings.Contains(out.String(), f) {
			t.Errorf("serve --help lacks %s", f)
		}
	}
}
