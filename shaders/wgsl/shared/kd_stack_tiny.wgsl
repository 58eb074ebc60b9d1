// A 2-entry short stack: overflows all the time, so tests exercise the restart fallback.
const KD_SHORT_STACK: u32 = 2u;
