package eval

import (
	"bytes"
	"encoding/csv"
	"math/big"
	"strconv"
	"testing"
)

// TestOBPAgreement checks the reader and the estimators end to end against
// an independent, straightforward computation of OBP's formulas
// (obp/ope/estimators.py: InverseProbabilityWeighting,
// SelfNormalizedInverseProbabilityWeighting, DirectMethod, DoublyRobust):
// the expected values come from encoding/csv + strconv.ParseFloat and sums
// in 200-bit big.Float, the package's from ReadCSV and float64 sums.
// Agreement is required to 1e-12 relative.
func TestOBPAgreement(t *testing.T) {
	var buf bytes.Buffer
	if err := (synth{N: 3000, A: 6, D: 3, Seed: 11, PiE: true, QHat: true}).write(&buf); err != nil {
		t.Fatal(err)
	}
	raw := buf.Bytes()
	l, err := ReadCSV(bytes.NewReader(raw), "gen.csv")
	if err != nil {
		t.Fatal(err)
	}

	recs, err := csv.NewReader(bytes.NewReader(raw)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for j, h := range recs[0] {
		col[h] = j
	}
	f := func(rec []string, name string) float64 {
		v, err := strconv.ParseFloat(rec[col[name]], 64)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	nf := func(x float64) *big.Float { return new(big.Float).SetPrec(200).SetFloat64(x) }
	zero := func() *big.Float { return nf(0) }
	ips, sw, dm, dr := zero(), zero(), zero(), zero()
	n := len(recs) - 1
	for _, rec := range recs[1:] {
		a, _ := strconv.Atoi(rec[col["action"]])
		r, ps := f(rec, "reward"), f(rec, "pscore")
		// iw = action_dist[i, a_i, pos] / pscore (float64, as OBP's numpy).
		w := f(rec, "pi_e_"+strconv.Itoa(a)) / ps
		ips.Add(ips, new(big.Float).Mul(nf(w), nf(r)))
		sw.Add(sw, nf(w))
		// DM: Σ_a π_e(a|x) q̂(x,a) (np.average with weights π_e).
		d := zero()
		for k := range 6 {
			d.Add(d, new(big.Float).Mul(nf(f(rec, "pi_e_"+strconv.Itoa(k))), nf(f(rec, "qhat_"+strconv.Itoa(k)))))
		}
		dm.Add(dm, d)
		// DR: DM_i + iw (r − q̂(x, a_i)).
		res := new(big.Float).Sub(nf(r), nf(f(rec, "qhat_"+strconv.Itoa(a))))
		dr.Add(dr, d)
		dr.Add(dr, res.Mul(res, nf(w)))
	}
	N := nf(float64(n))
	want := map[Estimator]float64{}
	want[IPS], _ = new(big.Float).Quo(ips, N).Float64()
	want[SNIPS], _ = new(big.Float).Quo(ips, sw).Float64()
	want[DM], _ = new(big.Float).Quo(dm, N).Float64()
	want[DR], _ = new(big.Float).Quo(dr, N).Float64()

	rep, err := Evaluate(l, l.PiE, Options{Estimators: []Estimator{IPS, SNIPS, DM, DR}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.N != n || rep.A != 6 {
		t.Fatalf("read %d rounds, %d actions; want %d, 6", rep.N, rep.A, n)
	}
	for _, r := range rep.Results {
		if !near(r.Estimate, want[r.Estimator], 1e-12) {
			t.Errorf("%s: %.17g, independent %.17g", r.Estimator, r.Estimate, want[r.Estimator])
		}
	}
}
