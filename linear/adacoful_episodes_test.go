package linear

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAdaCOFULEpisodesFollowTheDeterminant: an episode ends (and θ̃ is
// refreshed from a noisy release) only when det Ā has grown by more than a
// factor 1 + trigger since the last episode end, so after T updates there are
// at most ln(det A_T / det λI)/ln(1 + trigger) episodes — about d·ln(1 +
// T/(dλ))/ln(1 + trigger), a few dozen here — and at least one. A rule that
// ends episodes on anything else (every step, say) refreshes θ̃ from far
// noisier releases.
func TestAdaCOFULEpisodesFollowTheDeterminant(t *testing.T) {
	const d, T = 4, 2000
	opts := AdaCOFULOptions{Dim: d, Rho: 1, Lambda: 1, Alpha: 1, Trigger: 1}
	p, err := NewAdaCOFUL(opts, rand.New(rand.NewPCG(3, 4)))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(5, 6))
	x := make([]float64, d)
	for range T {
		var n float64
		for i := range x {
			x[i] = r.NormFloat64()
			n += x[i] * x[i]
		}
		for i := range x {
			x[i] /= math.Sqrt(n) // unit norm
		}
		p.Update(x, r.Float64())
	}
	bound := p.logdet / math.Log1p(opts.Trigger)
	// ln det A_T/det λI ≤ d·ln(1 + T/(dλ)) for unit features.
	if lim := d * math.Log1p(T/(d*opts.Lambda)); !(p.logdet > 0 && p.logdet <= lim) {
		t.Errorf("accumulated ln det = %v, want in (0, %v]", p.logdet, lim)
	}
	if !(p.episodes >= 1 && float64(p.episodes) <= bound) {
		t.Errorf("%d episodes after %d updates, want between 1 and ln det/ln(1+trigger) = %.2f", p.episodes, T, bound)
	}
}
