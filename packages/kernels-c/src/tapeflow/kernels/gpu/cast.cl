/* dtype conversion between every pair of dtypes (csrc/cast.c on the device):
 * cast_<src>_<dst>.  Float -> integer truncates toward zero and saturates (NaN
 * becomes 0); integer -> integer wraps; anything -> bool is x != 0; conversions
 * to float16/bfloat16 from a wider value round once (through round-to-odd). */

/* A wide value as a float rounded to odd, so that rounding it again to half or
 * bfloat16 equals one direct rounding. */
DEV float round_to_odd(wf v) {
    float f = (float)v;
    if ((wf)f != v && v == v && f - f == 0) {
        u32 b = AS_U32(f);
        if (fabs((wf)f) > fabs(v)) b -= 1;
        b |= 1;
        f = AS_F32(b);
    }
    return f;
}

#define SAT(NAME, T, LO, HI)                                   \
DEV T sat_##NAME(wf v) {                                       \
    if (v != v) return 0;                                      \
    if (v <= (wf)(LO)) return LO;                              \
    if (v >= (wf)(HI)) return HI;                              \
    return (T)v;                                               \
}
SAT(i8, i8, -128, 127)
SAT(u8, u8, 0, 255)
SAT(i16, i16, -32768, 32767)
SAT(i32, i32, (-2147483647 - 1), 2147483647)
DEV i64 sat_i64(wf v) {
    if (v != v) return 0;
    if (v <= (wf)-9223372036854775808.0) return (-9223372036854775807L - 1);
    if (v >= (wf)9223372036854775808.0) return 9223372036854775807L;
    return (i64)v;
}

/* loads: float kinds widen to wf, integer kinds (and bool) to i64 */
#define LOAD_f16(p, i) ((wf)tpf_half_to_float(p[i]))
#define LOAD_bf16(p, i) ((wf)tpf_bf16_to_float(p[i]))
#define LOAD_f32(p, i) ((wf)p[i])
#define LOAD_f64(p, i) ((wf)p[i])
#define LOAD_i8(p, i) ((i64)p[i])
#define LOAD_u8(p, i) ((i64)p[i])
#define LOAD_i16(p, i) ((i64)p[i])
#define LOAD_i32(p, i) ((i64)p[i])
#define LOAD_i64(p, i) ((i64)p[i])
#define LOAD_b(p, i) ((i64)(p[i] != 0))

/* stores from a wide float (F) or from an int64 (I) */
#define FROMF_f16(v) tpf_float_to_half(round_to_odd(v))
#define FROMF_bf16(v) tpf_float_to_bf16(round_to_odd(v))
#define FROMF_f32(v) ((float)(v))
#define FROMF_f64(v) ((double)(v))
#define FROMF_i8(v) sat_i8(v)
#define FROMF_u8(v) sat_u8(v)
#define FROMF_i16(v) sat_i16(v)
#define FROMF_i32(v) sat_i32(v)
#define FROMF_i64(v) sat_i64(v)
#define FROMF_b(v) ((u8)((v) != 0))
#define FROMI_f16(v) tpf_float_to_half(round_to_odd((wf)(v)))
#define FROMI_bf16(v) tpf_float_to_bf16(round_to_odd((wf)(v)))
#define FROMI_f32(v) ((float)(v))
#define FROMI_f64(v) ((double)(v))
#define FROMI_i8(v) ((i8)(v))
#define FROMI_u8(v) ((u8)(v))
#define FROMI_i16(v) ((i16)(v))
#define FROMI_i32(v) ((i32)(v))
#define FROMI_i64(v) ((i64)(v))
#define FROMI_b(v) ((u8)((v) != 0))

#define CAST_K(S, ST, D, DT, KIND)                                                  \
KERNEL cast_##S##_##D(const G ST *X, G DT *O, i64 n) {                              \
    i64 i = GID0();                                                                 \
    if (i >= n) return;                                                             \
    O[i] = FROM##KIND##_##D(LOAD_##S(X, i));                                        \
}

/* every destination of one source */
#ifdef TPF_FP64
#define CAST_TO_F64(S, ST, KIND) CAST_K(S, ST, f64, double, KIND)
#else
#define CAST_TO_F64(S, ST, KIND)
#endif
#define CAST_ALL(S, ST, KIND)                                                       \
    CAST_K(S, ST, f16, u16, KIND) CAST_K(S, ST, bf16, u16, KIND)                    \
    CAST_K(S, ST, f32, float, KIND) CAST_TO_F64(S, ST, KIND)                        \
    CAST_K(S, ST, i8, i8, KIND) CAST_K(S, ST, u8, u8, KIND) CAST_K(S, ST, i16, i16, KIND) \
    CAST_K(S, ST, i32, i32, KIND) CAST_K(S, ST, i64, i64, KIND) CAST_K(S, ST, b, u8, KIND)

CAST_ALL(f16, u16, F)
CAST_ALL(bf16, u16, F)
CAST_ALL(f32, float, F)
#ifdef TPF_FP64
CAST_ALL(f64, double, F)
#endif
CAST_ALL(i8, i8, I)
CAST_ALL(u8, u8, I)
CAST_ALL(i16, i16, I)
CAST_ALL(i32, i32, I)
CAST_ALL(i64, i64, I)
CAST_ALL(b, u8, I)
