/* dtype conversion between every pair of dtypes.  Float -> integer truncates
 * toward zero and saturates at the integer's range (NaN becomes 0), so the
 * result is defined everywhere; anything -> bool is `x != 0`. */
#include "tpf.h"


#define SAT(T, LO, HI) static inline T sat_##T(double v) {                    \
    if (v != v) return 0;                                                      \
    if (v <= (double)LO) return LO;                                            \
    if (v >= (double)HI) return HI;                                            \
    return (T)v;                                                               \
}
SAT(int8_t, INT8_MIN, INT8_MAX) SAT(uint8_t, 0, UINT8_MAX) SAT(int16_t, INT16_MIN, INT16_MAX)
SAT(int32_t, INT32_MIN, INT32_MAX)
static inline int64_t sat_int64_t(double v) {
    if (v != v) return 0;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    if (v >= 9223372036854775808.0) return INT64_MAX;
    return (int64_t)v;
}

/* element getters returning the value in the widest type of its kind */
static inline double getf(int dt, const void *p, int64_t i) {
    switch (dt) {
    case TPF_F16: return tpf_half_to_float(((const uint16_t *)p)[i]);
    case TPF_BF16: return tpf_bf16_to_float(((const uint16_t *)p)[i]);
    case TPF_F32: return ((const float *)p)[i];
    case TPF_F64: return ((const double *)p)[i];
    default: return 0;
    }
}
static inline int64_t geti(int dt, const void *p, int64_t i) {
    switch (dt) {
    case TPF_I8: return ((const int8_t *)p)[i];
    case TPF_U8: return ((const uint8_t *)p)[i];
    case TPF_I16: return ((const int16_t *)p)[i];
    case TPF_I32: return ((const int32_t *)p)[i];
    case TPF_I64: return ((const int64_t *)p)[i];
    case TPF_BOOL: return ((const uint8_t *)p)[i] != 0;
    default: return 0;
    }
}

static int is_float(int dt) { return dt <= TPF_F64; }

/* A double as a float rounded to odd: converting that float to half or bfloat16
 * then rounds exactly as a direct double -> half conversion would (no double rounding). */
static inline float round_to_odd(double v) {
    float f = (float)v;
    if ((double)f != v && v == v && f - f == 0) {
        uint32_t b;
        memcpy(&b, &f, 4);
        if (fabs((double)f) > fabs(v)) b -= 1;   /* rounded away from zero: step back one ulp */
        b |= 1;
        memcpy(&f, &b, 4);
    }
    return f;
}

static void cast_range(int src, const void *x, int dst, void *o, int64_t lo, int64_t hi) {
    if (is_float(src)) {
        for (int64_t i = lo; i < hi; i++) {
            double v = getf(src, x, i);
            switch (dst) {
            case TPF_F16: ((uint16_t *)o)[i] = tpf_float_to_half(round_to_odd(v)); break;
            case TPF_BF16: ((uint16_t *)o)[i] = tpf_float_to_bf16(round_to_odd(v)); break;
            case TPF_F32: ((float *)o)[i] = (float)v; break;
            case TPF_F64: ((double *)o)[i] = v; break;
            case TPF_I8: ((int8_t *)o)[i] = sat_int8_t(v); break;
            case TPF_U8: ((uint8_t *)o)[i] = sat_uint8_t(v); break;
            case TPF_I16: ((int16_t *)o)[i] = sat_int16_t(v); break;
            case TPF_I32: ((int32_t *)o)[i] = sat_int32_t(v); break;
            case TPF_I64: ((int64_t *)o)[i] = sat_int64_t(v); break;
            case TPF_BOOL: ((uint8_t *)o)[i] = v != 0; break;
            }
        }
    } else {
        for (int64_t i = lo; i < hi; i++) {
            int64_t v = geti(src, x, i);
            switch (dst) {
            case TPF_F16: ((uint16_t *)o)[i] = tpf_float_to_half(round_to_odd((double)v)); break;
            case TPF_BF16: ((uint16_t *)o)[i] = tpf_float_to_bf16(round_to_odd((double)v)); break;
            case TPF_F32: ((float *)o)[i] = (float)v; break;
            case TPF_F64: ((double *)o)[i] = (double)v; break;
            case TPF_I8: ((int8_t *)o)[i] = (int8_t)v; break;      /* wraps, like C and NumPy */
            case TPF_U8: ((uint8_t *)o)[i] = (uint8_t)v; break;
            case TPF_I16: ((int16_t *)o)[i] = (int16_t)v; break;
            case TPF_I32: ((int32_t *)o)[i] = (int32_t)v; break;
            case TPF_I64: ((int64_t *)o)[i] = v; break;
            case TPF_BOOL: ((uint8_t *)o)[i] = v != 0; break;
            }
        }
    }
}

/* fast loops for the common float32 <-> others conversions */
#define FAST(SRC_T, DST_T) { const SRC_T *X = x; DST_T *O = o; for (int64_t i = lo; i < hi; i++) O[i] = (DST_T)X[i]; }
#define FASTF(SRC_T, DST_T, CONV) { const SRC_T *X = x; DST_T *O = o; for (int64_t i = lo; i < hi; i++) O[i] = CONV(X[i]); }

/* casts to or from complex64/complex128: real -> complex gets a zero imaginary part, complex -> real
 * keeps the real part (as TensorFlow), complex -> bool is `x != 0` */
static int is_cplx(int dt) { return dt == TPF_C64 || dt == TPF_C128; }

static int cast_complex(int src, const void *x, int dst, void *o, int64_t n) {
    if (src < 0 || src > TPF_C128 || dst < 0 || dst > TPF_C128) return TPF_EBADDTYPE;
    if (n < 0) return TPF_EBADSIZE;
    if (src == dst) { memcpy(o, x, (size_t)n * tpf_dtype_size(src)); return TPF_OK; }
    int nt = TPF_NTHREADS(n);
    int64_t chunk = (n + nt - 1) / nt;
    TPF_PFOR(t, nt,
        int64_t lo = t * chunk, hi = lo + chunk < n ? lo + chunk : n;
        for (int64_t i = lo; i < hi; i++) {
            double re, im = 0;
            if (src == TPF_C64) { re = ((const float *)x)[2 * i]; im = ((const float *)x)[2 * i + 1]; }
            else if (src == TPF_C128) { re = ((const double *)x)[2 * i]; im = ((const double *)x)[2 * i + 1]; }
            else if (is_float(src)) re = getf(src, x, i);
            else re = (double)geti(src, x, i);
            if (dst == TPF_C64) { ((float *)o)[2 * i] = (float)re; ((float *)o)[2 * i + 1] = (float)im; }
            else if (dst == TPF_C128) { ((double *)o)[2 * i] = re; ((double *)o)[2 * i + 1] = im; }
            else if (dst == TPF_BOOL) ((uint8_t *)o)[i] = re != 0 || im != 0;
            else if (src == TPF_C64) { float f = (float)re; cast_range(TPF_F32, &f, dst, (char *)o + i * tpf_dtype_size(dst), 0, 1); }
            else cast_range(TPF_F64, &re, dst, (char *)o + i * tpf_dtype_size(dst), 0, 1);
        }
    );
    return TPF_OK;
}

int tpf_cast(int src, const void *x, int dst, void *o, int64_t n) {
    if (is_cplx(src) || is_cplx(dst)) return cast_complex(src, x, dst, o, n);
    if (src < 0 || src >= TPF_NDTYPES || dst < 0 || dst >= TPF_NDTYPES) return TPF_EBADDTYPE;
    if (n < 0) return TPF_EBADSIZE;
    if (src == dst) { memcpy(o, x, (size_t)n * tpf_dtype_size(src)); return TPF_OK; }
    int nt = TPF_NTHREADS(n);
    int64_t chunk = (n + nt - 1) / nt;
    TPF_PFOR(t, nt,
        int64_t lo = t * chunk, hi = lo + chunk < n ? lo + chunk : n;
        if (lo >= hi) continue;
        if (src == TPF_F16 && dst == TPF_F32) FASTF(uint16_t, float, tpf_half_to_float)
        else if (src == TPF_F32 && dst == TPF_F16) FASTF(float, uint16_t, tpf_float_to_half)
        else if (src == TPF_BF16 && dst == TPF_F32) FASTF(uint16_t, float, tpf_bf16_to_float)
        else if (src == TPF_F32 && dst == TPF_BF16) FASTF(float, uint16_t, tpf_float_to_bf16)
        else if (src == TPF_I32 && dst == TPF_F32) FAST(int32_t, float)
        else if (src == TPF_F32 && dst == TPF_F64) FAST(float, double)
        else if (src == TPF_F64 && dst == TPF_F32) FAST(double, float)
        else if (src == TPF_I64 && dst == TPF_F32) FAST(int64_t, float)
        else if (src == TPF_U8 && dst == TPF_F32) FAST(uint8_t, float)
        else if (src == TPF_BOOL && dst == TPF_F32) FAST(uint8_t, float)
        else if (src == TPF_I32 && dst == TPF_I64) FAST(int32_t, int64_t)
        else cast_range(src, x, dst, o, lo, hi);
    );
    return TPF_OK;
}
