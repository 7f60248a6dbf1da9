/* kseg._avro: Avro's binary encoding read against a compiled schema program, written straight out as
 * the text kseg's Python Avro renderer writes (kseg/decoders/registry/avro.py, docs/schemas.md).
 *
 * The program is made once per writer schema in Python (kseg/decoders/registry/avro_program.py): a flat
 * array of int32 nodes, every node [op, length in ints, arguments..., children...], and a tuple of
 * constant texts (field-name prefixes, union branch openings, enum symbols, all already quoted).
 *
 * Program.decode(payload) returns the text, or None for any payload it does not read exactly as the
 * Python path does -- truncated data, a varint past 64 bits, a length past the end or negative, an index
 * outside a union or an enum, invalid UTF-8, a map with a repeated key, trailing bytes, a float the
 * Python renderer would refuse, recursion past MAX_DEPTH: the caller then runs the Python path on that
 * payload, which gives the text or the reason.  Every length is bounded by the bytes left before use.
 * One payload it refuses itself (ValueError): one holding more than MAX_ZERO_WIDTH values that take no
 * byte -- the leaves: a null, an empty record, a zero-size fixed, except one a union's index chose --,
 * which fastavro would build in memory (an array of them as long as its count says) and the text would
 * print (an array of records of many null fields: 20 KB printed 46 MB).  Every other value takes a byte.
 *
 * Program(ops, consts, json=True) writes a JSON row's text of the value instead: what json.dumps writes
 * of the console consumer's text read by json.loads (\u00xx in lower case, floats as Python's repr of
 * the value Java's text reads as), so a row need not parse and encode it again.
 * Imports nothing of kseg. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define KSEG_AVRO_ABI 3

enum {
    OP_NULL = 0,
    OP_BOOL = 1,
    OP_LONG = 2,   /* int and long: a zigzag varint, printed in decimal */
    OP_FLOAT = 3,  /* [op, len, single]: 4 bytes, Java's text (single: Float.toString, else Double) */
    OP_DOUBLE = 4, /* [op, len, single]: 8 bytes */
    OP_STRING = 5,
    OP_BYTES = 6,
    OP_FIXED = 7,  /* [op, len, size] */
    OP_ENUM = 8,   /* [op, len, nsymbols, first const] */
    OP_RECORD = 9, /* [op, len, nfields, close const, (prefix const, node)...] */
    OP_ARRAY = 10, /* [op, len, item min width, leaves of an item of no byte, item node] */
    OP_MAP = 11,   /* [op, len, value min width, 0, value node] */
    OP_UNION = 12, /* [op, len, nbranches, (branch pc, opening const or -1 for null)..., nodes...] */
    OP_CALL = 13,  /* [op, len, target pc]: a recursive record */
    OP_COUNT = 14
};

#define MAX_DEPTH 200            /* nesting of the data (recursive records, arrays of arrays) */
#define MAX_ZERO_WIDTH (1 << 19) /* values that take no byte (null, empty record): at most this many */
#define MAX_OUT ((Py_ssize_t)1 << 30)
#define FLOAT_CACHE 1024 /* Java's text of a float, by its bits: floats repeat */

typedef struct {
    uint32_t bits;
    uint8_t used, len;
    char text[30];
} FloatSlot;

typedef struct {
    PyObject_HEAD int32_t *ops;
    Py_ssize_t nops;
    PyObject *consts; /* tuple of bytes */
    const char **cptr;
    Py_ssize_t *clen;
    Py_ssize_t nconsts;
    char *out;
    Py_ssize_t cap, len;
    int64_t zero_items; /* the leaves read: a null, an empty record, a zero-size fixed not chosen by a union */
    int refused; /* more of them than MAX_ZERO_WIDTH: a reason, not the Python path (which would build them) */
    int json;    /* the JSON row's text (json.dumps of the value) rather than the console consumer's */
    const char *hex; /* \u00XX's digits: Jackson's upper case, or json.dumps's lower case */
    const uint8_t *end;
    FloatSlot *fcache;
    uint8_t *is_node; /* while checking: 1 at every node's pc, 2 at every call's target */
} Program;

/* -- output -------------------------------------------------------------------------------------- */

static int grow(Program *p, Py_ssize_t more) {
    if (p->len + more <= p->cap)
        return 0;
    if (p->len + more > MAX_OUT)
        return -1;
    Py_ssize_t cap = p->cap ? p->cap : 1024;
    while (cap < p->len + more)
        cap *= 2;
    char *b = PyMem_Realloc(p->out, (size_t)cap);
    if (b == NULL)
        return -1;
    p->out = b;
    p->cap = cap;
    return 0;
}

static inline int put(Program *p, const char *s, Py_ssize_t n) {
    if (grow(p, n) < 0)
        return -1;
    memcpy(p->out + p->len, s, (size_t)n);
    p->len += n;
    return 0;
}

static inline int put_const(Program *p, int32_t c) { return put(p, p->cptr[c], p->clen[c]); }

static int put_long(Program *p, int64_t v) {
    char tmp[24];
    int i = 24;
    uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    do {
        tmp[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0)
        tmp[--i] = '-';
    return put(p, tmp + i, 24 - i);
}

static const char HEX[] = "0123456789ABCDEF";
static const char HEX_LOWER[] = "0123456789abcdef";

/* One ASCII character as Jackson quotes it (json.encoder's escapes, \u00XX upper case), or as json.dumps
 * does (hex: lower case). */
static inline Py_ssize_t escape_ascii(char *o, uint8_t c, const char *hex) {
    if (c >= 0x20 && c != '"' && c != '\\') {
        o[0] = (char)c;
        return 1;
    }
    o[0] = '\\';
    switch (c) {
    case '"': o[1] = '"'; return 2;
    case '\\': o[1] = '\\'; return 2;
    case '\b': o[1] = 'b'; return 2;
    case '\t': o[1] = 't'; return 2;
    case '\n': o[1] = 'n'; return 2;
    case '\f': o[1] = 'f'; return 2;
    case '\r': o[1] = 'r'; return 2;
    default:
        o[1] = 'u';
        o[2] = '0';
        o[3] = '0';
        o[4] = hex[c >> 4];
        o[5] = hex[c & 15];
        return 6;
    }
}

/* A UTF-8 string quoted; -1 when it is not UTF-8 as Python's strict decoder defines it. */
static int put_string(Program *p, const uint8_t *s, Py_ssize_t n) {
    if (grow(p, 2 + 6 * n) < 0)
        return -1;
    char *o = p->out + p->len;
    *o++ = '"';
    Py_ssize_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        if (c < 0x80) {
            o += escape_ascii(o, c, p->hex);
            i++;
            continue;
        }
        Py_ssize_t k;
        if (c >= 0xC2 && c <= 0xDF)
            k = 2;
        else if (c >= 0xE0 && c <= 0xEF)
            k = 3;
        else if (c >= 0xF0 && c <= 0xF4)
            k = 4;
        else
            return -1;
        if (i + k > n)
            return -1;
        uint8_t c1 = s[i + 1];
        uint8_t lo = 0x80, hi = 0xBF;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
        else if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
        if (c1 < lo || c1 > hi)
            return -1;
        for (Py_ssize_t j = 2; j < k; j++)
            if ((s[i + j] & 0xC0) != 0x80)
                return -1;
        memcpy(o, s + i, (size_t)k);
        o += k;
        i += k;
    }
    *o++ = '"';
    p->len = o - p->out;
    return 0;
}

/* Bytes as a string of one character per byte (ISO-8859-1), quoted. */
static int put_bytes(Program *p, const uint8_t *s, Py_ssize_t n) {
    if (grow(p, 2 + 6 * n) < 0)
        return -1;
    char *o = p->out + p->len;
    *o++ = '"';
    for (Py_ssize_t i = 0; i < n; i++) {
        uint8_t c = s[i];
        if (c < 0x80)
            o += escape_ascii(o, c, p->hex);
        else {
            *o++ = (char)(0xC0 | (c >> 6));
            *o++ = (char)(0x80 | (c & 0x3F));
        }
    }
    *o++ = '"';
    p->len = o - p->out;
    return 0;
}

/* -- Java's Float.toString / Double.toString, as kseg's java_float_text computes them --------------- */

/* Python's text of x: repr (code 'r'), f"{x:.{prec}g}" ('g'), f"{x:e}" ('e', 6), f"{x:f}" ('f', 6). */
static int pyfmt(double x, char code, int prec, int flags, char *buf, size_t size) {
    char *s = PyOS_double_to_string(x, code, prec, flags, NULL);
    if (s == NULL) {
        PyErr_Clear();
        return -1;
    }
    size_t n = strlen(s);
    if (n + 1 > size) {
        PyMem_Free(s);
        return -1;
    }
    memcpy(buf, s, n + 1);
    PyMem_Free(s);
    return 0;
}

static int pyrepr(double x, char *buf, size_t size) { return pyfmt(x, 'r', 0, Py_DTSF_ADD_DOT_0, buf, size); }

/* The text into buf (NUL-terminated); -1 where Python's renderer raises (a double too large for a
 * float rendered as one) or anything fails. */
static int java_text(double x, int single, char *buf, size_t size) {
    char r[64];
    if (!single) {
        if (pyrepr(x, r, sizeof r) < 0)
            return -1;
        if (!strchr(r, 'e') && !strchr(r, 'n') && fabs(x) >= 1e-3 && fabs(x) < 1e7) {
            if (strlen(r) + 1 > size)
                return -1;
            strcpy(buf, r);
            return 0;
        }
    }
    if (isnan(x))
        return snprintf(buf, size, "NaN") < 0 ? -1 : 0;
    if (isinf(x))
        return snprintf(buf, size, x > 0 ? "Infinity" : "-Infinity") < 0 ? -1 : 0;
    if (x == 0)
        return snprintf(buf, size, signbit(x) ? "-0.0" : "0.0") < 0 ? -1 : 0;
    if (single) {
        char text[64];
        for (int prec = 1; prec < 10; prec++) {
            if (pyfmt(x, 'g', prec, 0, text, sizeof text) < 0)
                return -1;
            double y = PyOS_string_to_double(text, NULL, NULL);
            if (y == -1.0 && PyErr_Occurred()) {
                PyErr_Clear();
                return -1;
            }
            float f = (float)y;
            if (isinf(f) && !isinf(y))
                return -1; /* struct.pack(">f") raises OverflowError: Python's path says so */
            if ((double)f == x)
                break;
        }
        double v = PyOS_string_to_double(text, NULL, NULL);
        if (v == -1.0 && PyErr_Occurred()) {
            PyErr_Clear();
            return -1;
        }
        if (pyrepr(v, r, sizeof r) < 0)
            return -1;
        if (!strchr(r, 'e') && fabs(x) >= 1e-3 && fabs(x) < 1e7) {
            if (strlen(r) + 1 > size)
                return -1;
            strcpy(buf, r);
            return 0;
        }
    }
    /* r: Python's repr of the value; its digits and exponent give Java's computerized notation */
    double value = PyOS_string_to_double(r, NULL, NULL);
    if (value == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    double a = fabs(value);
    if (a >= 1e-3 && a < 1e7) {
        char t[400];
        if (strchr(r, 'e')) {
            if (pyfmt(value, 'f', 6, 0, t, sizeof t) < 0)
                return -1;
            size_t n = strlen(t);
            while (n && t[n - 1] == '0')
                t[--n] = 0;
        } else {
            if (strlen(r) + 1 > sizeof t)
                return -1;
            strcpy(t, r);
        }
        size_t n = strlen(t);
        if (!strchr(t, '.')) {
            if (n + 3 > sizeof t)
                return -1;
            strcpy(t + n, ".0");
        } else if (n && t[n - 1] == '.') {
            if (n + 2 > sizeof t)
                return -1;
            strcpy(t + n, "0");
        }
        if (strlen(t) + 1 > size)
            return -1;
        strcpy(buf, t);
        return 0;
    }
    /* digits: repr(abs(value)) before any 'e', without '.', leading and trailing zeros */
    char ar[64], digits[64];
    if (pyrepr(a, ar, sizeof ar) < 0)
        return -1;
    size_t nd = 0;
    int exp10 = 0, seen = 0, int_digits = 0, after_point = 0, lead_zeros_after_point = 0;
    char *e = strchr(ar, 'e');
    size_t mlen = e ? (size_t)(e - ar) : strlen(ar);
    for (size_t i = 0; i < mlen; i++) {
        char c = ar[i];
        if (c == '.') {
            after_point = 1;
            continue;
        }
        if (!after_point)
            int_digits++;
        if (c == '0' && !seen) {
            if (after_point)
                lead_zeros_after_point++;
            continue;
        }
        seen = 1;
        digits[nd++] = c;
    }
    while (nd && digits[nd - 1] == '0')
        nd--;
    if (nd == 0)
        digits[nd++] = '0';
    digits[nd] = 0;
    /* the decimal exponent of the first significant digit (Java's E), from the same repr */
    if (e)
        exp10 = atoi(e + 1);
    else if (a >= 1)
        exp10 = 0;
    if (!e) {
        /* plain repr: 12345678.0 -> 7; 0.000512 -> -4 */
        int lead_int_zeros = 0;
        for (size_t i = 0; i < mlen && ar[i] == '0'; i++)
            lead_int_zeros++;
        if (a >= 1)
            exp10 = int_digits - lead_int_zeros - 1;
        else
            exp10 = -(lead_zeros_after_point + 1);
    }
    int n = snprintf(buf, size, "%s%c.%sE%d", value < 0 ? "-" : "", digits[0], nd > 1 ? digits + 1 : "0", exp10);
    return (n < 0 || (size_t)n >= size) ? -1 : 0;
}


/* -- the fast path of the common range: exact, in 128-bit integers ------------------------------------
 *
 * For 1e-3 <= |x| < 1e7 (the range Java prints plainly), x = M * 2^-S exactly.  The digits Python's
 * renderer prints are found as it finds them, with no decimal text made and read back: a double's are
 * repr's, the shortest correctly rounded p-digit decimal d_p (p = 1, 2, ...) inside x's rounding interval
 * (at most one p-digit decimal lies inside it below 16 digits, the nearest at 16 and 17); a float's are
 * the first d_p (p = 1..9) that reads back to the float through a double, as float(f"{x:.{p}g}") packed
 * as ">f" does.  Values at a power of two (an uneven interval), a float decimal too close to its interval's
 * edge to settle without the double rounding, or outside the range: the general path above. */

typedef unsigned __int128 u128;

static const uint64_t POW10[20] = {1ULL,
                                   10ULL,
                                   100ULL,
                                   1000ULL,
                                   10000ULL,
                                   100000ULL,
                                   1000000ULL,
                                   10000000ULL,
                                   100000000ULL,
                                   1000000000ULL,
                                   10000000000ULL,
                                   100000000000ULL,
                                   1000000000000ULL,
                                   10000000000000ULL,
                                   100000000000000ULL,
                                   1000000000000000ULL,
                                   10000000000000000ULL,
                                   100000000000000000ULL,
                                   1000000000000000000ULL,
                                   10000000000000000000ULL};

/* x = M * 2^-S >= 10^j, exactly (-4 <= j <= 7, S <= 64). */
static int at_least_pow10(uint64_t M, int S, int j) {
    if (j >= 0)
        return (u128)M >= ((u128)POW10[j] << S);
    return (u128)M * POW10[-j] >= ((u128)1 << S);
}

/* -1, 0, 1: N * 10^Q against (2M + delta) * 2^-(S+1) * 2^-extra, all exact (the callers keep the sizes
 * within 128 bits). */
static int cmp_decimal(uint64_t N, int Q, uint64_t M2, int S1) {
    u128 a, b;
    if (Q >= 0) {
        a = ((u128)N * POW10[Q]) << S1;
        b = M2;
    } else {
        a = (u128)N << S1;
        b = (u128)M2 * POW10[-Q];
    }
    return a < b ? -1 : a > b;
}

/* The digits (N, count n) and the exponent k of the first digit; 0, or -1: the general path decides. */
static int fast_digits(double x, int single, uint64_t *digits, int *ndigits, int *k10) {
    double a = fabs(x);
    if (!(a >= 1e-3 && a < 1e7))
        return -1;
    int e;
    double f = frexp(a, &e);
    int bits = single ? 24 : 53;
    if (single && (double)(float)a != a)
        return -1; /* a double printed as a float (a union's quirk): the general path */
    uint64_t M = (uint64_t)ldexp(f, bits);
    int S = bits - e;
    if (M == (1ULL << (bits - 1)) || S < 0 || S > 62)
        return -1; /* a power of two: its rounding interval is uneven */
    int k = (int)floor(log10(a));
    while (k > -4 && !at_least_pow10(M, S, k))
        k--;
    while (k < 7 && at_least_pow10(M, S, k + 1))
        k++;
    if (k < -3 || k > 6)
        return -1;
    int maxp = single ? 9 : 17;
    for (int p = 1; p <= maxp; p++) {
        int Q = k - p + 1;
        /* N = round half even of x / 10^Q */
        u128 num, den;
        if (Q >= 0) {
            num = M;
            den = (u128)POW10[Q] << S;
        } else {
            num = (u128)M * POW10[-Q];
            den = (u128)1 << S;
        }
        u128 q = num / den, r = num % den;
        if (2 * r > den || (2 * r == den && (q & 1)))
            q++;
        uint64_t N = (uint64_t)q;
        int n = p;
        if (N == POW10[p]) { /* 9.99 -> 10.0: one digit more to the left */
            N = POW10[p - 1];
            Q++;
        }
        int inside;
        if (!single) {
            /* inside (2M-1, 2M+1) * 2^-(S+1); on an edge, round half even picks x when M is even */
            int lo = cmp_decimal(N, Q, 2 * M - 1, S + 1), hi = cmp_decimal(N, Q, 2 * M + 1, S + 1);
            inside = (lo > 0 && hi < 0) || ((lo == 0 || hi == 0) && !(M & 1));
        } else {
            /* the float's midpoints, widened and narrowed by 2^-28 of their unit: within that band the
             * double rounding decides, and the general path reads it */
            uint64_t W = 1ULL << 28;
            int S1 = S + 1 + 28;
            int lo_out = cmp_decimal(N, Q, (2 * M - 1) * W - 1, S1) <= 0;
            int lo_in = cmp_decimal(N, Q, (2 * M - 1) * W + 1, S1) >= 0;
            int hi_in = cmp_decimal(N, Q, (2 * M + 1) * W - 1, S1) <= 0;
            int hi_out = cmp_decimal(N, Q, (2 * M + 1) * W + 1, S1) >= 0;
            if (lo_out || hi_out)
                inside = 0;
            else if (lo_in && hi_in)
                inside = 1;
            else
                return -1;
        }
        if (inside) {
            while (n > 1 && N % 10 == 0) {
                N /= 10;
                n--;
            }
            *digits = N;
            *ndigits = n;
            *k10 = Q + n - 1;
            return 0;
        }
    }
    return -1;
}

/* Python's repr of a value in the plain range, from its digits: 0.001, 12.5, 1234567.0. */
static int plain_text(int negative, uint64_t N, int n, int k, char *buf, size_t size) {
    char d[24];
    for (int i = n - 1; i >= 0; i--) {
        d[i] = (char)('0' + N % 10);
        N /= 10;
    }
    char *o = buf;
    if (size < 48)
        return -1;
    if (negative)
        *o++ = '-';
    if (k < 0) {
        *o++ = '0';
        *o++ = '.';
        for (int i = 0; i < -k - 1; i++)
            *o++ = '0';
        memcpy(o, d, (size_t)n);
        o += n;
    } else if (n <= k + 1) {
        memcpy(o, d, (size_t)n);
        o += n;
        for (int i = 0; i < k + 1 - n; i++)
            *o++ = '0';
        *o++ = '.';
        *o++ = '0';
    } else {
        memcpy(o, d, (size_t)(k + 1));
        o += k + 1;
        *o++ = '.';
        memcpy(o, d + k + 1, (size_t)(n - k - 1));
        o += n - k - 1;
    }
    *o = 0;
    return 0;
}

/* The text of x in a JSON row: json.dumps of the value Java's text reads as (Java's text outside the plain
 * range, 1.0E10, is Python's repr of its value there, 10000000000.0; NaN and Infinity are json.dumps's). */
static int json_text(double x, int single, char *buf, size_t size) {
    if (java_text(x, single, buf, size) < 0)
        return -1;
    if (!strchr(buf, 'E'))
        return 0;
    double v = PyOS_string_to_double(buf, NULL, NULL);
    if (v == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    return pyrepr(v, buf, size);
}

static int put_float(Program *p, double x, int single, uint32_t bits, int cacheable) {
    char buf[64];
    uint64_t N;
    int n, k;
    if (fast_digits(x, single, &N, &n, &k) == 0 && plain_text(signbit(x) != 0, N, n, k, buf, sizeof buf) == 0)
        return put(p, buf, (Py_ssize_t)strlen(buf));
    int (*text)(double, int, char *, size_t) = p->json ? json_text : java_text;
    if (cacheable) {
        FloatSlot *s = &p->fcache[(bits ^ (bits >> 13) ^ (single << 7)) & (FLOAT_CACHE - 1)];
        if (s->used == (single ? 2 : 1) && s->bits == bits)
            return put(p, s->text, s->len);
        if (text(x, single, buf, sizeof buf) < 0)
            return -1;
        size_t n = strlen(buf);
        if (n < sizeof s->text) {
            s->used = single ? 2 : 1;
            s->bits = bits;
            s->len = (uint8_t)n;
            memcpy(s->text, buf, n);
        }
        return put(p, buf, (Py_ssize_t)n);
    }
    if (text(x, single, buf, sizeof buf) < 0)
        return -1;
    return put(p, buf, (Py_ssize_t)strlen(buf));
}

/* -- reading --------------------------------------------------------------------------------------- */

/* Avro's zigzag varint (fastavro's read_long); -1 past the end or past 64 bits. */
static inline int read_long(const uint8_t **pp, const uint8_t *end, int64_t *out) {
    const uint8_t *q = *pp;
    uint64_t n = 0;
    for (int i = 0, shift = 0; i < 10; i++, shift += 7) {
        if (q >= end)
            return -1;
        uint8_t b = *q++;
        if (i == 9 && (b & 0xFE))
            return -1;
        n |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) {
            *pp = q;
            *out = (int64_t)((n >> 1) ^ ((uint64_t)0 - (n & 1)));
            return 0;
        }
    }
    return -1;
}

static int run(Program *p, int32_t pc, const uint8_t **pp, int depth);

/* The count of the next block of an array or map; items of min_width bytes each must fit the bytes left,
 * items of no byte (leaves each) the bound on leaves (the items count them as they are read). */
static int block_count(Program *p, const uint8_t **pp, int32_t min_width, int32_t leaves, int64_t *count) {
    int64_t c, size;
    if (read_long(pp, p->end, &c) < 0)
        return -1;
    if (c < 0) {
        if (c == INT64_MIN || read_long(pp, p->end, &size) < 0)
            return -1;
        c = -c;
    }
    if (min_width > 0) {
        if (c > (int64_t)(p->end - *pp) / min_width)
            return -1;
    } else if (p->zero_items + (c > MAX_ZERO_WIDTH ? MAX_ZERO_WIDTH + 1 : c) * (int64_t)leaves > MAX_ZERO_WIDTH) {
        p->refused = 1;
        return -1;
    }
    *count = c;
    return 0;
}

typedef struct {
    const uint8_t *s;
    Py_ssize_t n;
} Span;

static int span_cmp(const void *a, const void *b) {
    const Span *x = a, *y = b;
    if (x->n != y->n)
        return x->n < y->n ? -1 : 1;
    return memcmp(x->s, y->s, (size_t)x->n);
}

/* Whether two keys are equal (fastavro's dict would keep one: the Python path's text differs). */
static int has_repeat(Span *keys, Py_ssize_t n) {
    if (n < 2)
        return 0;
    if (n <= 16) {
        for (Py_ssize_t i = 0; i < n; i++)
            for (Py_ssize_t j = i + 1; j < n; j++)
                if (keys[i].n == keys[j].n && memcmp(keys[i].s, keys[j].s, (size_t)keys[i].n) == 0)
                    return 1;
        return 0;
    }
    qsort(keys, (size_t)n, sizeof(Span), span_cmp);
    for (Py_ssize_t i = 1; i < n; i++)
        if (span_cmp(&keys[i - 1], &keys[i]) == 0)
            return 1;
    return 0;
}

static int run_map(Program *p, int32_t pc, const uint8_t **pp, int depth) {
    int32_t width = p->ops[pc + 2], leaves = p->ops[pc + 3], value = pc + 4;
    Span *keys = NULL;
    Py_ssize_t nkeys = 0, kcap = 0;
    int first = 1, rc = -1;
    if (put(p, "{", 1) < 0)
        return -1;
    for (;;) {
        int64_t count;
        if (block_count(p, pp, width, leaves, &count) < 0)
            goto done;
        if (count == 0)
            break;
        for (int64_t i = 0; i < count; i++) {
            int64_t n;
            if (read_long(pp, p->end, &n) < 0 || n < 0 || n > p->end - *pp)
                goto done;
            if (nkeys == kcap) {
                Py_ssize_t cap = kcap ? kcap * 2 : 8;
                Span *k = PyMem_Realloc(keys, (size_t)cap * sizeof(Span));
                if (k == NULL)
                    goto done;
                keys = k;
                kcap = cap;
            }
            keys[nkeys].s = *pp;
            keys[nkeys++].n = (Py_ssize_t)n;
            if ((!first && put(p, ",", 1) < 0) || put_string(p, *pp, (Py_ssize_t)n) < 0 || put(p, ":", 1) < 0)
                goto done;
            first = 0;
            *pp += n;
            if (run(p, value, pp, depth + 1) < 0)
                goto done;
        }
    }
    if (has_repeat(keys, nkeys))
        goto done;
    rc = put(p, "}", 1);
done:
    PyMem_Free(keys);
    return rc;
}

/* Whether the node at pc is a leaf of no byte: a null, a record of no field, a zero-size fixed. */
static inline int is_leaf(const int32_t *op) {
    return op[0] == OP_NULL || (op[0] == OP_RECORD && op[2] == 0) || (op[0] == OP_FIXED && op[2] == 0);
}

/* A leaf's text: null, {}, "". */
static int put_leaf(Program *p, const int32_t *op) {
    if (op[0] == OP_NULL)
        return put(p, "null", 4);
    return op[0] == OP_RECORD ? put_const(p, op[3]) : put(p, "\"\"", 2);
}

/* One leaf more; -1 (refused) past the bound. */
static inline int count_leaf(Program *p) {
    if (++p->zero_items > MAX_ZERO_WIDTH) {
        p->refused = 1;
        return -1;
    }
    return 0;
}

static int run(Program *p, int32_t pc, const uint8_t **pp, int depth) {
    const int32_t *op = p->ops + pc;
    const uint8_t *end = p->end;
    if (depth > MAX_DEPTH)
        return -1;
    if (is_leaf(op))
        return count_leaf(p) < 0 ? -1 : put_leaf(p, op);
    switch (op[0]) {
    case OP_BOOL:
        if (*pp >= end)
            return -1;
        return *(*pp)++ ? put(p, "true", 4) : put(p, "false", 5);
    case OP_LONG: {
        int64_t v;
        if (read_long(pp, end, &v) < 0)
            return -1;
        return put_long(p, v);
    }
    case OP_FLOAT: {
        if (end - *pp < 4)
            return -1;
        const uint8_t *b = *pp;
        uint32_t bits = (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
        float f;
        memcpy(&f, &bits, 4);
        *pp += 4;
        return put_float(p, (double)f, op[2], bits, 1);
    }
    case OP_DOUBLE: {
        if (end - *pp < 8)
            return -1;
        uint64_t bits = 0;
        for (int i = 7; i >= 0; i--)
            bits = bits << 8 | (*pp)[i];
        double d;
        memcpy(&d, &bits, 8);
        *pp += 8;
        return put_float(p, d, op[2], 0, 0);
    }
    case OP_STRING:
    case OP_BYTES: {
        int64_t n;
        if (read_long(pp, end, &n) < 0 || n < 0 || n > end - *pp)
            return -1;
        const uint8_t *s = *pp;
        *pp += n;
        return op[0] == OP_STRING ? put_string(p, s, (Py_ssize_t)n) : put_bytes(p, s, (Py_ssize_t)n);
    }
    case OP_FIXED: {
        int32_t n = op[2];
        if (n > end - *pp)
            return -1;
        const uint8_t *s = *pp;
        *pp += n;
        return put_bytes(p, s, n);
    }
    case OP_ENUM: {
        int64_t i;
        if (read_long(pp, end, &i) < 0 || i < 0 || i >= op[2])
            return -1;
        return put_const(p, op[3] + (int32_t)i);
    }
    case OP_RECORD: {
        int32_t n = op[2], at = pc + 4;
        for (int32_t i = 0; i < n; i++) {
            if (put_const(p, p->ops[at]) < 0 || run(p, at + 1, pp, depth + 1) < 0)
                return -1;
            at += 1 + p->ops[at + 2];
        }
        return put_const(p, op[3]);
    }
    case OP_ARRAY: {
        int first = 1;
        if (put(p, "[", 1) < 0)
            return -1;
        for (;;) {
            int64_t count;
            if (block_count(p, pp, op[2], op[3], &count) < 0)
                return -1;
            if (count == 0)
                break;
            for (int64_t i = 0; i < count; i++) {
                if ((!first && put(p, ",", 1) < 0) || run(p, pc + 4, pp, depth + 1) < 0)
                    return -1;
                first = 0;
            }
        }
        return put(p, "]", 1);
    }
    case OP_MAP:
        return run_map(p, pc, pp, depth);
    case OP_UNION: {
        int64_t i;
        if (read_long(pp, end, &i) < 0 || i < 0 || i >= op[2])
            return -1;
        int32_t branch = op[3 + 2 * i], open = op[4 + 2 * i];
        const int32_t *b = p->ops + branch;
        if (open < 0) /* null: a leaf the index chose, its byte the index's (not counted) */
            return put_leaf(p, b);
        if (put_const(p, open) < 0 || (is_leaf(b) ? put_leaf(p, b) : run(p, branch, pp, depth + 1)) < 0)
            return -1;
        return put(p, "}", 1);
    }
    case OP_CALL:
        return run(p, op[2], pp, depth + 1);
    }
    return -1;
}

/* -- the program, checked once ------------------------------------------------------------------- */

/* Every node inside its parent, every pc and const in range: the interpreter trusts a checked program. */
static int check(Program *p, int32_t pc, int32_t limit, int depth) {
    if (depth > 10000 || pc < 0 || pc + 2 > limit)
        return -1;
    const int32_t *op = p->ops + pc;
    int32_t len = op[1];
    if (len < 2 || pc + len > limit || op[0] < 0 || op[0] >= OP_COUNT)
        return -1;
    int32_t end = pc + len;
    p->is_node[pc] |= 1;
#define NEED(k) \
    if (len < (k)) \
    return -1
#define CONST_OK(c) ((c) >= 0 && (c) < p->nconsts)
    switch (op[0]) {
    case OP_NULL:
    case OP_BOOL:
    case OP_LONG:
    case OP_STRING:
    case OP_BYTES:
        return len == 2 ? 0 : -1;
    case OP_FLOAT:
    case OP_DOUBLE:
        return len == 3 && (op[2] == 0 || op[2] == 1) ? 0 : -1;
    case OP_FIXED:
        return len == 3 && op[2] >= 0 ? 0 : -1;
    case OP_ENUM:
        NEED(4);
        if (len != 4 || op[2] < 0 || !CONST_OK(op[3]) || (op[2] > 0 && !CONST_OK(op[3] + op[2] - 1)))
            return -1;
        return 0;
    case OP_RECORD: {
        NEED(4);
        if (op[2] < 0 || !CONST_OK(op[3]))
            return -1;
        int32_t at = pc + 4;
        for (int32_t i = 0; i < op[2]; i++) {
            if (at + 1 > end || !CONST_OK(p->ops[at]) || check(p, at + 1, end, depth + 1) < 0)
                return -1;
            at += 1 + p->ops[at + 2];
        }
        return at == end ? 0 : -1;
    }
    case OP_ARRAY:
    case OP_MAP:
        NEED(5);
        if (op[2] < 0 || op[3] < 0 || check(p, pc + 4, end, depth + 1) < 0 || pc + 4 + p->ops[pc + 5] != end)
            return -1;
        return 0;
    case OP_UNION: {
        NEED(3);
        int32_t n = op[2];
        if (n < 0 || len < 3 + 2 * n)
            return -1;
        for (int32_t i = 0; i < n; i++) {
            int32_t branch = op[3 + 2 * i], open = op[4 + 2 * i];
            if (branch < pc + 3 + 2 * n || branch >= end || check(p, branch, end, depth + 1) < 0)
                return -1;
            if (open != -1 && !CONST_OK(open))
                return -1;
        }
        return 0;
    }
    case OP_CALL:
        /* a recursive record's pc: it must be a record node (checked once the whole tree is) */
        if (len != 3 || op[2] < 0 || op[2] >= p->nops)
            return -1;
        p->is_node[op[2]] |= 2;
        return 0;
    }
    return -1;
#undef NEED
#undef CONST_OK
}

static int Program_init(Program *self, PyObject *args, PyObject *kwds) {
    static char *kwlist[] = {"ops", "consts", "json", NULL};
    Py_buffer ops;
    PyObject *consts;
    int json = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, "y*O!|p", kwlist, &ops, &PyTuple_Type, &consts, &json))
        return -1;
    if (self->ops != NULL) {
        PyBuffer_Release(&ops);
        PyErr_SetString(PyExc_TypeError, "Program is initialised once");
        return -1;
    }
    if (ops.len % 4 || ops.len < 8 || ops.len / 4 > INT32_MAX / 2) {
        PyBuffer_Release(&ops);
        PyErr_SetString(PyExc_ValueError, "ops: a whole number of int32 nodes");
        return -1;
    }
    self->nops = ops.len / 4;
    self->json = json;
    self->hex = json ? HEX_LOWER : HEX;
    self->ops = PyMem_Malloc((size_t)ops.len);
    self->nconsts = PyTuple_GET_SIZE(consts);
    self->cptr = PyMem_Calloc((size_t)self->nconsts + 1, sizeof(char *));
    self->clen = PyMem_Calloc((size_t)self->nconsts + 1, sizeof(Py_ssize_t));
    self->fcache = PyMem_Calloc(FLOAT_CACHE, sizeof(FloatSlot));
    if (!self->ops || !self->cptr || !self->clen || !self->fcache) {
        PyBuffer_Release(&ops);
        PyErr_NoMemory();
        return -1;
    }
    memcpy(self->ops, ops.buf, (size_t)ops.len);
    PyBuffer_Release(&ops);
    Py_INCREF(consts);
    self->consts = consts;
    for (Py_ssize_t i = 0; i < self->nconsts; i++) {
        PyObject *c = PyTuple_GET_ITEM(consts, i);
        if (!PyBytes_Check(c)) {
            PyErr_SetString(PyExc_TypeError, "consts: a tuple of bytes");
            return -1;
        }
        self->cptr[i] = PyBytes_AS_STRING(c);
        self->clen[i] = PyBytes_GET_SIZE(c);
    }
    self->is_node = PyMem_Calloc((size_t)self->nops, 1);
    if (self->is_node == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int bad = check(self, 0, (int32_t)self->nops, 0) < 0 || self->ops[1] != self->nops;
    for (Py_ssize_t i = 0; !bad && i < self->nops; i++)
        if (self->is_node[i] & 2 && (!(self->is_node[i] & 1) || self->ops[i] != OP_RECORD))
            bad = 1;
    PyMem_Free(self->is_node);
    self->is_node = NULL;
    if (bad) {
        PyErr_SetString(PyExc_ValueError, "not a well-formed Avro program");
        return -1;
    }
    return 0;
}

static void Program_dealloc(Program *self) {
    PyMem_Free(self->ops);
    PyMem_Free(self->cptr);
    PyMem_Free(self->clen);
    PyMem_Free(self->out);
    PyMem_Free(self->fcache);
    Py_XDECREF(self->consts);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* The text of one datum; Py_None where the Python path must read it; NULL with ValueError when refused. */
static PyObject *decode_datum(Program *self, const uint8_t *q, Py_ssize_t n) {
    self->end = q + n;
    self->len = 0;
    self->zero_items = 0;
    self->refused = 0;
    int rc = run(self, 0, &q, 0);
    if (rc == 0 && q != self->end)
        rc = -1; /* bytes after the datum: the Python path names how many */
    if (PyErr_Occurred())
        PyErr_Clear();
    PyObject *text;
    if (self->refused)
        text = PyErr_Format(PyExc_ValueError,
                            "more than %d values that take no byte (null, an empty record) in the payload: "
                            "not read",
                            MAX_ZERO_WIDTH);
    else if (rc < 0) {
        Py_INCREF(Py_None);
        text = Py_None;
    } else
        text = PyUnicode_DecodeUTF8(self->out, self->len, "strict");
    if (self->cap > (1 << 20)) { /* after one large payload, the buffer goes back */
        PyMem_Free(self->out);
        self->out = NULL;
        self->cap = 0;
    }
    return text;
}

static PyObject *Program_decode(Program *self, PyObject *arg) {
    Py_buffer data;
    if (self->ops == NULL) {
        PyErr_SetString(PyExc_TypeError, "Program is not initialised");
        return NULL;
    }
    if (PyObject_GetBuffer(arg, &data, PyBUF_SIMPLE) < 0)
        return NULL;
    PyObject *text = decode_datum(self, data.buf, data.len);
    PyBuffer_Release(&data);
    return text;
}

static PyObject *float_text(PyObject *mod, PyObject *args) {
    (void)mod;
    double x;
    int single;
    char buf[64];
    if (!PyArg_ParseTuple(args, "dp", &x, &single))
        return NULL;
    uint64_t N;
    int n, k;
    if (fast_digits(x, single, &N, &n, &k) == 0) {
        if (plain_text(signbit(x) != 0, N, n, k, buf, sizeof buf) < 0)
            Py_RETURN_NONE;
    } else if (java_text(x, single, buf, sizeof buf) < 0)
        Py_RETURN_NONE;
    return PyUnicode_FromString(buf);
}

static PyMethodDef Program_methods[] = {
    {"decode", (PyCFunction)Program_decode, METH_O,
     "decode(payload) -> the text, or None where the Python path must read it"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject ProgramType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kseg._avro.Program",
    .tp_basicsize = sizeof(Program),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Program(ops, consts, json=False): one Avro writer schema, compiled",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Program_init,
    .tp_dealloc = (destructor)Program_dealloc,
    .tp_methods = Program_methods,
};

/* -- Framed: magic 0, a 4-byte id, the datum: the programs of the ids seen, the framing read in C ------ */

#define FRAMED_IDS 16

typedef struct {
    PyObject_HEAD int n;
    uint32_t ids[FRAMED_IDS];
    Program *programs[FRAMED_IDS];
} Framed;

static PyTypeObject ProgramType;

static void Framed_dealloc(Framed *self) {
    for (int i = 0; i < self->n; i++)
        Py_DECREF(self->programs[i]);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *Framed_add(Framed *self, PyObject *args) {
    unsigned int id;
    PyObject *program;
    if (!PyArg_ParseTuple(args, "IO!", &id, &ProgramType, &program))
        return NULL;
    if (((Program *)program)->ops == NULL) {
        PyErr_SetString(PyExc_TypeError, "Program is not initialised");
        return NULL;
    }
    for (int i = 0; i < self->n; i++)
        if (self->ids[i] == id)
            Py_RETURN_FALSE;
    if (self->n == FRAMED_IDS)
        Py_RETURN_FALSE; /* more ids: the Python path finds their programs */
    Py_INCREF(program);
    self->ids[self->n] = id;
    self->programs[self->n++] = (Program *)program;
    Py_RETURN_TRUE;
}

/* decode(payload): the text when the payload is magic 0 and an id added here and its program reads the
 * datum; else None (and the Python path reads it: another framing, an id not seen, a damaged datum). */
static PyObject *Framed_decode(Framed *self, PyObject *arg) {
    Py_buffer data;
    if (PyObject_GetBuffer(arg, &data, PyBUF_SIMPLE) < 0)
        return NULL;
    const uint8_t *b = data.buf;
    PyObject *text = NULL;
    if (data.len >= 5 && b[0] == 0) {
        uint32_t id = (uint32_t)b[1] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 8 | b[4];
        for (int i = 0; i < self->n; i++)
            if (self->ids[i] == id) {
                text = decode_datum(self->programs[i], b + 5, data.len - 5);
                if (text == NULL && PyErr_ExceptionMatches(PyExc_ValueError))
                    PyErr_Clear(); /* refused: the Python path gives the reason */
                break;
            }
    }
    PyBuffer_Release(&data);
    if (text == NULL && !PyErr_Occurred()) {
        Py_INCREF(Py_None);
        text = Py_None;
    }
    return text;
}

static PyMethodDef Framed_methods[] = {
    {"add", (PyCFunction)Framed_add, METH_VARARGS, "add(id, program) -> whether it was added"},
    {"decode", (PyCFunction)Framed_decode, METH_O,
     "decode(payload) -> the text of a magic-0 payload of an added id, or None"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject FramedType = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "kseg._avro.Framed",
    .tp_basicsize = sizeof(Framed),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Framed(): Confluent-framed payloads (magic 0, id) of the ids added, read by their programs",
    .tp_new = PyType_GenericNew,
    .tp_dealloc = (destructor)Framed_dealloc,
    .tp_methods = Framed_methods,
};

static PyMethodDef module_methods[] = {
    {"float_text", float_text, METH_VARARGS,
     "float_text(x, single) -> Java's text of x as the renderer writes it, or None where Python raises"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "kseg._avro", "Avro payloads read against a compiled schema program, as text.", -1,
    module_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__avro(void) {
    if (PyType_Ready(&ProgramType) < 0 || PyType_Ready(&FramedType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&module);
    if (m == NULL)
        return NULL;
    Py_INCREF(&ProgramType);
    Py_INCREF(&FramedType);
    if (PyModule_AddObject(m, "Program", (PyObject *)&ProgramType) < 0 ||
        PyModule_AddObject(m, "Framed", (PyObject *)&FramedType) < 0 ||
        PyModule_AddIntConstant(m, "ABI", KSEG_AVRO_ABI) < 0) {
        Py_DECREF(&ProgramType);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
