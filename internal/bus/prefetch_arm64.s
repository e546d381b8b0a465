#include "textflag.h"
#include "go_asm.h"

// func prefetchSlot(p unsafe.Pointer)
TEXT ·prefetchSlot(SB), NOSPLIT, $0-8
	MOVD p+0(FP), R0
	PRFM (R0), PSTL1KEEP
	PRFM 64(R0), PSTL1KEEP
	ADD  $const_slotLast, R0, R1
	PRFM (R1), PSTL1KEEP
	RET
