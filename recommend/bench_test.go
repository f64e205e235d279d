package recommend

import (
	"context"
	"testing"
)

// BenchmarkRecommendDefault is `dpbandit recommend --arms 3 --horizon 1e4
// --budget epsilon=1,delta=1e-6`: every served private policy and UCB1 on
// the panel, DefaultPanelRuns runs per instance, GOMAXPROCS workers.
func BenchmarkRecommendDefault(b *testing.B) {
	o := Options{Arms: 3, Horizon: 1e4, Budget: budget1, Seed: 1}
	for b.Loop() {
		if _, err := Run(context.Background(), o); err != nil {
			b.Fatal(err)
		}
	}
}
