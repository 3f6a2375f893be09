"""Numbers to and from text over whole buffers, with pyarrow's rules (``interop/cast.py``).

Parsing walks the strings where they lie (the offsets and data of ``string``/``binary`` and
their large forms, or the 16-byte views and data buffers of the view types), every offset
and view checked against its buffer, and writes the numbers straight into the output:

* integers: decimal with an optional ``-`` (none for unsigned types), any number of leading
  zeros; or ``0x``/``0X`` and up to width/4 hexadecimal digits, a bit pattern of the width;
* floats (fast_float's grammar, as pyarrow's cast): an optional sign, digits with an optional
  point, an optional exponent with digits; ``nan`` (with an optional ``(chars)``), ``inf``,
  ``infinity`` in any case.  Correctly rounded: an exact product where the digits allow
  (Clinger's fast path), else ``strtod_l``/``strtof_l`` in the C locale;
* booleans: ``true``/``false`` in any case, ``1``/``0``.

No whitespace, ``_`` or other characters anywhere.  A row that does not parse is reported
by its index (the last one, as pyarrow names the last value it could not parse).

Formatting writes integers and booleans without the GIL; doubles take the shortest digits
that read back (David Gay's, Python's ``PyOS_double_to_string``, so with the GIL), floats the
shortest of 6 to 9 correctly rounded digits that read back as the same float; both laid
out as pyarrow (double-conversion's ``ToShortest``): fixed notation for decimal exponents
-7 < k < 10 (``0.000001``, ``123456789``), else ``1.5e+20`` / ``1e-07`` style without
padding (``1e-7``).

Strings and binaries to and from their views are one pass each way without the GIL
(``text_views``: long values point into the source's data buffer, no copy; ``views_text``:
the views gathered into offsets and one data buffer), every offset and view checked.
"""
from libc.math cimport isinf
from libc.stdint cimport (int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t,
                          uint64_t)
from libc.string cimport memcpy, memset
from arrowmm._core._offsets cimport index_t as integer  # (every machine integer)
from arrowmm._core._offsets cimport offset_t

import numpy as np

from arrowmm.errors import ArrowInvalid

cdef extern from "Python.h":
    char *PyOS_double_to_string(double val, char format_code, int precision, int flags,
                                int *type) except NULL
    void PyMem_Free(void *p)

cdef extern from *:
    """
    #include <stdint.h>
    #include <stdlib.h>
    #include <string.h>
    #include <locale.h>
    #include <math.h>
    #include <float.h>
    #include <stdio.h>
    #if defined(__SSE2__)
    #include <emmintrin.h>
    #endif

    static locale_t arrowmm_c_locale = (locale_t)0;

    static int arrowmm_cast_init(void) {
        if (arrowmm_c_locale == (locale_t)0)
            arrowmm_c_locale = newlocale(LC_ALL_MASK, "C", (locale_t)0);
        return arrowmm_c_locale != (locale_t)0;
    }

    static const double arrowmm_pow10d[23] = {
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14,
        1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

    static int arrowmm_lower(uint8_t c) { return (c >= 'A' && c <= 'Z') ? c + 32 : c; }

    /* s[0:n] equals the lower-case word w (n == strlen(w)), in any case. */
    static int arrowmm_word(const uint8_t *s, int64_t n, const char *w) {
        int64_t k;
        if ((int64_t)strlen(w) != n) return 0;
        for (k = 0; k < n; k++) if (arrowmm_lower(s[k]) != (uint8_t)w[k]) return 0;
        return 1;
    }

    /* An integer of `bits` bits (signed or not) as its two's complement pattern in *out;
       0 when s[0:n] is not one pyarrow reads. */
    static int arrowmm_parse_int(const uint8_t *s, int64_t n, int bits, int is_signed,
                                 uint64_t *out) {
        uint64_t v = 0, limit;
        int neg = 0, k;
        int64_t i = 0, start19;
        if (n >= 3 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
            if (n - 2 > bits / 4) return 0;
            for (i = 2; i < n; i++) {
                uint8_t c = s[i], d;
                if (c >= '0' && c <= '9') d = c - '0';
                else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
                else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
                else return 0;
                v = (v << 4) | d;
            }
            *out = v;
            return 1;
        }
        if (n > 0 && s[0] == '-') {
            if (!is_signed) return 0;
            neg = 1;
            i = 1;
        }
        if (i == n) return 0;
        while (i < n - 1 && s[i] == '0') i++;           /* leading zeros */
        if (n - i > 20) return 0;
        start19 = i;
        for (; i < n && i < start19 + 19; i++) {       /* 19 digits cannot overflow */
            unsigned d = (unsigned)s[i] - '0';
            if (d > 9) return 0;
            v = v * 10 + d;
        }
        if (i < n) {                                   /* a 20th digit */
            unsigned d = (unsigned)s[i] - '0';
            if (d > 9 || v > 1844674407370955161ULL ||
                    (v == 1844674407370955161ULL && d > 5)) return 0;
            v = v * 10 + d;
        }
        if (is_signed) {
            limit = ((uint64_t)1) << (bits - 1);          /* |min|; max is limit - 1 */
            if (neg ? v > limit : v >= limit) return 0;
            *out = neg ? (uint64_t)0 - v : v;
        } else {
            limit = bits == 64 ? UINT64_MAX : (((uint64_t)1) << bits) - 1;
            if (v > limit) return 0;
            *out = v;
        }
        (void)k;
        return 1;
    }

    /* w * 10^e (w > 2^53, |e| <= 22) correctly rounded to a double, through one rounding
       of the 64-bit extended product (10^e is exact there): 1 and *out, or 0 where the
       product lies within its rounding error of a double's midpoint (then the double
       rounding could differ: the caller parses exactly). */
    static int arrowmm_wide_product(uint64_t w, int e, double *out) {
    #if defined(LDBL_MANT_DIG) && LDBL_MANT_DIG == 64 && (defined(__x86_64__) || defined(__i386__))
        static const long double p10[23] = {
            1e0L, 1e1L, 1e2L, 1e3L, 1e4L, 1e5L, 1e6L, 1e7L, 1e8L, 1e9L, 1e10L, 1e11L, 1e12L,
            1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L, 1e20L, 1e21L, 1e22L};
        long double z = e < 0 ? (long double)w / p10[-e] : (long double)w * p10[e];
        uint64_t bits, low;
        memcpy(&bits, &z, 8);        /* x87's 64-bit significand, its explicit 1 on top */
        low = bits & 0x7FF;          /* the 11 bits below a double's 53 */
        if (low >= 0x3FF && low <= 0x401) return 0;
        *out = (double)z;
        return 1;
    #else
        (void)w; (void)e; (void)out;
        return 0;
    #endif
    }

    /* Whether rounding the double v to a float could differ from rounding the decimal it
       came from: v exactly halfway between two floats (its 29 bits below a float's 24 are
       100...0), or outside the normal floats (then 1: undecided). */
    static int arrowmm_float_midpoint(double v) {
        double a = fabs(v);
        uint64_t bits;
        if (!(a >= (double)FLT_MIN && a <= (double)FLT_MAX)) return a != 0.0;
        memcpy(&bits, &v, 8);
        return (bits & 0x1FFFFFFFULL) == 0x10000000ULL;
    }

    /* fast_float's reading of 8 ASCII digits as one little-endian word: whether they are
       all digits, and their value (a third of the parse's time went on one digit a turn) */
    #if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    #define ARROWMM_SWAR 1
    static inline int arrowmm_eight_digits(uint64_t v) {
        return !(((v + 0x4646464646464646ULL) | (v - 0x3030303030303030ULL)) &
                 0x8080808080808080ULL);
    }
    static inline uint64_t arrowmm_eight_value(uint64_t v) {
        const uint64_t mask = 0x000000FF000000FFULL;
        const uint64_t mul1 = 0x000F424000000064ULL;  /* 100 + (1000000 << 32) */
        const uint64_t mul2 = 0x0000271000000001ULL;  /* 1 + (10000 << 32) */
        v -= 0x3030303030303030ULL;
        v = (v * 10) + (v >> 8);
        return (((v & mask) * mul1) + (((v >> 16) & mask) * mul2)) >> 32;
    }
    #else
    #define ARROWMM_SWAR 0
    #endif

    /* A float in fast_float's grammar: 1 and the value in *d (or *f when single), or 0. */
    static int arrowmm_parse_float(const uint8_t *s, int64_t n, int single,
                                   double *d, float *f) {
        int64_t i = 0, start, digits = 0, sig = 0, dropped = 0, exp10 = 0, e = 0;
        int neg = 0, eneg = 0, seen_point = 0;
        uint64_t w = 0;
        if (n > 0 && (s[0] == '+' || s[0] == '-')) { neg = s[0] == '-'; i = 1; }
        if (i < n && (arrowmm_lower(s[i]) == 'n' || arrowmm_lower(s[i]) == 'i')) {
            const uint8_t *r = s + i;
            int64_t m = n - i;
            if (arrowmm_word(r, m, "inf") || arrowmm_word(r, m, "infinity")) {
                if (single) *f = neg ? -INFINITY : INFINITY;
                else *d = neg ? -INFINITY : INFINITY;
                return 1;
            }
            if (m >= 3 && arrowmm_word(r, 3, "nan")) {
                if (m > 3) {                           /* nan(n-char-sequence) */
                    int64_t k;
                    if (m < 5 || r[3] != '(' || r[m - 1] != ')') return 0;
                    for (k = 4; k < m - 1; k++) {
                        uint8_t c = r[k];
                        if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
                              (c >= 'A' && c <= 'Z') || c == '_')) return 0;
                    }
                }
                if (single) *f = neg ? -NAN : NAN;
                else *d = neg ? -NAN : NAN;
                return 1;
            }
            return 0;
        }
        start = i;
        for (; i < n; i++) {
            uint8_t c = s[i];
    #if ARROWMM_SWAR
            if (w != 0 && sig <= 11 && n - i >= 8) {   /* 8 digits at once, past any lead */
                uint64_t chunk;
                memcpy(&chunk, s + i, 8);
                if (arrowmm_eight_digits(chunk)) {
                    w = w * 100000000 + arrowmm_eight_value(chunk);
                    sig += 8;
                    digits += 8;
                    if (seen_point) exp10 -= 8;
                    i += 7;
                    continue;
                }
            }
    #endif
            if (c >= '0' && c <= '9') {
                digits++;
                if (w == 0 && c == '0') {                 /* a leading zero */
                    if (seen_point) exp10--;
                    continue;
                }
                if (sig < 19) { w = w * 10 + (c - '0'); sig++; if (seen_point) exp10--; }
                else { dropped = 1; if (!seen_point) exp10++; }
            } else if (c == '.' && !seen_point) {
                seen_point = 1;
            } else {
                break;
            }
        }
        if (digits == 0) return 0;
        if (i < n) {
            if (s[i] != 'e' && s[i] != 'E') return 0;
            i++;
            if (i < n && (s[i] == '+' || s[i] == '-')) { eneg = s[i] == '-'; i++; }
            if (i == n) return 0;
            for (; i < n; i++) {
                uint8_t c = s[i];
                if (c < '0' || c > '9') return 0;
                if (e < 100000000) e = e * 10 + (c - '0');
            }
            exp10 += eneg ? -e : e;
        }
        if (w == 0) {
            if (single) *f = neg ? -0.0f : 0.0f;
            else *d = neg ? -0.0 : 0.0;
            return 1;
        }
        if (!dropped && exp10 >= -22 && exp10 <= 22) {
            double v;
            if (w <= ((uint64_t)1 << 53)) {           /* Clinger: one correctly rounded op */
                v = (double)w;
                v = exp10 < 0 ? v / arrowmm_pow10d[-exp10] : v * arrowmm_pow10d[exp10];
            } else if (!arrowmm_wide_product(w, (int)exp10, &v)) {
                goto slow;
            }
            if (!single) { *d = neg ? -v : v; return 1; }
            /* a float from the correctly rounded double: the same as from the decimal,
               unless the double is exactly halfway between two floats */
            if (!arrowmm_float_midpoint(v)) { *f = neg ? -(float)v : (float)v; return 1; }
        }
    slow:
        {   /* the rest: the C library's correctly rounded parse of the same characters */
            char small[64];
            char *text = n < 64 ? small : (char *)malloc((size_t)n + 1);
            if (text == NULL) return -1;
            memcpy(text, s, (size_t)n);
            text[n] = 0;
            if (single) *f = strtof_l(text, NULL, arrowmm_c_locale);
            else *d = strtod_l(text, NULL, arrowmm_c_locale);
            if (text != small) free(text);
        }
        (void)start;
        return 1;
    }

    /* Booleans as pyarrow reads them: 1 and *b, or 0. */
    static int arrowmm_parse_bool(const uint8_t *s, int64_t n, uint8_t *b) {
        if (n == 1 && (s[0] == '1' || s[0] == '0')) { *b = s[0] == '1'; return 1; }
        if (arrowmm_word(s, n, "true")) { *b = 1; return 1; }
        if (arrowmm_word(s, n, "false")) { *b = 0; return 1; }
        return 0;
    }

    /* A decimal in plain notation ([+-]digits[.digits], no exponent) as its unscaled int64 at
       `scale` (0..18): 1 when read exactly (no nonzero digit past the scale, |value| < 10^18),
       else 0, for the exact path to decide (exponents, long numbers, cut digits, bad text). */
    static int arrowmm_parse_decimal(const uint8_t *s, int64_t n, int scale, int64_t *out) {
        int64_t i = 0;
        int neg = 0, any = 0, point = 0, fraction = 0, k;
        uint64_t v = 0;
        if (n > 0 && (s[0] == '+' || s[0] == '-')) { neg = s[0] == '-'; i = 1; }
        for (; i < n; i++) {
            uint8_t c = s[i];
            if (c >= '0' && c <= '9') {
                any = 1;
                if (point && ++fraction > scale) {
                    if (c != '0') return 0;
                    continue;
                }
                v = v * 10 + (uint64_t)(c - '0');
                if (v >= 1000000000000000000ULL) return 0;
            } else if (c == '.' && !point) {
                point = 1;
            } else {
                return 0;
            }
        }
        if (!any) return 0;
        for (k = fraction < scale ? fraction : scale; k < scale; k++) {
            v *= 10;
            if (v >= 1000000000000000000ULL) return 0;
        }
        *out = neg ? -(int64_t)v : (int64_t)v;
        return 1;
    }

    /* Decimal digits of v, most significant first, into out; their count. */
    static int arrowmm_utoa(uint64_t v, char *out) {
        char tmp[24];
        int k = 0, j;
        do { tmp[k++] = (char)('0' + v % 10); v /= 10; } while (v);
        for (j = 0; j < k; j++) out[j] = tmp[k - 1 - j];
        return k;
    }

    /* A number with sign, significant digits (no trailing zero) and decimal exponent k
       (the first digit's power of ten) laid out as pyarrow's ToShortest: fixed for
       -7 < k < 10, else d.ddde+kk; its length. */
    static int arrowmm_layout(int neg, const char *digits, int nd, int k, char *out) {
        int p = 0, j;
        if (neg) out[p++] = '-';
        if (k < -6 || k >= 10) {
            out[p++] = digits[0];
            if (nd > 1) { out[p++] = '.'; memcpy(out + p, digits + 1, nd - 1); p += nd - 1; }
            out[p++] = 'e';
            out[p++] = k < 0 ? '-' : '+';
            p += arrowmm_utoa((uint64_t)(k < 0 ? -k : k), out + p);
        } else if (k < 0) {
            out[p++] = '0'; out[p++] = '.';
            for (j = 0; j < -k - 1; j++) out[p++] = '0';
            memcpy(out + p, digits, nd); p += nd;
        } else {
            for (j = 0; j <= k; j++) out[p++] = j < nd ? digits[j] : '0';
            if (nd > k + 1) { out[p++] = '.'; memcpy(out + p, digits + k + 1, nd - k - 1); p += nd - k - 1; }
        }
        return p;
    }

    /* The digits (trailing zeros dropped) and exponent of a "d.ddde[+-]x" text. */
    static int arrowmm_sci_digits(const char *text, char *digits, int *k) {
        int nd = 0, e = 0, eneg = 0;
        const char *c = text;
        if (*c == '-') c++;
        for (; *c && *c != 'e' && *c != 'E'; c++) if (*c >= '0' && *c <= '9') digits[nd++] = *c;
        if (*c) {
            c++;
            if (*c == '-' || *c == '+') { eneg = *c == '-'; c++; }
            for (; *c; c++) e = e * 10 + (*c - '0');
        }
        while (nd > 1 && digits[nd - 1] == '0') nd--;
        *k = eneg ? -e : e;
        return nd;
    }

    /* Whether digits (nd of them) times 10^(k - nd + 1) reads back as the float f. */
    static int arrowmm_reads_back(float f, int neg, const char *digits, int nd, int k) {
        char text[48];
        int p = 0;
        if (neg) text[p++] = '-';
        memcpy(text + p, digits, nd); p += nd;
        p += sprintf(text + p, "e%d", k - nd + 1);
        return strtof_l(text, NULL, arrowmm_c_locale) == f;
    }

    /* Floats to integers (O: int32_t, int64_t or uint64_t), each valid one checked to be an
       integer in [lo, hi) within O's range (NaN and infinities fail): the first that is not,
       or -1; the rest of out is then unset.  A block at a time with no exit inside, so that
       the compiler vectorizes the int32 forms (8 bytes out, as the int64 forms wrote before,
       then narrowed, took twice pyarrow's time). */
    #define ARROWMM_FLOAT_TO_INT(NAME, T, O)                                               \
    static int64_t NAME(const T *v, const uint8_t *ok, int64_t n, double lo, double hi,    \
                        O *out) {                                                          \
        int64_t start, end, i;                                                             \
        for (start = 0; start < n; start = end) {                                          \
            int flag = 0;                                                                  \
            end = n - start > 2048 ? start + 2048 : n;                                     \
            if (ok == NULL) {                                                              \
                for (i = start; i < end; i++) {                                            \
                    double x = (double)v[i];                                               \
                    int inside = (x >= lo) & (x < hi);                                     \
                    O o = (O)(inside ? x : 0.0);                                           \
                    out[i] = o;                                                            \
                    flag |= !inside | ((double)o != x);                                    \
                }                                                                          \
            } else {                                                                       \
                for (i = start; i < end; i++) {                                            \
                    double x = (double)v[i];                                               \
                    int inside = (x >= lo) & (x < hi);                                     \
                    O o = (O)(inside ? x : 0.0);                                           \
                    out[i] = o;                                                            \
                    flag |= (!inside | ((double)o != x)) & (ok[i] != 0);                   \
                }                                                                          \
            }                                                                              \
            if (flag)                                                                      \
                for (i = start; i < end; i++) {                                            \
                    double x = (double)v[i];                                               \
                    if ((!(x >= lo && x < hi) || (double)out[i] != x) && (ok == NULL || ok[i])) \
                        return i;                                                          \
                }                                                                          \
        }                                                                                  \
        return -1;                                                                         \
    }
    ARROWMM_FLOAT_TO_INT(arrowmm_double_to_int32_scalar, double, int32_t)

    /* arrowmm_double_to_int32_scalar, two values at a time in SSE2 where gcc vectorizes
       nothing (the mixed widths): the blocks that hold no bad value, then the scalar form
       from the first block that does (it names the row) or for the odd last value. */
    static int64_t arrowmm_double_to_int32(const double *v, const uint8_t *ok, int64_t n,
                                           double lo, double hi, int32_t *out) {
        int64_t from = 0, last;
    #if defined(__SSE2__)
        const __m128d vlo = _mm_set1_pd(lo), vhi = _mm_set1_pd(hi);
        const __m128d every = _mm_castsi128_pd(_mm_set1_epi32(-1));
        while (n - from >= 2) {
            int64_t end = n - from > 2048 ? from + 2048 : n, i;
            __m128d bad = _mm_setzero_pd();
            for (i = from; i + 2 <= end; i += 2) {
                __m128d x = _mm_loadu_pd(v + i);
                __m128d inside = _mm_and_pd(_mm_cmpge_pd(x, vlo), _mm_cmplt_pd(x, vhi));
                __m128i o = _mm_cvttpd_epi32(_mm_and_pd(x, inside));  /* (outside: 0) */
                __m128d wrong = _mm_or_pd(_mm_xor_pd(inside, every),
                                          _mm_cmpneq_pd(_mm_cvtepi32_pd(o), x));
                if (ok != NULL)
                    wrong = _mm_and_pd(wrong, _mm_castsi128_pd(_mm_set_epi64x(
                        -(int64_t)(ok[i + 1] != 0), -(int64_t)(ok[i] != 0))));
                _mm_storel_epi64((__m128i *)(out + i), o);
                bad = _mm_or_pd(bad, wrong);
            }
            if (_mm_movemask_pd(bad) || i < end) break;
            from = end;
        }
    #endif
        if (from == n) return -1;
        last = arrowmm_double_to_int32_scalar(v + from, ok == NULL ? NULL : ok + from, n - from,
                                              lo, hi, out + from);
        return last < 0 ? -1 : from + last;
    }
    ARROWMM_FLOAT_TO_INT(arrowmm_float_to_int32, float, int32_t)
    ARROWMM_FLOAT_TO_INT(arrowmm_double_to_int64, double, int64_t)
    ARROWMM_FLOAT_TO_INT(arrowmm_float_to_int64, float, int64_t)
    ARROWMM_FLOAT_TO_INT(arrowmm_double_to_uint64, double, uint64_t)
    ARROWMM_FLOAT_TO_INT(arrowmm_float_to_uint64, float, uint64_t)

    /* Whether c * 10^e reads back as x (a double, or a float when single). */
    static int arrowmm_reads_as(uint64_t c, int e, double x, int single) {
        double v;
        if (e >= -22 && e <= 22 && (c <= ((uint64_t)1 << 53)
                                    ? (v = e < 0 ? (double)c / arrowmm_pow10d[-e]
                                                 : (double)c * arrowmm_pow10d[e], 1)
                                    : arrowmm_wide_product(c, e, &v))) {
            if (!single) return v == x;
            if (!arrowmm_float_midpoint(v)) return (float)v == (float)x;
        }
        {
            char text[48];
            snprintf(text, sizeof text, "%llue%d", (unsigned long long)c, e);
            if (single) return strtof_l(text, NULL, arrowmm_c_locale) == (float)x;
            return strtod_l(text, NULL, arrowmm_c_locale) == x;
        }
    }

    /* The shortest digits that read back as the finite, normal, nonzero |x| (the closest
       to it among them), found by rounding an extended-precision x * 10^n to p digits for
       p from the type's DIG (15 or 6: below it the correct rounding is the only candidate)
       up: 1 and digits, their count and the first digit's power of ten; or 0 wherever the
       estimate cannot decide (a rounding within its error of a half, a power of ten beyond
       the exact ones, subnormals), for the exact path to answer. */
    static int arrowmm_shortest(double x, int single, char *digits, int *nd, int *k) {
    #if defined(LDBL_MANT_DIG) && LDBL_MANT_DIG == 64 && (defined(__x86_64__) || defined(__i386__))
        static const long double p10[28] = {
            1e0L, 1e1L, 1e2L, 1e3L, 1e4L, 1e5L, 1e6L, 1e7L, 1e8L, 1e9L, 1e10L, 1e11L, 1e12L,
            1e13L, 1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L, 1e20L, 1e21L, 1e22L, 1e23L,
            1e24L, 1e25L, 1e26L, 1e27L};
        double ax = fabs(x);
        int k10, p, first = single ? 6 : 15, last = single ? 9 : 17, adjusted = 0;
        if (ax < (single ? (double)FLT_MIN : DBL_MIN) || isinf(ax) || ax != ax) return 0;
        k10 = (int)floor(log10(ax));
        for (p = first; p <= last; p++) {
            int n = p - 1 - k10, j;
            long double y, r, err;
            uint64_t c, c2 = 0, found = 0;
            if (n > 27 || n < -27) return 0;
            y = n >= 0 ? (long double)ax * p10[n] : (long double)ax / p10[-n];
            if (y < p10[p - 1] || y >= p10[p]) {         /* log10's estimate was off by one */
                if (adjusted++) return 0;
                k10 += y < p10[p - 1] ? -1 : 1;
                p--;
                continue;
            }
            /* the nearest integer (0 < y < 10^17 < 2^63): fistp rounds in the x87 mode as it
               stands (nearest), where a truncating cast switches the control word twice and
               stalls (half of this function's time); r is then y - c, |r| <= 1/2 */
            {
                int64_t rounded;
                __asm__("fistpll %0" : "=m"(rounded) : "t"(y) : "st");
                c = (uint64_t)rounded;
            }
            r = y - (long double)(int64_t)c;
            if (r > 0.5L) { c++; r -= 1.0L; }
            else if (r < -0.5L) { c--; r += 1.0L; }
            err = y * 0x1p-61L;
            if (0.5L - fabsl(r) <= err || y - p10[p - 1] <= err || p10[p] - y <= err)
                return 0;                        /* (a half, or a decade's edge: undecided) */
            if (arrowmm_reads_as(c, -n, ax, single)) found = c;
            else if (p > first) {                 /* a power of two's lopsided interval */
                c2 = r < 0 ? c - 1 : c + 1;
                if (arrowmm_reads_as(c2, -n, ax, single)) found = c2;
            }
            if (found) {
                char tmp[24];
                int m = 0;
                while (found % 10 == 0) { found /= 10; n--; }
                while (found) { tmp[m++] = (char)('0' + found % 10); found /= 10; }
                for (j = 0; j < m; j++) digits[j] = tmp[m - 1 - j];
                *nd = m;
                *k = m - 1 - n;
                return 1;
            }
        }
        return 0;
    #else
        (void)x; (void)single; (void)digits; (void)nd; (void)k;
        return 0;
    #endif
    }

    /* digits + one unit in the last place (carry: 999 -> 1000, k + 1); its count. */
    static int arrowmm_increment(char *digits, int nd, int *k) {
        int j = nd - 1;
        while (j >= 0 && digits[j] == '9') { digits[j] = '0'; j--; }
        if (j < 0) { digits[0] = '1'; *k += 1; return 1; }
        digits[j]++;
        while (nd > 1 && digits[nd - 1] == '0') nd--;
        return nd;
    }
    """
    int arrowmm_cast_init()
    int arrowmm_parse_int(const uint8_t *s, int64_t n, int bits, int is_signed,
                          uint64_t *out) noexcept nogil
    int arrowmm_parse_float(const uint8_t *s, int64_t n, int single, double *d,
                            float *f) noexcept nogil
    int arrowmm_parse_bool(const uint8_t *s, int64_t n, uint8_t *b) noexcept nogil
    int arrowmm_parse_decimal(const uint8_t *s, int64_t n, int scale, int64_t *out) noexcept nogil
    int arrowmm_utoa(uint64_t v, char *out) noexcept nogil
    int arrowmm_layout(int neg, const char *digits, int nd, int k, char *out) noexcept nogil
    int arrowmm_sci_digits(const char *text, char *digits, int *k) noexcept nogil
    int arrowmm_reads_back(float f, int neg, const char *digits, int nd, int k) noexcept nogil
    int arrowmm_increment(char *digits, int nd, int *k) noexcept nogil
    int arrowmm_shortest(double x, int single, char *digits, int *nd, int *k) noexcept nogil
    int64_t arrowmm_double_to_int32(const double *v, const uint8_t *ok, int64_t n, double lo,
                                  double hi, int32_t *out) noexcept nogil
    int64_t arrowmm_float_to_int32(const float *v, const uint8_t *ok, int64_t n, double lo,
                                  double hi, int32_t *out) noexcept nogil
    int64_t arrowmm_double_to_int64(const double *v, const uint8_t *ok, int64_t n, double lo,
                                  double hi, int64_t *out) noexcept nogil
    int64_t arrowmm_float_to_int64(const float *v, const uint8_t *ok, int64_t n, double lo,
                                  double hi, int64_t *out) noexcept nogil
    int64_t arrowmm_double_to_uint64(const double *v, const uint8_t *ok, int64_t n, double lo,
                                  double hi, uint64_t *out) noexcept nogil
    int64_t arrowmm_float_to_uint64(const float *v, const uint8_t *ok, int64_t n, double lo,
                                  double hi, uint64_t *out) noexcept nogil

if not arrowmm_cast_init():
    raise ImportError("arrowmm.interop._cast: cannot make the C locale")

#: the longest text a number is written as ("-2.2250738585072014e-308" is 24 characters)
DEF MAX_TEXT = 32

# targets of the parse
DEF T_INT = 0
DEF T_UINT = 1
DEF T_FLOAT = 2
DEF T_BOOL = 3
DEF T_DECIMAL = 4


cdef struct Texts:
    # the strings of an array: offsets (32 or 64 bits) into one data buffer, or views
    int layout                   # 0: int32 offsets, 1: int64 offsets, 2: 16-byte views
    const int32_t *off32
    const int64_t *off64
    const uint8_t *data
    int64_t data_size
    const uint8_t *views
    const uint8_t **buffers
    const int64_t *buffer_sizes
    int64_t nbuffers


cdef inline int _text_at(const Texts *src, int64_t i, const uint8_t **s,
                         int64_t *n) noexcept nogil:
    """The bytes of row ``i``: 0, or -1 when its offsets or view fall outside the data."""
    cdef int64_t lo, hi
    cdef int32_t length, index, offset
    if src.layout == 0:
        lo, hi = src.off32[i], src.off32[i + 1]
    elif src.layout == 1:
        lo, hi = src.off64[i], src.off64[i + 1]
    else:
        memcpy(&length, src.views + 16 * i, 4)
        if length < 0:
            return -1
        if length <= 12:
            s[0] = src.views + 16 * i + 4
            n[0] = length
            return 0
        memcpy(&index, src.views + 16 * i + 8, 4)
        memcpy(&offset, src.views + 16 * i + 12, 4)
        if index < 0 or index >= src.nbuffers or offset < 0 or \
                length > src.buffer_sizes[index] - offset:
            return -1
        s[0] = src.buffers[index] + offset
        n[0] = length
        return 0
    if lo < 0 or hi < lo or hi > src.data_size:
        return -1
    s[0] = src.data + lo
    n[0] = hi - lo
    return 0


cdef int64_t _parse_all(const Texts *src, int64_t length, const uint8_t *valid, int target,
                        int bits, uint8_t *out, int64_t *broken) noexcept nogil:
    """Parse every valid row into ``out``; the last row that does not parse, or -1
    (``broken[0]``: a row whose bytes fall outside its buffers, or -1)."""
    cdef int64_t i, n, bad = -1
    cdef const uint8_t *s
    cdef uint64_t v
    cdef double d
    cdef float f
    cdef int ok
    for i in range(length):
        if valid != NULL and not valid[i]:
            continue
        if _text_at(src, i, &s, &n) != 0:
            broken[0] = i
            return bad
        if target == T_INT or target == T_UINT:
            ok = arrowmm_parse_int(s, n, bits, target == T_INT, &v)
            if ok:
                if bits == 8:
                    (<uint8_t *>out)[i] = <uint8_t>v
                elif bits == 16:
                    memcpy(out + 2 * i, &v, 2)
                elif bits == 32:
                    memcpy(out + 4 * i, &v, 4)
                else:
                    memcpy(out + 8 * i, &v, 8)
        elif target == T_FLOAT:
            if bits == 32:
                ok = arrowmm_parse_float(s, n, 1, &d, &f)
                if ok == 1:
                    memcpy(out + 4 * i, &f, 4)
            else:
                ok = arrowmm_parse_float(s, n, 0, &d, &f)
                if ok == 1:
                    memcpy(out + 8 * i, &d, 8)
            if ok < 0:
                broken[0] = -2  # (out of memory)
                return bad
        elif target == T_DECIMAL:
            ok = arrowmm_parse_decimal(s, n, bits, <int64_t *>(out + 8 * i))
        else:
            ok = arrowmm_parse_bool(s, n, out + i)
        if not ok:
            bad = i
    return bad


def _pointer_table(data_buffers):
    """(the buffers as uint8 numpy arrays, their addresses, their sizes): what a kernel over
    variadic buffers reads through; the arrays keep the buffers alive while it runs."""
    buffers = [np.frombuffer(b, dtype=np.uint8) if b is not None else np.zeros(0, np.uint8)
               for b in data_buffers]
    ptrs = np.zeros(max(len(buffers), 1), dtype=np.uintp)
    sizes = np.zeros(max(len(buffers), 1), dtype=np.int64)
    for k in range(len(buffers)):
        sizes[k] = buffers[k].size
        ptrs[k] = buffers[k].ctypes.data if buffers[k].size else 0
    return buffers, ptrs, sizes


def parse_texts(int layout, offsets, data_buffers, int64_t length, valid, str kind, int bits,
                out):
    """Parse ``length`` strings into ``out`` (a numpy array of ``length`` numbers of the
    target: ``kind`` "int", "uint", "float" (``bits`` 32 or 64), "bool" (uint8), or
    "decimal": int64 unscaled values at scale ``bits`` (0 to 18) of plain-notation texts, a
    row that is anything else (an exponent, a cut digit, 18 digits or more) not parsed).

    ``layout``: 0 or 1 for int32 / int64 ``offsets`` (``length + 1``, into
    ``data_buffers[0]``), 2 for 16-byte views (``offsets``: their bytes) into
    ``data_buffers``.  ``valid``: a bool array (True: a value), or None.  Returns the index
    of the last row that does not parse, or -1; raises ArrowInvalid where a row's offsets or
    view fall outside its buffers."""
    cdef Texts src
    memset(&src, 0, sizeof(Texts))
    cdef const uint8_t[::1] view_bytes
    cdef const int32_t[::1] off32
    cdef const int64_t[::1] off64
    cdef const uint8_t[::1] mask
    cdef const uint8_t[::1] buf
    cdef uint8_t[::1] out_bytes = out.view(np.uint8).reshape(-1)
    cdef int target = {"int": T_INT, "uint": T_UINT, "float": T_FLOAT, "bool": T_BOOL,
                       "decimal": T_DECIMAL}[kind]
    cdef int64_t k, bad, broken = -1
    cdef const uint8_t *valid_ptr = NULL
    if target == T_DECIMAL and not 0 <= bits <= 18:
        raise ValueError("parse_texts: a decimal's scale (bits) must be 0 to 18")
    if out.shape[0] != length or out.itemsize * 8 != (
            8 if target == T_BOOL else 64 if target == T_DECIMAL else bits):
        raise ValueError("parse_texts: out must hold length numbers of the target's width")
    buffers, ptrs, sizes = _pointer_table(data_buffers)
    src.layout = layout
    src.nbuffers = len(buffers)
    src.buffers = <const uint8_t **><size_t>ptrs.ctypes.data
    src.buffer_sizes = <const int64_t *><size_t>sizes.ctypes.data
    if layout == 0 or layout == 1:
        if offsets.shape[0] != length + 1:
            raise ValueError("parse_texts: offsets must hold length + 1 entries")
        if layout == 0:
            off32 = offsets
            src.off32 = &off32[0]
        else:
            off64 = offsets
            src.off64 = &off64[0]
        src.data = <const uint8_t *><size_t>ptrs[0]
        src.data_size = sizes[0]
    else:
        if offsets.shape[0] < 16 * length:
            raise ValueError("parse_texts: views must hold 16 bytes a row")
        view_bytes = offsets
        src.views = &view_bytes[0] if length else NULL
    if valid is not None:
        mask = valid.view(np.uint8)
        valid_ptr = &mask[0] if length else NULL
    with nogil:
        bad = _parse_all(&src, length, valid_ptr, target, bits, &out_bytes[0] if length else NULL,
                         &broken)
    if broken == -2:
        raise MemoryError("parse_texts: no memory for a long number's text")
    if broken >= 0:
        raise ArrowInvalid(f"row {broken}: its offsets or view fall outside the string data")
    return bad


cdef inline int _special_text(double v, char *out) noexcept nogil:
    """NaN, infinities and zeros as pyarrow writes them (``nan``, ``inf``, ``-inf``, ``0``,
    ``-0``): their length, or 0 for any other value."""
    if v != v:
        memcpy(out, b"nan", 3)
        return 3
    if isinf(v):
        if v > 0:
            memcpy(out, b"inf", 3)
            return 3
        memcpy(out, b"-inf", 4)
        return 4
    if v == 0.0:
        if 1.0 / v < 0:
            memcpy(out, b"-0", 2)
            return 2
        out[0] = b'0'
        return 1
    return 0


cdef int _double_text(double v, char *out) except -1:
    """``v`` as pyarrow writes a double (the shortest digits that read back); its length."""
    cdef char digits[MAX_TEXT]
    cdef int nd, k
    cdef char *text
    cdef int special = _special_text(v, out)
    if special:
        return special
    if arrowmm_shortest(v, 0, digits, &nd, &k):
        return arrowmm_layout(v < 0, digits, nd, k, out)
    text = PyOS_double_to_string(v, b'r', 0, 0, NULL)  # (exact: David Gay's shortest)
    try:
        nd = _repr_digits(text, digits, &k)
    finally:
        PyMem_Free(text)
    return arrowmm_layout(v < 0, digits, nd, k, out)


cdef int _repr_digits(const char *text, char *digits, int *k) noexcept nogil:
    """The significant digits and exponent of a ``repr`` text ("123.45", "1e-05", ...)."""
    cdef int nd = 0, point = -1, lead = 0, e = 0, eneg = 0, j = 0
    cdef const char *c = text
    if c[0] == b'-':
        c += 1
    while c[j] != 0 and c[j] != b'e':
        if c[j] == b'.':
            point = nd + lead
        elif nd == 0 and c[j] == b'0':
            lead += 1
        else:
            digits[nd] = c[j]
            nd += 1
        j += 1
    if point < 0:
        point = nd + lead
    if c[j] == b'e':
        j += 1
        if c[j] == b'-' or c[j] == b'+':
            eneg = c[j] == b'-'
            j += 1
        while c[j] != 0:
            e = e * 10 + (c[j] - 48)
            j += 1
    while nd > 1 and digits[nd - 1] == b'0':
        nd -= 1
    # value = 0.<lead zeros><digits> * 10^point... the first digit's power: point - lead - 1
    k[0] = point - lead - 1 + (-e if eneg else e)
    return nd


cdef int _float_text(float v, char *out) noexcept nogil:
    """``v`` as pyarrow writes a float: the shortest correctly rounded digits (6 to 9; from
    1 for subnormals) that read back as ``v``; its length."""
    cdef char text[MAX_TEXT]
    cdef char digits[MAX_TEXT]
    cdef char up[MAX_TEXT]
    cdef int p, nd, k, nu, ku, neg = v < 0
    cdef uint32_t bits
    cdef float mag = -v if neg else v
    cdef int special = _special_text(v, out)
    if special:
        return special
    if arrowmm_shortest(v, 1, digits, &nd, &k):
        return arrowmm_layout(neg, digits, nd, k, out)
    memcpy(&bits, &v, 4)
    p = 1 if mag < 1.1754943508222875e-38 else 6  # (FLT_DIG holds for normal floats only)
    while p <= 9:
        snprintf_e(text, p, <double>v)
        nd = arrowmm_sci_digits(text, digits, &k)
        if arrowmm_reads_back(v, neg, digits, nd, k):
            break
        if p > 6 and (bits & 0x7FFFFF) == 0:  # (a power of two: its lower neighbour is closer)
            ku = k
            nu = _next_up(digits, nd, p, up, &ku)
            if arrowmm_reads_back(v, neg, up, nu, ku):
                memcpy(digits, up, MAX_TEXT)
                nd, k = nu, ku
                break
        p += 1
    return arrowmm_layout(neg, digits, nd, k, out)


cdef int _next_up(const char *digits, int nd, int p, char *up, int *k) noexcept nogil:
    """The ``p``-digit decimal one unit above ``digits`` (``nd`` significant digits)."""
    cdef int j
    for j in range(p):
        up[j] = digits[j] if j < nd else b'0'
    return arrowmm_increment(up, p, k)


cdef extern from "stdio.h":
    int snprintf(char *s, size_t n, const char *fmt, ...) nogil


cdef inline void snprintf_e(char *text, int p, double v) noexcept nogil:
    snprintf(text, MAX_TEXT, "%.*e", p - 1, v)



def format_numbers(values, valid, str kind):
    """The text of each number in ``values`` (a numpy array: ``kind`` "int", "uint",
    "float32", "float64" or "bool"), nulls (``valid`` False) empty, as pyarrow writes them.

    Returns (int64 offsets of ``len(values) + 1``, uint8 data)."""
    cdef int64_t n = values.shape[0], i, pos = 0, cap
    cdef const uint8_t[::1] raw = np.ascontiguousarray(values).view(np.uint8).reshape(-1)
    cdef const uint8_t[::1] mask
    cdef const uint8_t *valid_ptr = NULL
    cdef int code = {"int": 0, "uint": 1, "float32": 2, "float64": 3, "bool": 4}[kind]
    cdef int width = values.dtype.itemsize
    offsets_arr = np.empty(n + 1, dtype=np.int64)
    cdef int64_t[::1] offsets = offsets_arr
    cdef uint8_t[::1] data
    cdef char *o
    cdef int64_t iv
    cdef uint64_t uv
    cdef int8_t i8
    cdef int16_t i16
    cdef int32_t i32
    cdef float f
    cdef double d
    if valid is not None:
        mask = valid.view(np.uint8)
        valid_ptr = &mask[0] if n else NULL
    # room for the longest text of each value: pages are only touched as texts are written,
    # so the unused end costs address space, not memory (growing by copies cost more)
    cap = n * (5 if code == 4 else 4 if width == 1 and code < 2 else
               6 if width == 2 and code < 2 else 11 if width == 4 and code < 2 else
               20 if code < 2 else 17 if code == 2 else 25) + MAX_TEXT
    data_arr = np.empty(cap, dtype=np.uint8)
    data = data_arr
    offsets[0] = 0
    i = 0
    while i < n:
        if cap - pos < MAX_TEXT:
            cap = cap * 2
            data_arr = np.concatenate([data_arr[:pos], np.empty(cap - pos, np.uint8)])
            data = data_arr
        o = <char *>&data[pos]
        if valid_ptr != NULL and not valid_ptr[i]:
            pass
        elif code == 0 or code == 1:
            if width == 1:
                memcpy(&i8, &raw[i], 1)
                if code == 0:
                    iv = i8
                else:
                    iv = <uint8_t>i8
            elif width == 2:
                memcpy(&i16, &raw[2 * i], 2)
                if code == 0:
                    iv = i16
                else:
                    iv = <uint16_t>i16
            elif width == 4:
                memcpy(&i32, &raw[4 * i], 4)
                if code == 0:
                    iv = i32
                else:
                    iv = <uint32_t>i32
            else:
                memcpy(&iv, &raw[8 * i], 8)
            if code == 0 and iv < 0:
                o[0] = b'-'
                pos += 1 + arrowmm_utoa(<uint64_t>0 - <uint64_t>iv, o + 1)
            else:
                pos += arrowmm_utoa(<uint64_t>iv, o)
        elif code == 4:
            if raw[i]:
                memcpy(o, b"true", 4)
                pos += 4
            else:
                memcpy(o, b"false", 5)
                pos += 5
        elif code == 2:
            memcpy(&f, &raw[4 * i], 4)
            pos += _float_text(f, o)
        else:
            memcpy(&d, &raw[8 * i], 8)
            pos += _double_text(d, o)
        i += 1
        offsets[i] = pos
    return offsets_arr, data_arr[:pos]


# -- range checks of the numeric casts: one pass, the first value that does not fit ----------


ctypedef fused floating:
    float
    double


DEF BLOCK = 2048


def first_outside(const integer[::1] values, valid, lo, hi):
    """The index of the first valid value outside ``[lo, hi]`` (both within the values'
    type), or -1: the safe check of a cast between integers, or of integers to floats.
    (A block at a time without branches, so that the compiler vectorizes it.)"""
    cdef integer a = lo, b = hi
    cdef Py_ssize_t i, start, end, n = values.shape[0], found = -1
    cdef const uint8_t[::1] mask
    cdef const uint8_t *ok = NULL
    cdef int flag
    if valid is not None:
        mask = valid.view(np.uint8)
        ok = &mask[0] if n else NULL
    with nogil:
        for start in range(0, n, BLOCK):
            end = min(start + BLOCK, n)
            flag = 0
            if ok == NULL:
                for i in range(start, end):
                    flag |= (values[i] < a) | (values[i] > b)
            else:
                for i in range(start, end):
                    flag |= ((values[i] < a) | (values[i] > b)) & ok[i]
            if flag:
                for i in range(start, end):
                    if (values[i] < a or values[i] > b) and (ok == NULL or ok[i]):
                        found = i
                        break
                break
    return found


def exact_integers(const floating[::1] values, valid, double lo, double hi):
    """(integers, -1) of ``values`` when every valid one is an integer in ``[lo, hi)``, else
    (None, the index of the first that is not): the safe cast of floats to integers in one
    pass.  The integers are int32 when ``[lo, hi)`` lies within int32's range, else int64,
    or uint64 when ``hi`` is above int64's; a null slot holds its value converted, or 0 where
    it does not fit."""
    cdef Py_ssize_t n = values.shape[0]
    cdef int64_t bad
    cdef const uint8_t[::1] mask
    cdef const uint8_t *ok = NULL
    cdef bint unsigned64 = hi > 9223372036854775808.0
    cdef bint narrow = lo >= -2147483648.0 and hi <= 2147483648.0
    if lo < -9223372036854775808.0 or hi > 18446744073709551616.0 or (unsigned64 and lo < 0):
        raise ValueError("exact_integers: [lo, hi) must lie within int64's or uint64's range")
    out = np.empty(n, dtype=np.int32 if narrow else np.uint64 if unsigned64 else np.int64)
    cdef int32_t[::1] into32
    cdef int64_t[::1] into64
    cdef uint64_t[::1] intou64
    if n == 0:
        return out, -1
    if valid is not None:
        mask = valid.view(np.uint8)
        ok = &mask[0]
    if narrow:
        into32 = out
        with nogil:
            if floating is double:
                bad = arrowmm_double_to_int32(&values[0], ok, n, lo, hi, &into32[0])
            else:
                bad = arrowmm_float_to_int32(&values[0], ok, n, lo, hi, &into32[0])
    elif unsigned64:
        intou64 = out
        with nogil:
            if floating is double:
                bad = arrowmm_double_to_uint64(&values[0], ok, n, lo, hi, &intou64[0])
            else:
                bad = arrowmm_float_to_uint64(&values[0], ok, n, lo, hi, &intou64[0])
    else:
        into64 = out
        with nogil:
            if floating is double:
                bad = arrowmm_double_to_int64(&values[0], ok, n, lo, hi, &into64[0])
            else:
                bad = arrowmm_float_to_int64(&values[0], ok, n, lo, hi, &into64[0])
    return (None, bad) if bad >= 0 else (out, -1)


# -- string/binary <-> their views: one pass each way (``cast.py``'s text casts) -------------

cdef enum:
    _VIEW_OUTSIDE = 1    # offsets / a view fall outside the data
    _VIEW_TOO_LONG = 2   # a value longer than a view's buffer may be
    _VIEW_OVERFLOW = 3   # the gathered data overflow the target's offsets


cdef int64_t _views_from(const offset_t *off, int64_t n, const uint8_t *data, int64_t data_size,
                         const uint8_t *bits, int64_t bit_offset, int64_t limit, uint8_t *views,
                         int64_t *ranges, int64_t capacity, int64_t *nranges,
                         int *kind) noexcept nogil:
    """The n views of ``data[off[i]:off[i + 1]]`` (nulls: a zeroed view); a long value points
    into ``data[ranges[2k]:ranges[2k + 1]]`` (buffer k, at most ``limit`` bytes).  Returns -1,
    or the row that cannot be made (``kind`` says why)."""
    cdef int64_t i, pos, lo, hi, base = -1, k = -1
    cdef int32_t head
    cdef uint64_t first, rest
    cdef uint8_t *v
    for i in range(n):
        v = views + 16 * i
        memset(v, 0, 16)
        pos = bit_offset + i
        if bits != NULL and not (bits[pos >> 3] >> (pos & 7)) & 1:
            continue
        lo, hi = off[i], off[i + 1]
        if lo < 0 or hi < lo or hi > data_size:
            kind[0] = _VIEW_OUTSIDE
            return i
        if hi - lo > limit:
            kind[0] = _VIEW_TOO_LONG
            return i
        head = <int32_t>(hi - lo)
        memcpy(v, &head, 4)
        if head <= 12:
            if lo + 12 <= data_size:  # (12 bytes read as two words, masked to the value's)
                memcpy(&first, data + lo, 8)
                memcpy(&rest, data + lo + 8, 4)
                first = first if head >= 8 else first & ((<uint64_t>1 << (8 * head)) - 1)
                rest = 0 if head <= 8 else rest & ((<uint64_t>1 << (8 * (head - 8))) - 1)
                memcpy(v + 4, &first, 8)
                memcpy(v + 12, &rest, 4)
            elif head:
                memcpy(v + 4, data + lo, head)
            continue
        memcpy(v + 4, data + lo, 4)
        if k < 0 or lo < base or hi - base > limit:  # (a new buffer from here)
            k += 1
            if k == capacity:  # (only offsets that go back can need more: not validated ones)
                kind[0] = _VIEW_OUTSIDE
                return i
            base = lo
            ranges[2 * k] = lo
            ranges[2 * k + 1] = hi
        elif hi > ranges[2 * k + 1]:
            ranges[2 * k + 1] = hi
        head = <int32_t>k
        memcpy(v + 8, &head, 4)
        head = <int32_t>(lo - base)
        memcpy(v + 12, &head, 4)
    nranges[0] = k + 1
    return -1


cdef object _bitmap_of(validity, int64_t bit_offset, int64_t rows, str caller):
    """``validity`` as uint8, checked to hold bits ``bit_offset`` to ``bit_offset + rows``."""
    bits = np.frombuffer(validity, dtype=np.uint8)
    if bit_offset < 0 or bits.shape[0] * 8 < bit_offset + rows:
        raise ValueError(f"{caller}: the validity bitmap is shorter than the rows")
    return bits


def text_views(offsets, data, validity, int64_t bit_offset, int64_t limit=2147483647):
    """(views, ranges): the 16-byte views of the strings ``data[offsets[i]:offsets[i + 1]]``
    (int32 or int64 ``offsets``, one more than the rows), null rows (``validity``'s bit
    ``bit_offset + i`` clear) a zeroed view; values up to 12 bytes inline, longer ones a prefix,
    a buffer index and an offset into ``data[ranges[k, 0]:ranges[k, 1]]``, buffer k, slices
    of ``data`` itself (no copy) of at most ``limit`` bytes each (one unless the values pass it).
    Offsets outside ``data`` raise ArrowInvalid (checked per row: no read out of bounds)."""
    cdef int64_t n = offsets.shape[0] - 1, bad, nranges = 0
    cdef int kind = 0
    cdef const int32_t[::1] off32
    cdef const int64_t[::1] off64
    cdef const uint8_t[::1] bytes_ = np.frombuffer(data, dtype=np.uint8) if data is not None \
        else np.zeros(0, np.uint8)
    cdef const uint8_t[::1] bits
    cdef const uint8_t *bits_ptr = NULL
    if n < 0 or not 13 <= limit <= 2147483647:
        raise ValueError("text_views: offsets need an entry, limit must be 13 to 2**31 - 1")
    if validity is not None:
        bits = _bitmap_of(validity, bit_offset, n, "text_views")
        bits_ptr = &bits[0] if n else NULL
    capacity = 2 * (bytes_.shape[0] // limit) + 2
    out = np.empty(16 * n, dtype=np.uint8)  # (every byte written below: no zeroing pass)
    ranges = np.zeros((capacity, 2), dtype=np.int64)
    cdef uint8_t[::1] views = out
    cdef int64_t[:, ::1] spans = ranges
    cdef const uint8_t *src = &bytes_[0] if bytes_.shape[0] else NULL
    if offsets.dtype == np.int32:
        off32 = offsets
        with nogil:
            bad = _views_from[int32_t](&off32[0], n, src, bytes_.shape[0], bits_ptr, bit_offset,
                                       limit, &views[0] if n else NULL, &spans[0, 0], capacity,
                                       &nranges, &kind)
    else:
        off64 = offsets
        with nogil:
            bad = _views_from[int64_t](&off64[0], n, src, bytes_.shape[0], bits_ptr, bit_offset,
                                       limit, &views[0] if n else NULL, &spans[0, 0], capacity,
                                       &nranges, &kind)
    if bad >= 0:
        lo, hi = int(offsets[bad]), int(offsets[bad + 1])
        if kind == _VIEW_TOO_LONG:
            raise ArrowInvalid(f"row {bad}: its {hi - lo} bytes are more than a view's data "
                               f"buffer holds ({limit} bytes)")
        raise ArrowInvalid(f"row {bad}: its offsets [{lo}, {hi}) fall outside the "
                           f"{bytes_.shape[0]}-byte string data, or go back")
    return out, ranges[:nranges]


cdef int64_t _gather_sizes(const uint8_t *views, int64_t n, const uint8_t *bits,
                           int64_t bit_offset, const int64_t *sizes, int64_t nbuf,
                           offset_t *out, int *kind) noexcept nogil:
    """out[i + 1]: where row i's bytes end in the gathered data (nulls: empty).  Returns -1,
    or the row whose view points outside its buffer or past what ``offset_t`` holds."""
    cdef int64_t i, pos, total = 0
    cdef int64_t most = 2147483647 if sizeof(offset_t) == 4 else 9223372036854775807
    cdef int32_t length, index, where
    cdef const uint8_t *v
    out[0] = 0
    for i in range(n):
        v = views + 16 * i
        pos = bit_offset + i
        if bits == NULL or (bits[pos >> 3] >> (pos & 7)) & 1:
            memcpy(&length, v, 4)
            if length > 12:
                memcpy(&index, v + 8, 4)
                memcpy(&where, v + 12, 4)
                if index < 0 or index >= nbuf or where < 0 or \
                        <int64_t>where + length > sizes[index]:
                    kind[0] = _VIEW_OUTSIDE
                    return i
            elif length < 0:
                kind[0] = _VIEW_OUTSIDE
                return i
            if total > most - length:
                kind[0] = _VIEW_OVERFLOW
                return i
            total += length
        out[i + 1] = <offset_t>total
    return -1


cdef int64_t _gather_bytes(const uint8_t *views, int64_t n, const uint8_t **buffers,
                           const int64_t *sizes, int64_t nbuf, const offset_t *off,
                           uint8_t *out) noexcept nogil:
    """Copy row i's bytes to ``out[off[i]:off[i + 1]]`` (the lengths ``_gather_sizes`` found;
    a short value is copied as the 12 bytes of its view, so ``out`` holds 12 more).
    The buffer and offset are checked again: the views may be shared memory another process
    writes.  Returns -1, or the row whose view changed to point outside its buffer."""
    cdef int64_t i, length
    cdef int32_t index, where
    cdef const uint8_t *v
    for i in range(n):
        length = off[i + 1] - off[i]
        if length == 0:
            continue
        v = views + 16 * i
        if length <= 12:  # (12 bytes: ``out`` has room past its end for the last ones)
            memcpy(out + off[i], v + 4, 12)
            continue
        memcpy(&index, v + 8, 4)
        memcpy(&where, v + 12, 4)
        if index < 0 or index >= nbuf or where < 0 or where + length > sizes[index]:
            return i
        memcpy(out + off[i], buffers[index] + where, length)
    return -1


def views_text(views, data_buffers, validity, int64_t bit_offset, int64_t length, bint large):
    """(offsets, data): the ``length`` values of 16-byte ``views`` (their bytes, the first
    row's first) into ``data_buffers`` gathered, int32 offsets (int64 if ``large``) into one
    uint8 data array; a null row (``validity``'s bit ``bit_offset + i`` clear) an empty
    range.  A view pointing outside its buffer, or data past 32-bit offsets (not ``large``),
    raise ArrowInvalid."""
    cdef const uint8_t[::1] view_bytes = np.frombuffer(views, dtype=np.uint8)
    cdef const uint8_t[::1] bits
    cdef const uint8_t *bits_ptr = NULL
    cdef int64_t bad, k, total
    cdef int kind = 0
    if length < 0 or view_bytes.shape[0] < 16 * length:
        raise ValueError("views_text: views must hold 16 bytes a row")
    if validity is not None:
        bits = _bitmap_of(validity, bit_offset, length, "views_text")
        bits_ptr = &bits[0] if length else NULL
    buffers, ptrs, sizes = _pointer_table(data_buffers)
    cdef const uint8_t **buf_ptrs = <const uint8_t **><size_t>ptrs.ctypes.data
    cdef const int64_t *buf_sizes = <const int64_t *><size_t>sizes.ctypes.data
    cdef int64_t nbuf = len(buffers)
    cdef const uint8_t *v = &view_bytes[0] if length else NULL
    cdef int32_t[::1] off32
    cdef int64_t[::1] off64
    offsets = np.empty(length + 1, dtype=np.int64 if large else np.int32)
    cdef uint8_t[::1] out
    if large:
        off64 = offsets
        with nogil:
            bad = _gather_sizes[int64_t](v, length, bits_ptr, bit_offset, buf_sizes, nbuf,
                                         &off64[0], &kind)
    else:
        off32 = offsets
        with nogil:
            bad = _gather_sizes[int32_t](v, length, bits_ptr, bit_offset, buf_sizes, nbuf,
                                         &off32[0], &kind)
    if bad >= 0:
        if kind == _VIEW_OVERFLOW:
            raise ArrowInvalid(f"row {bad}: the values up to it hold more bytes than 32-bit "
                               f"offsets reach (2147483647)")
        raise ArrowInvalid(f"row {bad}: its view points outside its data buffer")
    total = int(offsets[length])
    room = np.empty(total + 12, dtype=np.uint8)  # (see _gather_bytes)
    out = room
    if total:
        if large:
            with nogil:
                bad = _gather_bytes[int64_t](v, length, buf_ptrs, buf_sizes, nbuf, &off64[0],
                                             &out[0])
        else:
            with nogil:
                bad = _gather_bytes[int32_t](v, length, buf_ptrs, buf_sizes, nbuf, &off32[0],
                                             &out[0])
        if bad >= 0:
            raise ArrowInvalid(f"row {bad}: its view changed to point outside its data buffer "
                               f"while it was read")
    return offsets, room[:total]


# -- dates, times and timestamps as text (``temporal_text``): one pass in C ------------------

cdef extern from *:
    """
    static int64_t am_floordiv(int64_t a, int64_t b) {
        int64_t q = a / b;
        if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
        return q;
    }

    /* Howard Hinnant's civil_from_days: the proleptic Gregorian date of day z since 1970. */
    static void am_civil(int64_t z, int64_t *y, int *m, int *d) {
        int64_t era, doe, yoe, doy, mp;
        z += 719468;
        era = am_floordiv(z, 146097);
        doe = z - era * 146097;
        yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
        doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        mp = (5 * doy + 2) / 153;
        *d = (int)(doy - (153 * mp + 2) / 5 + 1);
        *m = (int)(mp < 10 ? mp + 3 : mp - 9);
        *y = yoe + era * 400 + (*m <= 2);
    }

    static void am_digits(char *o, int64_t v, int width) {
        int k;
        for (k = width - 1; k >= 0; k--) { o[k] = (char)('0' + v % 10); v /= 10; }
    }

    /* YYYY-MM-DD (a sign and four digits below year 0, more digits past 9999). */
    static int am_date(char *o, int64_t days) {
        int64_t y; int m, d, p = 0;
        am_civil(days, &y, &m, &d);
        if (y < 0) { o[p++] = '-'; y = -y; }
        if (y > 9999) { p += arrowmm_utoa((uint64_t)y, o + p); }
        else { am_digits(o + p, y, 4); p += 4; }
        o[p] = '-'; am_digits(o + p + 1, m, 2);
        o[p + 3] = '-'; am_digits(o + p + 4, d, 2);
        return p + 6;
    }

    /* HH:MM:SS and, with digits, . and the fraction. */
    static int am_clock(char *o, int64_t seconds, int64_t fraction, int digits) {
        am_digits(o, seconds / 3600, 2); o[2] = ':';
        am_digits(o + 3, seconds / 60 % 60, 2); o[5] = ':';
        am_digits(o + 6, seconds % 60, 2);
        if (!digits) return 8;
        o[8] = '.';
        am_digits(o + 9, fraction, digits);
        return 9 + digits;
    }

    static int am_out_of_range(char *o, int64_t v) {
        memcpy(o, "<value out of range: ", 21);
        int p = 21;
        if (v < 0) { o[p++] = '-'; p += arrowmm_utoa((uint64_t)0 - (uint64_t)v, o + p); }
        else p += arrowmm_utoa((uint64_t)v, o + p);
        o[p++] = '>';
        return p;
    }
    """
    int64_t am_floordiv(int64_t a, int64_t b) noexcept nogil
    int am_date(char *o, int64_t days) noexcept nogil
    int am_clock(char *o, int64_t seconds, int64_t fraction, int digits) noexcept nogil
    int am_out_of_range(char *o, int64_t v) noexcept nogil
    void am_digits(char *o, int64_t v, int width) noexcept nogil

DEF LOWEST_DAY = -12687428  # -32767-01-01, the first day pyarrow writes
DEF HIGHEST_DAY = 11248737  # 32767-12-31, the last
DEF MAX_TEMPORAL_TEXT = 48  # "<value out of range: -9223372036854775808>" is 42


def format_temporal(const int64_t[::1] values, valid, int kind, int64_t per_second,
                    int digits, zone_offsets, int suffix, shown):
    """The text of each value as pyarrow writes it; nulls (``valid`` False) empty.

    ``kind`` 0: timestamps in units of ``1/per_second`` s (``digits`` of fraction), in the
    wall-clock time ``zone_offsets`` (int64 seconds per value, or None for UTC) gives, followed
    by ``suffix`` 1 ``Z`` or 2 the offset as ``+HHMM``; 1: days since the epoch; 2: times of
    day.  A value outside the years -32767..32767 (or the day) is ``<value out of range: N>``,
    N from ``shown`` (int64 per value) when given.  Returns (int64 offsets, uint8 data)."""
    cdef int64_t n = values.shape[0], i, pos = 0, v, days, within, off, minutes
    cdef int64_t per_day = 86400 * per_second
    cdef const uint8_t[::1] mask
    cdef const uint8_t *valid_ptr = NULL
    cdef const int64_t[::1] offs
    cdef const int64_t[::1] named
    cdef bint zoned = zone_offsets is not None, has_shown = shown is not None
    cdef char *o
    if valid is not None:
        mask = valid.view(np.uint8)
        valid_ptr = &mask[0] if n else NULL
    if zoned:
        offs = zone_offsets
    if has_shown:
        named = shown
    offsets_arr = np.empty(n + 1, dtype=np.int64)
    cdef int64_t[::1] offsets = offsets_arr
    data_arr = np.empty(n * MAX_TEMPORAL_TEXT + MAX_TEMPORAL_TEXT, dtype=np.uint8)
    cdef uint8_t[::1] data = data_arr
    offsets[0] = 0
    with nogil:
        for i in range(n):
            o = <char *>&data[pos]
            if valid_ptr != NULL and not valid_ptr[i]:
                offsets[i + 1] = pos
                continue
            v = values[i]
            if kind == 2:
                if v < 0 or v >= per_day:
                    pos += am_out_of_range(o, named[i] if has_shown else v)
                else:
                    pos += am_clock(o, v / per_second, v % per_second, digits)
                offsets[i + 1] = pos
                continue
            if kind == 1:
                days = v
                within = 0
            else:
                days = am_floordiv(v, per_day)
                within = v - days * per_day
                if zoned:
                    off = offs[i]
                    within = within + off * per_second
                    days = days + am_floordiv(within, per_day)
                    within = within - am_floordiv(within, per_day) * per_day
            if days < LOWEST_DAY or days > HIGHEST_DAY:
                pos += am_out_of_range(o, named[i] if has_shown else v)
                offsets[i + 1] = pos
                continue
            pos += am_date(o, days)
            if kind == 0:
                o = <char *>&data[pos]
                o[0] = b' '
                pos += 1 + am_clock(o + 1, within / per_second, within % per_second, digits)
                o = <char *>&data[pos]
                if suffix == 1:
                    o[0] = b'Z'
                    pos += 1
                elif suffix == 2:
                    off = offs[i]
                    o[0] = b'-' if off < 0 else b'+'
                    minutes = (-off if off < 0 else off) / 60
                    am_digits(o + 1, minutes / 60, 2)
                    am_digits(o + 3, minutes % 60, 2)
                    pos += 5
            offsets[i + 1] = pos
    return offsets_arr, data_arr[:pos]


# -- decimals past an int64 (``decimal_cast``): 128-bit integers in C --------------------------
# Unscaled values that fit 128 bits (every decimal32/64/128, and decimal256 values that fit) as
# two little-endian words each.  A rescale, a correctly rounded float (glibc's strtod_l and
# strtof_l are correctly rounded) and Python's str of the Decimal, value by value in C; what C
# leaves (an overflow, a cut digit or a precision exceeded, where pyarrow's words are wanted)
# goes back to the exact path in Python, which decides and raises.

cdef extern from *:
    """
    typedef __int128 am_i128;
    typedef unsigned __int128 am_u128;

    static am_u128 am_pow10_128[39];

    static void am_init_pow10_128(void) {
        am_u128 p = 1;
        for (int k = 0; k < 39; k++) { am_pow10_128[k] = p; p *= 10; }
    }

    static inline am_i128 am_load128(const uint64_t *w) {
        return (am_i128)(((am_u128)w[1] << 64) | (am_u128)w[0]);
    }

    static inline void am_store128(uint64_t *w, am_i128 v) {
        w[0] = (uint64_t)(am_u128)v;
        w[1] = (uint64_t)((am_u128)v >> 64);
    }

    /* The decimal digits of v (at most 39), most significant first; their count. */
    static int am_u128toa(am_u128 v, char *out) {
        char tmp[48];
        int n = 0;
        if (v == 0) { out[0] = '0'; return 1; }
        while (v >> 64) {  /* (19 digits at a time while it needs 128 bits) */
            uint64_t low = (uint64_t)(v % (am_u128)10000000000000000000ULL);
            v /= (am_u128)10000000000000000000ULL;
            for (int k = 0; k < 19; k++) { tmp[n++] = (char)('0' + low % 10); low /= 10; }
        }
        uint64_t rest = (uint64_t)v;
        while (rest) { tmp[n++] = (char)('0' + rest % 10); rest /= 10; }
        while (n > 1 && tmp[n - 1] == '0') n--;  /* (zeros of the last 19-digit group) */
        for (int k = 0; k < n; k++) out[k] = tmp[n - 1 - k];
        return n;
    }

    /* Python's str of Decimal(sign, digits, -scale): plain notation when the exponent is
       at most 0 and the adjusted exponent at least -6, else scientific (1.2E+3, 1E-7). */
    static int am_decimal_text(am_i128 v, int scale, char *o) {
        char digits[48];
        am_u128 m = v < 0 ? (am_u128)0 - (am_u128)v : (am_u128)v;
        int nd = am_u128toa(m, digits), p = 0;
        long adjusted = (long)nd - 1 - scale;
        if (v < 0) o[p++] = '-';
        if (scale >= 0 && adjusted >= -6) {
            if (scale == 0) { memcpy(o + p, digits, nd); return p + nd; }
            if (nd > scale) {
                memcpy(o + p, digits, nd - scale); p += nd - scale;
                o[p++] = '.';
                memcpy(o + p, digits + nd - scale, scale);
                return p + scale;
            }
            o[p++] = '0'; o[p++] = '.';
            for (int k = 0; k < scale - nd; k++) o[p++] = '0';
            memcpy(o + p, digits, nd);
            return p + nd;
        }
        o[p++] = digits[0];
        if (nd > 1) { o[p++] = '.'; memcpy(o + p, digits + 1, nd - 1); p += nd - 1; }
        o[p++] = 'E';
        o[p++] = adjusted < 0 ? '-' : '+';
        p += arrowmm_utoa((uint64_t)(adjusted < 0 ? -adjusted : adjusted), o + p);
        return p;
    }

    /* v * 10**shift toward zero into *out: 0 when done, 1 when it overflows 128 bits, cuts a
       digit (safe) or, with bound_digits > 0, reaches 10**bound_digits. */
    static int am_rescale128(am_i128 v, int shift, int safe, int bound_digits, am_i128 *out) {
        am_u128 m = v < 0 ? (am_u128)0 - (am_u128)v : (am_u128)v, q;
        const am_u128 top = ((am_u128)1 << 127) - 1;
        if (shift >= 0) {
            if (m == 0) q = 0;
            else if (shift > 38 || m > top / am_pow10_128[shift]) return 1;
            else q = m * am_pow10_128[shift];
        } else if (-shift > 38) {
            if (m && safe) return 1;
            q = 0;
        } else {
            q = m / am_pow10_128[-shift];
            if (safe && q * am_pow10_128[-shift] != m) return 1;
        }
        if (q > top) return 1;
        if (bound_digits > 0 && bound_digits <= 38 && q >= am_pow10_128[bound_digits]) return 1;
        *out = v < 0 ? -(am_i128)q : (am_i128)q;
        return 0;
    }

    static double am_text_double(const char *s) { return strtod_l(s, NULL, arrowmm_c_locale); }
    static float am_text_float(const char *s) { return strtof_l(s, NULL, arrowmm_c_locale); }

    /* The float nearest m * 10**-scale, from one or two roundings in x86's 80-bit long double
       (a 64-bit mantissa): that is within two of its last units of the exact value, so
       rounding it to the 53 (24) bits of a double (float) gives the nearest one unless its
       dropped bits lie within four units of the halfway point.  1 and the value then; 0
       where the caller must settle it exactly (near halfway, far scales, another machine). */
    static int am_nearest_float(am_u128 m, int scale, int single, double *d, float *f) {
    #if LDBL_MANT_DIG == 64
        static long double pow10[28];
        static int ready = 0;
        if (!ready) {  /* (10**k = 2**k * 5**k, and 5**27 < 2**63: each one exact) */
            long double p = 1.0L;
            for (int k = 0; k < 28; k++) { pow10[k] = p; p *= 10.0L; }
            ready = 1;
        }
        if (scale > 27 || scale < -27) return 0;
        long double x = (long double)m;
        x = scale >= 0 ? x / pow10[scale] : x * pow10[-scale];
        if (x == 0.0L) { *d = 0.0; *f = 0.0f; return 1; }
        int e;
        uint64_t mantissa = (uint64_t)ldexpl(frexpl(x, &e), 64);
        if (single) {
            const uint64_t half = (uint64_t)1 << 39, low = mantissa & (((uint64_t)1 << 40) - 1);
            if (e < -125 || e > 128 || (low + 4 >= half && low <= half + 4)) return 0;
            *f = (float)x;
        } else {
            const uint64_t low = mantissa & 0x7FF;
            if (low + 4 >= 0x400 && low <= 0x400 + 4) return 0;
            *d = (double)x;
        }
        return 1;
    #else
        (void)m; (void)scale; (void)single; (void)d; (void)f;
        return 0;
    #endif
    }

    static int am_nearest_float_of(am_i128 v, int scale, int single, double *d, float *f) {
        am_u128 m = v < 0 ? (am_u128)0 - (am_u128)v : (am_u128)v;
        if (!am_nearest_float(m, scale, single, d, f)) return 0;
        if (v < 0) { *d = -*d; *f = -*f; }
        return 1;
    }
    """
    ctypedef long long am_i128  # (an opaque stand-in: only ever passed between the C helpers)
    void am_init_pow10_128() noexcept nogil
    am_i128 am_load128(const uint64_t *w) noexcept nogil
    void am_store128(uint64_t *w, am_i128 v) noexcept nogil
    int am_decimal_text(am_i128 v, int scale, char *o) noexcept nogil
    int am_rescale128(am_i128 v, int shift, int safe, int bound_digits, am_i128 *out) noexcept nogil
    double am_text_double(const char *s) noexcept nogil
    int am_nearest_float_of(am_i128 v, int scale, int single, double *d,
                            float *f) noexcept nogil
    float am_text_float(const char *s) noexcept nogil

am_init_pow10_128()

DEF MAX_DECIMAL_TEXT = 96  # sign, 39 digits, point, and "0." + 6 zeros or an exponent


def rescale_decimals128(const uint64_t[::1] words, valid, int shift, bint safe,
                        int bound_digits, uint64_t[::1] out):
    """Each unscaled value (two words) times ``10**shift``, toward zero, into ``out``; nulls
    0.  -1 when every value was done; else the first row C leaves to the exact path (it
    overflows 128 bits, cuts a digit when ``safe``, or reaches ``10**bound_digits``)."""
    cdef int64_t n = words.shape[0] // 2, i, left = -1
    cdef const uint8_t[::1] mask
    cdef const uint8_t *valid_ptr = NULL
    cdef am_i128 v
    if out.shape[0] != words.shape[0]:
        raise ValueError("rescale_decimals128: out must be as long as words")
    if valid is not None:
        mask = valid.view(np.uint8)
        valid_ptr = &mask[0] if n else NULL
    with nogil:
        for i in range(n):
            if valid_ptr != NULL and not valid_ptr[i]:
                out[2 * i] = 0
                out[2 * i + 1] = 0
                continue
            if am_rescale128(am_load128(&words[2 * i]), shift, safe, bound_digits, &v):
                left = i
                break
            am_store128(&out[2 * i], v)
    return left


def decimals128_to_floats(const uint64_t[::1] words, valid, int scale, out):
    """Each unscaled value (two words) as the float nearest ``value * 10**-scale`` (ties to
    even), into ``out`` (float64 or float32: its dtype says); nulls 0."""
    cdef int64_t n = words.shape[0] // 2, i
    cdef const uint8_t[::1] mask
    cdef const uint8_t *valid_ptr = NULL
    cdef char text[MAX_DECIMAL_TEXT]
    cdef int p
    cdef double dv
    cdef float fv
    cdef am_i128 v
    cdef double[::1] doubles
    cdef float[::1] singles
    cdef bint single = out.dtype == np.float32
    if out.shape[0] != n:
        raise ValueError("decimals128_to_floats: out must hold one value per row")
    if single:
        singles = out
    else:
        doubles = out
    if valid is not None:
        mask = valid.view(np.uint8)
        valid_ptr = &mask[0] if n else NULL
    with nogil:
        for i in range(n):
            if valid_ptr != NULL and not valid_ptr[i]:
                if single:
                    singles[i] = 0
                else:
                    doubles[i] = 0
                continue
            v = am_load128(&words[2 * i])
            if am_nearest_float_of(v, scale, single, &dv, &fv):
                if single:
                    singles[i] = fv
                else:
                    doubles[i] = dv
                continue
            # "<sign><digits>E<-scale>": the exact value, which strtod_l rounds correctly
            p = am_decimal_text(v, 0, text)
            text[p] = b'E'
            p += 1
            if scale > 0:
                text[p] = b'-'
                p += 1
            p += arrowmm_utoa(<uint64_t>(scale if scale > 0 else -scale), text + p)
            text[p] = 0
            if single:
                singles[i] = am_text_float(text)
            else:
                doubles[i] = am_text_double(text)


def format_decimals128(const uint64_t[::1] words, valid, int scale):
    """(int64 offsets, uint8 data) of each unscaled value (two words) as Python's ``str`` of
    the Decimal ``value * 10**-scale`` writes it (pyarrow's rule too); nulls empty."""
    cdef int64_t n = words.shape[0] // 2, i, pos = 0
    cdef const uint8_t[::1] mask
    cdef const uint8_t *valid_ptr = NULL
    cdef int64_t widest = MAX_DECIMAL_TEXT + (scale if scale > 0 else 0)
    if valid is not None:
        mask = valid.view(np.uint8)
        valid_ptr = &mask[0] if n else NULL
    offsets_arr = np.empty(n + 1, dtype=np.int64)
    cdef int64_t[::1] offsets = offsets_arr
    data_arr = np.empty(n * widest + 1, dtype=np.uint8)
    cdef uint8_t[::1] data = data_arr
    offsets[0] = 0
    with nogil:
        for i in range(n):
            if valid_ptr == NULL or valid_ptr[i]:
                pos += am_decimal_text(am_load128(&words[2 * i]), scale, <char *>&data[pos])
            offsets[i + 1] = pos
    return offsets_arr, data_arr[:pos]
