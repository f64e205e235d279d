package eval

import "math/bits"

// The bootstrap's multiplicities come from xoshiro256** (Blackman & Vigna,
// "Scrambled linear pseudorandom number generators", ACM TOMS 2021), four
// independent streams per replicate run side by side, so that four 64-bit
// draws fill one 256-bit register: each draw gives four 16-bit uniforms,
// and each uniform becomes a Poisson(1) count through poissonTable. The
// AVX2 kernel (poisson_amd64.s) and the portable loop below produce the
// same counts, in the same order.

// poissonStreams is one replicate's generator: four xoshiro256** states,
// stored state word by state word (s0 of streams 0..3, then s1, s2, s3).
type poissonStreams [16]uint64

// seedStreams seeds replicate j's four streams from seed with SplitMix64,
// the seeding xoshiro's authors recommend; stream l of replicate j starts
// from seed ⊕ (4j + l + 1)·γ, so no two streams share a SplitMix64 start.
func seedStreams(seed uint64, j int) (st poissonStreams) {
	for l := range 4 {
		x := seed ^ (uint64(4*j+l+1) * 0x9e3779b97f4a7c15)
		var any uint64
		for w := range 4 {
			x += 0x9e3779b97f4a7c15
			st[4*w+l] = splitmix(x - 0x9e3779b97f4a7c15)
			any |= st[4*w+l]
		}
		if any == 0 { // the one state xoshiro cannot leave
			st[l] = 1
		}
	}
	return st
}

// poissonThresholds holds, for the AVX2 kernel, the bias 0x8000 (row 0)
// and, for k = 1..8, (T_k − 1) ⊕ 0x8000 (row k), each repeated in all 16
// lanes, where T_k is the first 16-bit value poissonTable maps to k or
// more: the count of u is the number of k with u ≥ T_k, which the kernel
// evaluates as the signed comparison (u ⊕ 0x8000) > ((T_k − 1) ⊕ 0x8000).
var poissonThresholds = func() *[9][16]uint16 {
	var t [9][16]uint16
	for q := range 16 {
		t[0][q] = 0x8000
	}
	for k := 1; k <= 8; k++ {
		first := len(poissonTable) // T_k: no value reaches k
		for u, c := range poissonTable {
			if int(c) >= k {
				first = u
				break
			}
		}
		// T_k ≥ 1 (poissonTable[0] = 0); T_k = 65536 (unreached) would
		// wrap, and is excluded by the table's construction (every count
		// up to 8 has an entry).
		for q := range 16 {
			t[k][q] = uint16(first-1) ^ 0x8000
		}
	}
	return &t
}()

// fillPoisson writes len(w) Poisson(1) counts from st into w; len(w) is a
// multiple of 16 (one step of the four streams).
func fillPoisson(st *poissonStreams, w []uint16) {
	if len(w) == 0 {
		return
	}
	if useAVX2 {
		poissonFillAVX(st, poissonThresholds, &w[0], len(w))
		return
	}
	fillPoissonPortable(st, w)
}

// fillPoissonPortable is fillPoisson without assembly.
func fillPoissonPortable(st *poissonStreams, w []uint16) {
	for i := 0; i+16 <= len(w); i += 16 {
		for l := range 4 {
			s0, s1, s2, s3 := st[l], st[4+l], st[8+l], st[12+l]
			u := bits.RotateLeft64(s1*5, 7) * 9
			t := s1 << 17
			s2 ^= s0
			s3 ^= s1
			s1 ^= s2
			s0 ^= s3
			s2 ^= t
			s3 = bits.RotateLeft64(s3, 45)
			st[l], st[4+l], st[8+l], st[12+l] = s0, s1, s2, s3
			for q := range 4 {
				w[i+4*l+q] = uint16(poissonTable[uint16(u>>(16*q))])
			}
		}
	}
}
