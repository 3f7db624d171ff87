// AVX2 kernel of the int8 coarse pass (see int8.go for the layout).

#include "textflag.h"

// func qscanAVX2(blocks []int8, bb int, offs, vals, abss []int32, out []int32)
//
// For each block of 32 rows (bb bytes apart) and each listed group (offs[i]
// bytes into the block; vals[i] its 4 query bytes, abss[i] their absolute
// values), the 128 bytes of the group are signed by the query bytes
// (VPSIGNB), multiplied by their absolute values and summed in pairs
// (VPMADDUBSW: at most 2*127*127, no saturation), summed in fours
// (VPMADDWD by 1) and added to the 32 rows' int32 sums.
TEXT ·qscanAVX2(SB), NOSPLIT, $0-128
	MOVQ blocks_base+0(FP), SI
	MOVQ bb+24(FP), DX
	MOVQ offs_base+32(FP), R8
	MOVQ offs_len+40(FP), R9
	MOVQ vals_base+56(FP), R10
	MOVQ abss_base+80(FP), R11
	MOVQ out_base+104(FP), DI
	MOVQ out_len+112(FP), CX
	SHRQ $5, CX
	TESTQ CX, CX
	JZ done
	VPCMPEQW Y15, Y15, Y15
	VPSRLW $15, Y15, Y15
block:
	VPXOR Y0, Y0, Y0
	VPXOR Y1, Y1, Y1
	VPXOR Y2, Y2, Y2
	VPXOR Y3, Y3, Y3
	XORQ BX, BX
	TESTQ R9, R9
	JZ store
group:
	MOVLQSX (R8)(BX*4), AX
	VPBROADCASTD (R10)(BX*4), Y4
	VPBROADCASTD (R11)(BX*4), Y5
	VMOVDQU (SI)(AX*1), Y6
	VMOVDQU 32(SI)(AX*1), Y7
	VMOVDQU 64(SI)(AX*1), Y8
	VMOVDQU 96(SI)(AX*1), Y9
	VPSIGNB Y4, Y6, Y6
	VPSIGNB Y4, Y7, Y7
	VPSIGNB Y4, Y8, Y8
	VPSIGNB Y4, Y9, Y9
	VPMADDUBSW Y6, Y5, Y6
	VPMADDUBSW Y7, Y5, Y7
	VPMADDUBSW Y8, Y5, Y8
	VPMADDUBSW Y9, Y5, Y9
	VPMADDWD Y15, Y6, Y6
	VPMADDWD Y15, Y7, Y7
	VPMADDWD Y15, Y8, Y8
	VPMADDWD Y15, Y9, Y9
	VPADDD Y6, Y0, Y0
	VPADDD Y7, Y1, Y1
	VPADDD Y8, Y2, Y2
	VPADDD Y9, Y3, Y3
	INCQ BX
	CMPQ BX, R9
	JL group
store:
	VMOVDQU Y0, (DI)
	VMOVDQU Y1, 32(DI)
	VMOVDQU Y2, 64(DI)
	VMOVDQU Y3, 96(DI)
	ADDQ $128, DI
	ADDQ DX, SI
	DECQ CX
	JNZ block
done:
	VZEROUPPER
	RET
