#include "textflag.h"

// func rdtsc() uint64
TEXT ·rdtsc(SB), NOSPLIT, $0-8
	RDTSC
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, ret+0(FP)
	RET

// func rdtscOn() (ticks uint64, before, after uint32)
//
// RDPID is written as bytes: F3 0F C7 /7, register form, into BX and CX.
TEXT ·rdtscOn(SB), NOSPLIT, $0-16
	BYTE $0xF3; BYTE $0x0F; BYTE $0xC7; BYTE $0xFB // RDPID BX
	RDTSC
	BYTE $0xF3; BYTE $0x0F; BYTE $0xC7; BYTE $0xF9 // RDPID CX
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, ticks+0(FP)
	MOVL BX, before+8(FP)
	MOVL CX, after+12(FP)
	RET

// func rdtscOrdered() uint64
//
// LFENCE keeps RDTSC from running ahead of the loads before it.
TEXT ·rdtscOrdered(SB), NOSPLIT, $0-8
	LFENCE
	RDTSC
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, ret+0(FP)
	RET
