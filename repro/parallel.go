package repro

import (
	"runtime"

	"golang.org/x/sync/errgroup"
)

// parallel calls f(0), ..., f(n−1) on the context's workers (GOMAXPROCS
// when --workers is unset) and returns the first error. The calls write
// their results into slots of their own index, so the results do not
// depend on the number of workers.
func (c *Context) parallel(n int, f func(i int) error) error {
	workers := c.opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	var g errgroup.Group
	g.SetLimit(workers)
	for i := range n {
		g.Go(func() error { return f(i) })
	}
	return g.Wait()
}
