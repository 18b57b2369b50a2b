#include "textflag.h"

// The tile kernel's AMX instructions, which the Go assembler has no
// mnemonics for, in bytes. TDP_c_a_b is TDPBF16PS tmm_c, tmm_a, tmm_b
// (tmm_c += tmm_a · tmm_b); the loads are TILELOADD of tmm4–tmm7 from
// the parts' current chunks, tmm4 and tmm5 from a part's rows 0 and 16
// (stride DX), tmm6 and tmm7 from a part's two panels (stride BX).
#define TDP_0_4_6 BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xc4
#define TDP_1_4_7 BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xcc
#define TDP_2_5_6 BYTE $0xc4; BYTE $0xe2; BYTE $0x4a; BYTE $0x5c; BYTE $0xd5
#define TDP_3_5_7 BYTE $0xc4; BYTE $0xe2; BYTE $0x42; BYTE $0x5c; BYTE $0xdd
// tmm4, [SI+DX]; tmm5, [R12+DX]: a_hi
#define LOAD4_AHI BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x24; BYTE $0x16
#define LOAD5_AHI BYTE $0xc4; BYTE $0xc2; BYTE $0x7b; BYTE $0x4b; BYTE $0x2c; BYTE $0x14
// tmm4, [DI+DX]; tmm5, [AX+DX]: a_lo
#define LOAD4_ALO BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x24; BYTE $0x17
#define LOAD5_ALO BYTE $0xc4; BYTE $0xe2; BYTE $0x7b; BYTE $0x4b; BYTE $0x2c; BYTE $0x10
// tmm6, [R8+BX]; tmm7, [R13+BX]: b_hi
#define LOAD6_BHI BYTE $0xc4; BYTE $0xc2; BYTE $0x7b; BYTE $0x4b; BYTE $0x34; BYTE $0x18
#define LOAD7_BHI BYTE $0xc4; BYTE $0xc2; BYTE $0x7b; BYTE $0x4b; BYTE $0x7c; BYTE $0x1d; BYTE $0x00
// tmm6, [R9+BX]; tmm7, [R10+BX]: b_lo
#define LOAD6_BLO BYTE $0xc4; BYTE $0xc2; BYTE $0x7b; BYTE $0x4b; BYTE $0x34; BYTE $0x19
#define LOAD7_BLO BYTE $0xc4; BYTE $0xc2; BYTE $0x7b; BYTE $0x4b; BYTE $0x3c; BYTE $0x1a

// HI_LO_PRODUCTS, from a chunk's a_hi and b_lo in tmm4–7: a_hi·b_lo, then
// a_hi·b_hi and a_lo's tiles, each loaded as soon as the products before
// it are done with the tile it replaces; a_lo·b_hi is left to the caller.
#define HI_LO_PRODUCTS TDP_0_4_6; TDP_1_4_7; TDP_2_5_6; LOAD6_BHI; TDP_3_5_7; LOAD7_BHI; TDP_0_4_6; TDP_1_4_7; LOAD4_ALO; TDP_2_5_6; TDP_3_5_7; LOAD5_ALO

// func tileBF16x32(kc int, a, alo *uint16, lda int, b, blo *uint16, bstep int, c *float32, ldc int, cfg *byte)
//
// c[32×32] += a[32×32·kc] · b[32·kc×32] on AMX tiles, as a_hi·b_hi +
// a_hi·b_lo + a_lo·b_hi where a, alo are a's high and low bfloat16 parts
// and b, blo b's. a's parts are rows lda bytes apart; b's are two panels bstep bytes apart,
// each of 16·kc pair rows of 64 bytes (rows 2r and 2r+1 interleaved, the
// B-tile layout); c is float32 rows ldc bytes apart. cfg is the 64-byte
// tile configuration: eight tiles of 16 rows × 64 bytes. Tiles 0–3 hold
// c, 4–5 the two 16-row halves of a part's chunk, 6–7 the two panels'
// chunk of a part of b: every product of a chunk goes into the same four
// accumulators, the tiles of a part loaded once per chunk. The Go
// assembler has no AMX mnemonics, so they are spelled in bytes; the tiles
// are released before returning, leaving no state behind.
TEXT ·tileBF16x32(SB), NOSPLIT, $0-80
	MOVQ kc+0(FP), CX
	MOVQ a+8(FP), SI
	MOVQ lda+24(FP), DX
	MOVQ b+32(FP), R8
	MOVQ bstep+48(FP), R13
	ADDQ R8, R13
	MOVQ c+56(FP), DI
	MOVQ ldc+64(FP), R10
	MOVQ cfg+72(FP), AX
	MOVQ R10, R11
	SHLQ $4, R11
	ADDQ DI, R11 // c row 16
	MOVQ DX, R12
	SHLQ $4, R12
	ADDQ SI, R12 // a row 16
	MOVQ $64, BX

	// LDTILECFG [AX]
	BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0x00
	LEAQ 64(DI), AX
	LEAQ 64(R11), R9
	// TILELOADD tmm0, [DI+R10]; tmm1, [AX+R10]; tmm2, [R11+R10]; tmm3, [R9+R10]
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x04; BYTE $0x17
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7b; BYTE $0x4b; BYTE $0x0c; BYTE $0x10
	BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x14; BYTE $0x13
	BYTE $0xc4; BYTE $0x82; BYTE $0x7b; BYTE $0x4b; BYTE $0x1c; BYTE $0x11

	// The low parts in the registers c's addresses leave: DI a_lo, AX its
	// row 16, R9 and R10 b_lo's two panels.
	MOVQ alo+16(FP), DI
	MOVQ R12, AX
	SUBQ SI, AX
	ADDQ DI, AX
	MOVQ blo+40(FP), R9
	MOVQ bstep+48(FP), R10
	ADDQ R9, R10

	// a_hi·b_lo, a_hi·b_hi, a_lo·b_hi per chunk, each tile loaded as
	// soon as the products before it are done with the tile it replaces;
	// the next chunk's first tiles are loaded in the last products of
	// this one, except on the last chunk.
	LOAD4_AHI
	LOAD5_AHI
	LOAD6_BLO
	LOAD7_BLO
	DECQ CX
	JZ   last

loop:
	HI_LO_PRODUCTS
	ADDQ $64, SI
	ADDQ $64, R12
	ADDQ $64, DI
	ADDQ $64, AX
	ADDQ $1024, R8
	ADDQ $1024, R13
	ADDQ $1024, R9
	ADDQ $1024, R10
	TDP_0_4_6
	TDP_1_4_7
	LOAD4_AHI
	TDP_2_5_6
	LOAD6_BLO
	TDP_3_5_7
	LOAD5_AHI
	LOAD7_BLO
	DECQ CX
	JNZ  loop

last:
	HI_LO_PRODUCTS
	TDP_0_4_6
	TDP_1_4_7
	TDP_2_5_6
	TDP_3_5_7

	MOVQ c+56(FP), DI
	MOVQ ldc+64(FP), R10
	MOVQ R10, R11
	SHLQ $4, R11
	ADDQ DI, R11
	LEAQ 64(DI), AX
	LEAQ 64(R11), R9
	// TILESTORED [DI+R10], tmm0; [AX+R10], tmm1; [R11+R10], tmm2; [R9+R10], tmm3
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x04; BYTE $0x17
	BYTE $0xc4; BYTE $0xa2; BYTE $0x7a; BYTE $0x4b; BYTE $0x0c; BYTE $0x10
	BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x14; BYTE $0x13
	BYTE $0xc4; BYTE $0x82; BYTE $0x7a; BYTE $0x4b; BYTE $0x1c; BYTE $0x11
	// TILERELEASE
	BYTE $0xc4; BYTE $0xe2; BYTE $0x78; BYTE $0x49; BYTE $0xc0
	RET

// func splitBF16AVX512(hi, lo *uint16, src *float32, n int)
//
// hi[i], lo[i] = src[i]'s bfloat16 parts (splitBF16) for i < n, n a
// multiple of 32: hi rounded by VCVTNE2PS2BF16, widened back to float32
// and subtracted (exactly), the rest rounded again; lo is zero where hi
// is not finite.
TEXT ·splitBF16AVX512(SB), NOSPLIT, $0-32
	MOVQ hi+0(FP), DI
	MOVQ lo+8(FP), R8
	MOVQ src+16(FP), SI
	MOVQ n+24(FP), CX
	SHRQ $5, CX
	JZ   done
	MOVL $0x7f800000, AX
	VPBROADCASTD AX, Z8

loop:
	VMOVUPS (SI), Z0
	VMOVUPS 64(SI), Z1
	// VCVTNE2PS2BF16 Z0, Z1, Z2: Z0's values to Z2's low half, Z1's to its high half
	BYTE $0x62; BYTE $0xf2; BYTE $0x77; BYTE $0x48; BYTE $0x72; BYTE $0xd0
	VMOVUPS Z2, (DI)
	VPMOVZXWD Y2, Z3
	VEXTRACTI64X4 $1, Z2, Y4
	VPMOVZXWD Y4, Z4
	VPSLLD $16, Z3, Z3
	VPSLLD $16, Z4, Z4
	// K1, K2: where hi is finite (its exponent not all ones)
	VPANDD Z8, Z3, Z5
	VPCMPD $4, Z8, Z5, K1
	VPANDD Z8, Z4, Z6
	VPCMPD $4, Z8, Z6, K2
	VSUBPS.Z Z3, Z0, K1, Z5
	VSUBPS.Z Z4, Z1, K2, Z6
	// VCVTNE2PS2BF16 Z5, Z6, Z7
	BYTE $0x62; BYTE $0xf2; BYTE $0x4f; BYTE $0x48; BYTE $0x72; BYTE $0xfd
	VMOVUPS Z7, (R8)
	ADDQ $128, SI
	ADDQ $64, DI
	ADDQ $64, R8
	DECQ CX
	JNZ  loop

done:
	VZEROUPPER
	RET
