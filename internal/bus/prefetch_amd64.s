#include "textflag.h"
#include "go_asm.h"

// func prefetchSlot(p unsafe.Pointer)
//
// PREFETCHW is written as bytes: 0F 0D /1, with a one-byte displacement
// where there is one.
TEXT ·prefetchSlot(SB), NOSPLIT, $0-8
	MOVQ p+0(FP), AX
	BYTE $0x0F; BYTE $0x0D; BYTE $0x08                      // PREFETCHW (AX)
	BYTE $0x0F; BYTE $0x0D; BYTE $0x48; BYTE $0x40          // PREFETCHW 64(AX)
	BYTE $0x0F; BYTE $0x0D; BYTE $0x48; BYTE $const_slotLast // PREFETCHW slotLast(AX)
	RET

// func hasPrefetchW() bool
//
// CPUID leaf 0x80000001, ECX bit 8 (3DNowPrefetch): PREFETCHW is there.
TEXT ·hasPrefetchW(SB), NOSPLIT, $0-1
	MOVL $0x80000000, AX
	CPUID
	CMPL AX, $0x80000001
	JCS  none
	MOVL $0x80000001, AX
	XORL CX, CX
	CPUID
	SHRL $8, CX
	ANDL $1, CX
	MOVB CX, ret+0(FP)
	RET
none:
	MOVB $0, ret+0(FP)
	RET
