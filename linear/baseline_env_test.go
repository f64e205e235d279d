package linear_test

import (
	"github.com/dpbandit/dpbandit/ctxenv"
	"github.com/dpbandit/dpbandit/linear"
)

// The baselines' tests learn on ctxenv's synthetic problem; ctxenv imports
// linear, so the environment is built here, in the external test package,
// and handed to the package's own tests.
func init() {
	linear.BLNewEnv = func(spec string) (linear.BLEnv, error) {
		e, err := ctxenv.Parse(spec)
		if err != nil {
			return nil, err
		}
		return e.ForRun(0), nil
	}
}
