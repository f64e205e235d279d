//go:build !purego

#include "textflag.h"

// func poissonFillAVX(st *poissonStreams, thr *[9][16]uint16, w *uint16, n int)
//
// n/16 steps of four xoshiro256** streams (one per 64-bit lane of Y0–Y3,
// the state words s0–s3); each step's four 64-bit outputs are sixteen
// 16-bit uniforms u, and each becomes the count of thresholds it reaches
// (see poissonThresholds), accumulated by subtracting the all-ones masks
// of VPCMPGTW.
// COUNT adds 1 to each 16-bit lane of Y7 whose biased uniform (Y4) is
// above the threshold row at off(R8).
#define COUNT(off) \
	VPCMPGTW off(R8), Y4, Y8 \
	VPSUBW   Y8, Y7, Y7

TEXT ·poissonFillAVX(SB), NOSPLIT, $0-32
	MOVQ st+0(FP), SI
	MOVQ thr+8(FP), R8
	MOVQ w+16(FP), DI
	MOVQ n+24(FP), CX
	VMOVDQU 0(SI), Y0
	VMOVDQU 32(SI), Y1
	VMOVDQU 64(SI), Y2
	VMOVDQU 96(SI), Y3
	XORQ AX, AX

loop:
	// u = rotl(s1·5, 7)·9
	VPSLLQ $2, Y1, Y4
	VPADDQ Y1, Y4, Y4
	VPSLLQ $7, Y4, Y5
	VPSRLQ $57, Y4, Y4
	VPOR   Y4, Y5, Y4
	VPSLLQ $3, Y4, Y5
	VPADDQ Y4, Y5, Y4

	// the state's step
	VPSLLQ $17, Y1, Y5
	VPXOR  Y0, Y2, Y2
	VPXOR  Y1, Y3, Y3
	VPXOR  Y2, Y1, Y1
	VPXOR  Y3, Y0, Y0
	VPXOR  Y5, Y2, Y2
	VPSLLQ $45, Y3, Y5
	VPSRLQ $19, Y3, Y3
	VPOR   Y5, Y3, Y3

	// counts
	VPXOR    0(R8), Y4, Y4
	VPXOR    Y7, Y7, Y7
	COUNT(32)
	COUNT(64)
	COUNT(96)
	COUNT(128)
	COUNT(160)
	COUNT(192)
	COUNT(224)
	COUNT(256)
	VMOVDQU  Y7, (DI)(AX*2)

	ADDQ $16, AX
	CMPQ AX, CX
	JLT  loop

	VMOVDQU Y0, 0(SI)
	VMOVDQU Y1, 32(SI)
	VMOVDQU Y2, 64(SI)
	VMOVDQU Y3, 96(SI)
	VZEROUPPER
	RET
