// AVX2 kernel of the int8 coarse pass (see int8.go).

#include "textflag.h"

// func dotsI8AVX2(q, rows []int8, dims int, out []int32)
TEXT ·dotsI8AVX2(SB), NOSPLIT, $0-80
	MOVQ q_base+0(FP), SI
	MOVQ rows_base+24(FP), DI
	MOVQ dims+48(FP), CX
	MOVQ out_base+56(FP), R8
	MOVQ out_len+64(FP), R9
	TESTQ R9, R9
	JZ done
rowloop:
	VPXOR Y0, Y0, Y0
	VPXOR Y5, Y5, Y5
	MOVQ SI, R10
	MOVQ CX, R11
inner:
	VPMOVSXBW (R10), Y1
	VPMOVSXBW (DI), Y2
	VPMADDWD Y1, Y2, Y3
	VPADDD Y3, Y0, Y0
	VPMOVSXBW 16(R10), Y1
	VPMOVSXBW 16(DI), Y2
	VPMADDWD Y1, Y2, Y4
	VPADDD Y4, Y5, Y5
	ADDQ $32, R10
	ADDQ $32, DI
	SUBQ $32, R11
	JNZ inner
	VPADDD Y5, Y0, Y0
	VEXTRACTI128 $1, Y0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0x4E, X0, X1
	VPADDD X1, X0, X0
	VPSHUFD $0xB1, X0, X1
	VPADDD X1, X0, X0
	VMOVD X0, (R8)
	ADDQ $4, R8
	DECQ R9
	JNZ rowloop
done:
	VZEROUPPER
	RET
