/* raycast_avx512.c - the eight-lane kernel of raycast_avx2.c compiled for
 * AVX-512VL (chosen at run time): the same operations in the same order,
 * so the same answers, with 32 vector registers instead of 16 (the leaf
 * test's error bounds no longer spill) and the masks in mask registers
 * (RC_KMASK: compares write them directly). FP contraction is off: with
 * AVX-512 the compiler could fuse a multiply and an add into an FMA, which
 * rounds once where the error bounds count two roundings. This kernel also
 * walks ray streams (raycast_stream.h: sixteen rays a vector). */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#define KFN __attribute__((target("avx2,avx512f,avx512vl,avx512dq,popcnt")))
#define TRAVERSE rc_traverse_avx512
#define TRAVERSE_FALLBACK rc_traverse_avx512
#define TRAVERSE_SEQ rc_traverse_seq_avx512
#define TRAVERSE_SEQ_FALLBACK rc_traverse_seq_avx512
#define TRAVERSE_MANY rc_traverse_many_avx512
#define TRAVERSE_MANY_FALLBACK rc_traverse_many_avx512
#define RC_KMASK	/* masks in AVX-512's mask registers */
#define TRAVERSE_STREAM
#define STREAM rc_stream_avx512

#include "raycast_avx2.c"
