package store

import (
	"encoding/binary"
	"fmt"
	"math"
)

// EncodeFeatures is the stored form of a decision's feature vector (the
// chosen candidate of a contextual policy): little-endian float64s, exact.
// nil stays nil (stored as NULL).
func EncodeFeatures(x []float64) []byte {
	if x == nil {
		return nil
	}
	b := make([]byte, 8*len(x))
	for i, v := range x {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(v))
	}
	return b
}

// DecodeFeatures reads what EncodeFeatures wrote (nil: nil).
func DecodeFeatures(b []byte) ([]float64, error) {
	if b == nil {
		return nil, nil
	}
	if len(b)%8 != 0 {
		return nil, fmt.Errorf("features blob of %d bytes is not a whole number of float64s", len(b))
	}
	x := make([]float64, len(b)/8)
	for i := range x {
		x[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
	}
	return x, nil
}
