//go:build !purego

#include "textflag.h"

// func dots2x5AVX(w0, w1 *uint16, a, b, c, d, e *float64, n int, s *[12]float64)
//
// Four rounds per iteration: the two weight vectors are widened from 16-bit
// integers to doubles, and each of the five columns is loaded once and multiplied
// into both weight vectors' accumulators (Y0–Y4 for w0, Y5–Y9 for w1) with
// VFMADD231PD. Y13 and Y14 sum the weights. Each accumulator's lanes are
// then combined as (l0 + l2) + (l1 + l3), the order dots2x5 documents.
// COLUMN loads four values of the column at ptr and adds their products
// with the two weight vectors (Y10, Y11) into acc0 and acc1.
#define COLUMN(ptr, acc0, acc1) \
	VMOVUPD     (ptr)(AX*8), Y12 \
	VFMADD231PD Y12, Y10, acc0   \
	VFMADD231PD Y12, Y11, acc1

TEXT ·dots2x5AVX(SB), NOSPLIT, $0-72
	MOVQ w0+0(FP), SI
	MOVQ w1+8(FP), DI
	MOVQ a+16(FP), R8
	MOVQ b+24(FP), R9
	MOVQ c+32(FP), R10
	MOVQ d+40(FP), R11
	MOVQ e+48(FP), R12
	MOVQ n+56(FP), CX
	MOVQ s+64(FP), DX
	VXORPD Y0, Y0, Y0
	VXORPD Y1, Y1, Y1
	VXORPD Y2, Y2, Y2
	VXORPD Y3, Y3, Y3
	VXORPD Y4, Y4, Y4
	VXORPD Y5, Y5, Y5
	VXORPD Y6, Y6, Y6
	VXORPD Y7, Y7, Y7
	VXORPD Y8, Y8, Y8
	VXORPD Y9, Y9, Y9
	VXORPD Y13, Y13, Y13
	VXORPD Y14, Y14, Y14
	XORQ AX, AX

loop:
	VPMOVZXWD (SI)(AX*2), X10
	VCVTDQ2PD X10, Y10
	VPMOVZXWD (DI)(AX*2), X11
	VCVTDQ2PD X11, Y11
	VADDPD Y10, Y13, Y13
	VADDPD Y11, Y14, Y14

	COLUMN(R8, Y0, Y5)
	COLUMN(R9, Y1, Y6)
	COLUMN(R10, Y2, Y7)
	COLUMN(R11, Y3, Y8)
	COLUMN(R12, Y4, Y9)

	ADDQ $4, AX
	CMPQ AX, CX
	JLT  loop

#define REDUCE(Y, X, off) \
	VEXTRACTF128 $1, Y, X12 \
	VADDPD       X12, X, X  \
	VHADDPD      X, X, X    \
	VMOVSD       X, off(DX)

	REDUCE(Y0, X0, 0)
	REDUCE(Y1, X1, 8)
	REDUCE(Y2, X2, 16)
	REDUCE(Y3, X3, 24)
	REDUCE(Y4, X4, 32)
	REDUCE(Y5, X5, 40)
	REDUCE(Y6, X6, 48)
	REDUCE(Y7, X7, 56)
	REDUCE(Y8, X8, 64)
	REDUCE(Y9, X9, 72)
	REDUCE(Y13, X13, 80)
	REDUCE(Y14, X14, 88)
	VZEROUPPER
	RET
