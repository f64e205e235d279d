package eval

import (
	"bufio"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
)

// synth describes a synthetic logged bandit problem: contexts uniform on
// [0,1]^D, Bernoulli rewards with P(r=1 | x, a) = σ(θ_a·x − 1), a softmax
// logging policy and a different softmax target.
type synth struct {
	N, A, D, P int
	Seed       uint64
	PiE, QHat  bool // write pi_e_<a> / qhat_<a> columns
}

// write generates the log as CSV: 9 decimals for probabilities (the
// target's last action gets 1 minus the others, so rows sum to exactly
// 1 in decimal).
func (s synth) write(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	r := rand.New(rand.NewPCG(s.Seed, 7))
	theta := make([]float64, s.A*s.D)
	for k := range theta {
		theta[k] = r.NormFloat64()
	}
	bw.WriteString("action,reward,pscore")
	if s.P > 1 {
		bw.WriteString(",position")
	}
	for j := range s.D {
		bw.WriteString(",context_" + strconv.Itoa(j))
	}
	if s.PiE {
		for a := range s.A {
			bw.WriteString(",pi_e_" + strconv.Itoa(a))
		}
	}
	if s.QHat {
		for a := range s.A {
			bw.WriteString(",qhat_" + strconv.Itoa(a))
		}
	}
	bw.WriteByte('\n')
	x := make([]float64, s.D)
	mu := make([]float64, s.A)
	pb := make([]float64, s.A)
	pe := make([]float64, s.A)
	var buf []byte
	for range s.N {
		for j := range x {
			x[j] = math.Round(r.Float64()*1e6) / 1e6
		}
		for a := range s.A {
			var z float64
			for j := range x {
				z += theta[a*s.D+j] * x[j]
			}
			mu[a] = 1 / (1 + math.Exp(-(z - 1)))
		}
		softmax(pb, mu, 2)
		softmax(pe, mu, 8)
		// Round the probabilities to 9 decimals, the last one the complement.
		round9(pb)
		round9(pe)
		u, a := r.Float64(), 0
		for a < s.A-1 && u >= pb[a] {
			u -= pb[a]
			a++
		}
		rew := 0
		if r.Float64() < mu[a] {
			rew = 1
		}
		buf = strconv.AppendInt(buf[:0], int64(a), 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, int64(rew), 10)
		buf = append(buf, ',')
		buf = strconv.AppendFloat(buf, pb[a], 'f', 9, 64)
		if s.P > 1 {
			buf = append(buf, ',')
			buf = strconv.AppendInt(buf, int64(r.IntN(s.P)), 10)
		}
		for _, v := range x {
			buf = append(buf, ',')
			buf = strconv.AppendFloat(buf, v, 'f', 6, 64)
		}
		if s.PiE {
			for _, v := range pe {
				buf = append(buf, ',')
				buf = strconv.AppendFloat(buf, v, 'f', 9, 64)
			}
		}
		if s.QHat {
			for _, v := range mu {
				buf = append(buf, ',')
				buf = strconv.AppendFloat(buf, v+0.05*(r.Float64()-0.5), 'f', 6, 64)
			}
		}
		buf = append(buf, '\n')
		bw.Write(buf)
	}
	return bw.Flush()
}

func softmax(out, z []float64, beta float64) {
	var s float64
	for k, v := range z {
		out[k] = math.Exp(beta * v)
		s += out[k]
	}
	for k := range out {
		out[k] /= s
	}
}

// round9 rounds p to 9 decimals keeping every entry positive and the sum 1
// (the largest entry takes the remainder).
func round9(p []float64) {
	big := 0
	for k := range p {
		p[k] = max(math.Round(p[k]*1e9), 1) / 1e9
		if p[k] > p[big] {
			big = k
		}
	}
	var s float64
	for k := range p {
		if k != big {
			s += math.Round(p[k] * 1e9)
		}
	}
	p[big] = (1e9 - s) / 1e9
}
