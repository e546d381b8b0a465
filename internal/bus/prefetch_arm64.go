package bus

// canPrefetch reports whether prefetchSlot may be called: PRFM is in every
// arm64 CPU.
const canPrefetch = true
