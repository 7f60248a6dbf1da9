/*
 * kseg._engine: the optional compiled engine (issue 12).
 *
 * It implements exactly the hot paths of the pure-Python seams and nothing else:
 *
 *   crc32c(data, crc=0)            CRC-32C (Castagnoli), SSE4.2 when the CPU has it, slicing-by-8 otherwise
 *   scan(view, ws, wl, pos, end, items, limit)
 *                                  the fast path of FileRecords.scan: whole v2 batches in the window
 *   decode_records(...)            v2_records.decode_records for well-formed records (DefaultRecord.readFrom):
 *                                  key and value as slices, sizes or spans (FORM_*)
 *   batch_lines(items, start, parts_fn)
 *                                  TextSink.batch_lines' v2 batch lines
 *   record_lines(records, ts_type, fallback, form, buf, pieces)
 *                                  TextSink's record lines as UTF-8 bytes: sizes (--deep-iteration), or
 *                                  slices or spans printed by Kafka's string decoders (--print-data-log)
 *   dump_window(view, ws, wl, pos, end, mode, last_offset, gap, parts_fn, ts_names, out_limit, json, limit,
 *               codec_fn)          Dumper._dump_batches over a window: framing, CRC, batch lines and, in
 *                                  the deep modes, lz4 and zstd batches decompressed, records decoded, the
 *                                  continuity rule and record lines (Kafka's text or JSON rows)
 *   verify_window(view, ws, wl, pos, end, state, positions, offsets_a, offsets_b, out)
 *                                  verify-index's log pass over a window: framing, CRC and the batch checks
 *                                  of every batch that raises nothing, and the batches the indexes ask about
 *   find(buffer, needle, start, end)
 *                                  bytes.find(needle, start, end) over a window (grep's literal bytes), by
 *                                  the C library's memmem
 *
 * Contract: the engine only ever accepts input the Python path accepts, and produces the same
 * values.  Anything else -- a bound exceeded, a lying length, a varint too long, an overflow,
 * invalid UTF-8 -- is handed back to the Python path at the start of the record (or batch) it
 * concerns ("bail"), so every error is raised by the one Python rule at the same byte position,
 * and Kafka's JVM string decoding of malformed UTF-8 stays the one Python function.
 * Every read is bounds-checked against the buffer's length: no input can crash the interpreter.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <limits.h>

#if defined(__GNUC__) || defined(__clang__)
#define add_overflow(a, b, r) __builtin_add_overflow((a), (b), (r))
#else /* MSVC */
static inline int add_overflow(long long a, long long b, long long *r) {
    if ((b > 0 && a > LLONG_MAX - b) || (b < 0 && a < LLONG_MIN - b)) return 1;
    *r = a + b;
    return 0;
}
#endif

/* ------------------------------------------------------------------ CRC-32C */

static uint32_t crc_table[8][256];

static void crc_init(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        crc_table[0][n] = c;
    }
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = crc_table[0][n];
        for (int t = 1; t < 8; t++) {
            c = crc_table[0][c & 0xFF] ^ (c >> 8);
            crc_table[t][n] = c;
        }
    }
}

static uint32_t crc_table_update(uint32_t crc, const unsigned char *p, Py_ssize_t n) {
    crc = ~crc;
    while (n && ((uintptr_t)p & 7)) {
        crc = crc_table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
        n--;
    }
    while (n >= 8) {
        uint32_t lo, hi;
        memcpy(&lo, p, 4);
        memcpy(&hi, p + 4, 4);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
        lo = __builtin_bswap32(lo);
        hi = __builtin_bswap32(hi);
#endif
        lo ^= crc;
        crc = crc_table[7][lo & 0xFF] ^ crc_table[6][(lo >> 8) & 0xFF] ^ crc_table[5][(lo >> 16) & 0xFF] ^
              crc_table[4][lo >> 24] ^ crc_table[3][hi & 0xFF] ^ crc_table[2][(hi >> 8) & 0xFF] ^
              crc_table[1][(hi >> 16) & 0xFF] ^ crc_table[0][hi >> 24];
        p += 8;
        n -= 8;
    }
    while (n--) crc = crc_table[0][(crc ^ *p++) & 0xFF] ^ (crc >> 8);
    return ~crc;
}

/* Operators that append n zero bytes to a CRC (GF(2) matrices, as tables a byte at a time): they
 * combine three CRCs computed side by side into one (three crc32 instructions in flight at once). */
static uint32_t gf2_times(const uint32_t *mat, uint32_t vec) {
    uint32_t sum = 0;
    while (vec) {
        if (vec & 1) sum ^= *mat;
        vec >>= 1;
        mat++;
    }
    return sum;
}

static void gf2_square(uint32_t *square, const uint32_t *mat) {
    for (int n = 0; n < 32; n++) square[n] = gf2_times(mat, mat[n]);
}

/* the operator for ``len`` zero bytes (``len`` a power of two) */
static void zeros_op(uint32_t *even, size_t len) {
    uint32_t odd[32];
    odd[0] = 0x82F63B78u; /* one zero bit */
    uint32_t row = 1;
    for (int n = 1; n < 32; n++) {
        odd[n] = row;
        row <<= 1;
    }
    gf2_square(even, odd); /* two zero bits */
    gf2_square(odd, even); /* four */
    do {
        gf2_square(even, odd); /* one zero byte first, then doubling */
        len >>= 1;
        if (len == 0) return;
        gf2_square(odd, even);
        len >>= 1;
    } while (len);
    for (int n = 0; n < 32; n++) even[n] = odd[n];
}

static void zeros_table(uint32_t zeros[4][256], size_t len) {
    uint32_t op[32];
    zeros_op(op, len);
    for (uint32_t n = 0; n < 256; n++) {
        zeros[0][n] = gf2_times(op, n);
        zeros[1][n] = gf2_times(op, n << 8);
        zeros[2][n] = gf2_times(op, n << 16);
        zeros[3][n] = gf2_times(op, n << 24);
    }
}

static inline uint32_t zeros_shift(uint32_t zeros[4][256], uint32_t crc) {
    return zeros[0][crc & 0xFF] ^ zeros[1][(crc >> 8) & 0xFF] ^ zeros[2][(crc >> 16) & 0xFF] ^ zeros[3][crc >> 24];
}

#define CRC_LONG 8192
#define CRC_SHORT 256
static uint32_t crc_long[4][256];
static uint32_t crc_short[4][256];

#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
#define KSEG_HW_CRC 1
static inline uint64_t load64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* SSE4.2's crc32 instruction, three streams at a time over blocks of 3 x 8 KiB, then 3 x 256 bytes */
__attribute__((target("sse4.2"))) static uint32_t crc_hw_update(uint32_t crc, const unsigned char *p, Py_ssize_t n) {
    uint64_t c0 = ~crc, c1, c2;
    while (n && ((uintptr_t)p & 7)) {
        c0 = __builtin_ia32_crc32qi((uint32_t)c0, *p++);
        n--;
    }
    while (n >= CRC_LONG * 3) {
        c1 = c2 = 0;
        const unsigned char *end = p + CRC_LONG;
        do {
            c0 = __builtin_ia32_crc32di(c0, load64(p));
            c1 = __builtin_ia32_crc32di(c1, load64(p + CRC_LONG));
            c2 = __builtin_ia32_crc32di(c2, load64(p + 2 * CRC_LONG));
            p += 8;
        } while (p < end);
        c0 = zeros_shift(crc_long, (uint32_t)c0) ^ (uint32_t)c1;
        c0 = zeros_shift(crc_long, (uint32_t)c0) ^ (uint32_t)c2;
        p += 2 * CRC_LONG;
        n -= 3 * CRC_LONG;
    }
    while (n >= CRC_SHORT * 3) {
        c1 = c2 = 0;
        const unsigned char *end = p + CRC_SHORT;
        do {
            c0 = __builtin_ia32_crc32di(c0, load64(p));
            c1 = __builtin_ia32_crc32di(c1, load64(p + CRC_SHORT));
            c2 = __builtin_ia32_crc32di(c2, load64(p + 2 * CRC_SHORT));
            p += 8;
        } while (p < end);
        c0 = zeros_shift(crc_short, (uint32_t)c0) ^ (uint32_t)c1;
        c0 = zeros_shift(crc_short, (uint32_t)c0) ^ (uint32_t)c2;
        p += 2 * CRC_SHORT;
        n -= 3 * CRC_SHORT;
    }
    while (n >= 8) {
        c0 = __builtin_ia32_crc32di(c0, load64(p));
        p += 8;
        n -= 8;
    }
    while (n--) c0 = __builtin_ia32_crc32qi((uint32_t)c0, *p++);
    return ~(uint32_t)c0;
}
#endif

static int crc_hw = 0;

static inline uint32_t crc32c_update(uint32_t crc, const unsigned char *p, Py_ssize_t n) {
#ifdef KSEG_HW_CRC
    if (crc_hw) return crc_hw_update(crc, p, n);
#endif
    return crc_table_update(crc, p, n);
}

static PyObject *py_crc32c(PyObject *self, PyObject *args) {
    Py_buffer b;
    unsigned long crc = 0;
    if (!PyArg_ParseTuple(args, "y*|k:crc32c", &b, &crc)) return NULL;
    uint32_t r = crc32c_update((uint32_t)crc, (const unsigned char *)b.buf, b.len);
    PyBuffer_Release(&b);
    return PyLong_FromUnsignedLong(r);
}

static PyObject *py_crc32c_table(PyObject *self, PyObject *args) {
    Py_buffer b;
    unsigned long crc = 0;
    if (!PyArg_ParseTuple(args, "y*|k:crc32c_table", &b, &crc)) return NULL;
    uint32_t r = crc_table_update((uint32_t)crc, (const unsigned char *)b.buf, b.len);
    PyBuffer_Release(&b);
    return PyLong_FromUnsignedLong(r);
}

static PyObject *py_crc_kind(PyObject *self, PyObject *unused) {
    return PyUnicode_FromString(crc_hw ? "sse4.2" : "table");
}

/* ------------------------------------------------------------------ big-endian reads */

static inline int64_t be64(const unsigned char *p) {
    uint64_t v = 0;
    for (int k = 0; k < 8; k++) v = (v << 8) | p[k];
    return (int64_t)v;
}
static inline int32_t be32(const unsigned char *p) {
    return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]);
}
static inline uint32_t ube32(const unsigned char *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
static inline int16_t be16(const unsigned char *p) { return (int16_t)(((uint16_t)p[0] << 8) | p[1]); }

/* ------------------------------------------------------------------ batch layout */

/* A v2 batch's header, each field's offset derived from the one before it as Kafka's DefaultRecordBatch
 * does (``LENGTH_OFFSET = BASE_OFFSET_OFFSET + BASE_OFFSET_LENGTH``, ...); exported to Python, which
 * checks them against kseg.format.v2 at import (kseg/engine.py, ``check``). */
#define BASE_OFFSET_OFFSET 0
#define BASE_OFFSET_LENGTH 8
#define LENGTH_OFFSET (BASE_OFFSET_OFFSET + BASE_OFFSET_LENGTH)
#define LENGTH_LENGTH 4
#define LOG_OVERHEAD (LENGTH_OFFSET + LENGTH_LENGTH) /* Records.LOG_OVERHEAD: offset and length */
#define PARTITION_LEADER_EPOCH_OFFSET LOG_OVERHEAD
#define PARTITION_LEADER_EPOCH_LENGTH 4
#define MAGIC_OFFSET (PARTITION_LEADER_EPOCH_OFFSET + PARTITION_LEADER_EPOCH_LENGTH)
#define MAGIC_LENGTH 1
#define HEADER_SIZE_UP_TO_MAGIC (MAGIC_OFFSET + MAGIC_LENGTH) /* Records.HEADER_SIZE_UP_TO_MAGIC */
#define CRC_OFFSET (MAGIC_OFFSET + MAGIC_LENGTH)
#define CRC_LENGTH 4
#define ATTRIBUTES_OFFSET (CRC_OFFSET + CRC_LENGTH)
#define ATTRIBUTE_LENGTH 2
#define LAST_OFFSET_DELTA_OFFSET (ATTRIBUTES_OFFSET + ATTRIBUTE_LENGTH)
#define LAST_OFFSET_DELTA_LENGTH 4
#define BASE_TIMESTAMP_OFFSET (LAST_OFFSET_DELTA_OFFSET + LAST_OFFSET_DELTA_LENGTH)
#define BASE_TIMESTAMP_LENGTH 8
#define MAX_TIMESTAMP_OFFSET (BASE_TIMESTAMP_OFFSET + BASE_TIMESTAMP_LENGTH)
#define MAX_TIMESTAMP_LENGTH 8
#define PRODUCER_ID_OFFSET (MAX_TIMESTAMP_OFFSET + MAX_TIMESTAMP_LENGTH)
#define PRODUCER_ID_LENGTH 8
#define PRODUCER_EPOCH_OFFSET (PRODUCER_ID_OFFSET + PRODUCER_ID_LENGTH)
#define PRODUCER_EPOCH_LENGTH 2
#define BASE_SEQUENCE_OFFSET (PRODUCER_EPOCH_OFFSET + PRODUCER_EPOCH_LENGTH)
#define BASE_SEQUENCE_LENGTH 4
#define RECORDS_COUNT_OFFSET (BASE_SEQUENCE_OFFSET + BASE_SEQUENCE_LENGTH)
#define RECORDS_COUNT_LENGTH 4
#define RECORD_BATCH_OVERHEAD (RECORDS_COUNT_OFFSET + RECORDS_COUNT_LENGTH) /* DefaultRecordBatch's 61 */
/* LegacyRecord.RECORD_OVERHEAD_V0 (crc, magic, attributes, key and value lengths): the least batch length
 * FileLogInputStream.nextBatch accepts. */
#define RECORD_OVERHEAD_V0 14
/* The header tuple scan hands out, field by field in the order above: kseg.format.v2.HEADER's fields
 * (q i i b I h i q q q h i i) as Py_BuildValue codes. */
#define HEADER_FORMAT "(LiibkhiLLLhii)"
/* Each field's index in that tuple (kseg.format.v2.BASE_OFFSET ... COUNT), for the formatters reading it. */
#define H_BASE_OFFSET 0
#define H_LENGTH (H_BASE_OFFSET + 1)
#define H_LEADER_EPOCH (H_LENGTH + 1)
#define H_MAGIC (H_LEADER_EPOCH + 1)
#define H_CRC (H_MAGIC + 1)
#define H_ATTRIBUTES (H_CRC + 1)
#define H_LAST_OFFSET_DELTA (H_ATTRIBUTES + 1)
#define H_BASE_TIMESTAMP (H_LAST_OFFSET_DELTA + 1)
#define H_MAX_TIMESTAMP (H_BASE_TIMESTAMP + 1)
#define H_PRODUCER_ID (H_MAX_TIMESTAMP + 1)
#define H_PRODUCER_EPOCH (H_PRODUCER_ID + 1)
#define H_BASE_SEQUENCE (H_PRODUCER_EPOCH + 1)
#define H_COUNT (H_BASE_SEQUENCE + 1)
#define H_FIELDS (H_COUNT + 1)
/* DefaultRecordBatch.DELETE_HORIZON_FLAG_MASK: the base timestamp is the delete horizon. */
#define DELETE_HORIZON_FLAG 0x40
/* RecordBatch.NO_SEQUENCE, and Integer.MAX_VALUE, past which DefaultRecordBatch.incrementSequence wraps. */
#define NO_SEQUENCE (-1)
#define INT32_MAX_VALUE 0x7FFFFFFFLL
/* ByteUtils.readVarint / readVarlong: the most bytes of a varint (an int32) and a varlong (an int64). */
#define VARINT_MAX_BYTES 5
#define VARLONG_MAX_BYTES 10

/* ------------------------------------------------------------------ shallow scan */

/* What frame_v2 found at a position of the window. */
enum { FRAME_OK, FRAME_END, FRAME_PYTHON };

/* The v2 batch at file position ``pos`` of the window ``buf`` (file position ``ws``, ``wl`` bytes), framed by
 * FileRecords.frame_at's rules: FRAME_OK with the batch at *p and its size in *total; FRAME_END when it runs
 * past ``end`` (iteration ends there); FRAME_PYTHON for any other batch (outside the window, a length below
 * 14, magic 0/1, smaller than a v2 header), left to the Python path, which raises frame_at's error. */
static int frame_v2(const unsigned char *buf, long long ws, long long wl, long long pos, long long end,
                    const unsigned char **p, long long *total) {
    long long i = pos - ws;
    if (i < 0 || i + RECORD_BATCH_OVERHEAD > wl) return FRAME_PYTHON;
    *p = buf + i;
    int32_t length = be32(*p + LENGTH_OFFSET);
    if (length < RECORD_OVERHEAD_V0) return FRAME_PYTHON;
    *total = LOG_OVERHEAD + (long long)length;
    if (pos > end - *total) return FRAME_END;
    if (i + *total > wl || (int8_t)(*p)[MAGIC_OFFSET] < 2 || *total < RECORD_BATCH_OVERHEAD) return FRAME_PYTHON;
    return FRAME_OK;
}

/* A v2 batch header's fields, in H_* order. */
static void read_header(const unsigned char *p, long long v[H_FIELDS]) {
    const long long h[H_FIELDS] = {be64(p + BASE_OFFSET_OFFSET), be32(p + LENGTH_OFFSET),
                                   be32(p + PARTITION_LEADER_EPOCH_OFFSET), (int8_t)p[MAGIC_OFFSET],
                                   ube32(p + CRC_OFFSET), be16(p + ATTRIBUTES_OFFSET),
                                   be32(p + LAST_OFFSET_DELTA_OFFSET), be64(p + BASE_TIMESTAMP_OFFSET),
                                   be64(p + MAX_TIMESTAMP_OFFSET), be64(p + PRODUCER_ID_OFFSET),
                                   be16(p + PRODUCER_EPOCH_OFFSET), be32(p + BASE_SEQUENCE_OFFSET),
                                   be32(p + RECORDS_COUNT_OFFSET)};
    memcpy(v, h, sizeof h);
}

/* scan(view, ws, wl, pos, end, items, limit) -> (pos, done)
 *
 * FileRecords.scan's fast path: append (position, size, header, valid) to ``items`` for every whole v2
 * batch in the window, until ``len(items) >= limit``.  Returns where it stopped and whether iteration
 * ended there (a batch running past ``end``: frame_at's rule).  Any other batch (outside the window,
 * length below 14, magic 0/1, smaller than a v2 header) is left to the Python path at ``pos``. */
static PyObject *py_scan(PyObject *self, PyObject *args) {
    PyObject *view, *items;
    Py_ssize_t ws, wl, limit;
    long long pos, end;
    if (!PyArg_ParseTuple(args, "OnnLLO!n:scan", &view, &ws, &wl, &pos, &end, &PyList_Type, &items, &limit))
        return NULL;
    Py_buffer b;
    if (PyObject_GetBuffer(view, &b, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *buf = (const unsigned char *)b.buf;
    if (wl > b.len) wl = b.len;
    if (wl < 0) wl = 0;
    int done = 0;
    long long stop = end - HEADER_SIZE_UP_TO_MAGIC;
    while (pos < stop && PyList_GET_SIZE(items) < limit) {
        const unsigned char *p;
        long long total;
        int framed = frame_v2(buf, ws, wl, pos, end, &p, &total);
        if (framed != FRAME_OK) {
            done = framed == FRAME_END;
            break;
        }
        int32_t length = be32(p + LENGTH_OFFSET);
        uint32_t crc = ube32(p + CRC_OFFSET);
        int valid = crc32c_update(0, p + ATTRIBUTES_OFFSET, (Py_ssize_t)(total - ATTRIBUTES_OFFSET)) == crc;
        PyObject *h = Py_BuildValue(HEADER_FORMAT, (long long)be64(p + BASE_OFFSET_OFFSET), (int)length,
                                    (int)be32(p + PARTITION_LEADER_EPOCH_OFFSET), (int)(int8_t)p[MAGIC_OFFSET],
                                    (unsigned long)crc, (int)be16(p + ATTRIBUTES_OFFSET),
                                    (int)be32(p + LAST_OFFSET_DELTA_OFFSET), (long long)be64(p + BASE_TIMESTAMP_OFFSET),
                                    (long long)be64(p + MAX_TIMESTAMP_OFFSET), (long long)be64(p + PRODUCER_ID_OFFSET),
                                    (int)be16(p + PRODUCER_EPOCH_OFFSET), (int)be32(p + BASE_SEQUENCE_OFFSET),
                                    (int)be32(p + RECORDS_COUNT_OFFSET));
        if (h == NULL) goto fail;
        PyObject *item = Py_BuildValue("(LLNO)", pos, total, h, valid ? Py_True : Py_False);
        if (item == NULL) goto fail;
        int r = PyList_Append(items, item);
        Py_DECREF(item);
        if (r < 0) goto fail;
        pos += total;
    }
    PyBuffer_Release(&b);
    return Py_BuildValue("(LO)", pos, done ? Py_True : Py_False);
fail:
    PyBuffer_Release(&b);
    return NULL;
}

/* ------------------------------------------------------------------ record decoding */

/* Zig-zag varint (max_bytes 5, mask 32 bits) or varlong (10, 64 bits) at *pos, reading below ``lim``.
 * Returns 0 and sets *out, or -1: too long or running past ``lim`` (the caller bails to Python). */
static inline int read_zigzag(const unsigned char *buf, Py_ssize_t *pos, Py_ssize_t lim, int max_bytes, int wide,
                              int64_t *out) {
    Py_ssize_t p = *pos;
    uint64_t raw = 0;
    int shift = 0;
    for (int k = 0; k < max_bytes; k++) {
        if (p >= lim) return -1;
        unsigned char c = buf[p++];
        raw |= (uint64_t)(c & 0x7F) << shift;
        if (c < 0x80) {
            *pos = p;
            if (wide) {
                *out = (int64_t)((raw >> 1) ^ (~(raw & 1) + 1));
            } else {
                uint32_t r = (uint32_t)raw;
                *out = (int32_t)((r >> 1) ^ (~(r & 1) + 1));
            }
            return 0;
        }
        shift += 7;
    }
    return -1;
}

/* Where one well-formed record's fields lie (DefaultRecord.readFrom): filled by read_record. */
typedef struct {
    int64_t ts_delta, offset_delta, key_size, value_size, header_count;
    Py_ssize_t key_at, value_at, headers_at, next; /* next: the record's end, where the next one starts */
} RecordAt;

/* The record at ``pos`` below ``end``: 0 and its fields, or -1 for anything the Python rule must judge
 * (a varint too long, a length past the record or the buffer, headers that do not add up to its size).
 * The one reading of a record's layout: decode_records and dump_window both call it. */
static int read_record(const unsigned char *buf, Py_ssize_t pos, Py_ssize_t end, RecordAt *r) {
    Py_ssize_t p = pos;
    int64_t size;
    if (p < 0 || p >= end) return -1;
    if (read_zigzag(buf, &p, end, VARINT_MAX_BYTES, 0, &size) < 0) return -1;
    if (size < 0 || size > end - p) return -1;
    Py_ssize_t body_end = p + (Py_ssize_t)size;
    p += 1; /* attributes */
    if (read_zigzag(buf, &p, body_end, VARLONG_MAX_BYTES, 1, &r->ts_delta) < 0) return -1;
    if (read_zigzag(buf, &p, body_end, VARINT_MAX_BYTES, 0, &r->offset_delta) < 0) return -1;
    if (read_zigzag(buf, &p, body_end, VARINT_MAX_BYTES, 0, &r->key_size) < 0) return -1;
    r->key_at = p;
    if (r->key_size >= 0) {
        if (r->key_size > body_end - p) return -1;
        p += (Py_ssize_t)r->key_size;
    }
    if (read_zigzag(buf, &p, body_end, VARINT_MAX_BYTES, 0, &r->value_size) < 0) return -1;
    r->value_at = p;
    if (r->value_size >= 0) {
        if (r->value_size > body_end - p) return -1;
        p += (Py_ssize_t)r->value_size;
    }
    if (read_zigzag(buf, &p, body_end, VARINT_MAX_BYTES, 0, &r->header_count) < 0) return -1;
    if (r->header_count < 0 || r->header_count > body_end - p) return -1;
    r->headers_at = p;
    for (int64_t k = 0; k < r->header_count; k++) {
        int64_t hk, hv;
        if (read_zigzag(buf, &p, body_end, VARINT_MAX_BYTES, 0, &hk) < 0 || hk < 0 || hk > body_end - p) return -1;
        p += (Py_ssize_t)hk;
        if (read_zigzag(buf, &p, body_end, VARINT_MAX_BYTES, 0, &hv) < 0) return -1;
        if (hv >= 0) {
            if (hv > body_end - p) return -1;
            p += (Py_ssize_t)hv;
        }
    }
    if (p != body_end) return -1;
    r->next = body_end;
    return 0;
}

static PyObject *slice_of(PyObject *mv, Py_ssize_t a, Py_ssize_t n) {
    return PySequence_GetSlice(mv, a, a + n);
}

/* What a record's key and value are (v2.SLICES, v2.SIZES, v2.SPANS): slices of the buffer, None for null;
 * their sizes, -1 for null; or spans ``position << 32 | size`` in the buffer, None for null. */
#define FORM_SLICES 0
#define FORM_SIZES 1
#define FORM_SPANS 2

/* decode_records(buf, pos, end, count, read, max_records, base_offset, base_timestamp, base_sequence,
 *                log_append_time, form=FORM_SLICES) -> (records, pos, read, complete, steady)
 *
 * v2_records.decode_records for well-formed records.  ``complete`` is False when decoding stopped at a record
 * the engine does not accept (``pos`` its start, ``read`` the records decoded before it): the caller
 * continues there with the Python rule, which raises the error, if any, at its byte position.
 * ``steady`` is True when every record decoded here has the offset of the one before it plus one. */
static PyObject *py_decode_records(PyObject *self, PyObject *args) {
    PyObject *bufobj, *lat;
    Py_ssize_t pos, end, count, read, max_records;
    long long base_offset, base_timestamp, base_sequence;
    int form = FORM_SLICES;
    if (!PyArg_ParseTuple(args, "OnnnnnLLLO|i:decode_records", &bufobj, &pos, &end, &count, &read, &max_records,
                          &base_offset, &base_timestamp, &base_sequence, &lat, &form))
        return NULL;
    if (form < FORM_SLICES || form > FORM_SPANS) {
        PyErr_SetString(PyExc_ValueError, "decode_records: form must be 0 (slices), 1 (sizes) or 2 (spans)");
        return NULL;
    }
    PyObject *mv;
    if (PyMemoryView_Check(bufobj)) {
        mv = bufobj;
        Py_INCREF(mv);
    } else {
        mv = PyMemoryView_FromObject(bufobj);
        if (mv == NULL) return NULL;
    }
    Py_buffer b;
    if (PyObject_GetBuffer(mv, &b, PyBUF_SIMPLE) < 0) {
        Py_DECREF(mv);
        return NULL;
    }
    const unsigned char *buf = (const unsigned char *)b.buf;
    Py_ssize_t len = b.len;
    int clamped = end > len;
    if (clamped) end = len; /* reads never pass the buffer; the Python rule judges the rest */
    PyObject *records = PyList_New(0);
    if (records == NULL) goto fail;
    int log_append = lat != Py_None;
    int64_t lat_value = 0;
    if (log_append) {
        lat_value = PyLong_AsLongLong(lat);
        if (lat_value == -1 && PyErr_Occurred()) goto fail;
    }
    int complete = 1;
    /* steady: each record's offset is the one before it plus one (Kafka's continuity rule inside the call) */
    int steady = 1;
    long long prev_offset = 0;
    Py_ssize_t decoded = 0;
    /* a span's position must fit in 32 bits: past 4 GiB (a huge decompressed batch) the Python rule */
    if (count < 0 || (form == FORM_SPANS && end > (Py_ssize_t)0xFFFFFFFF)) {
        complete = 0;
    } else {
        Py_ssize_t last = count < read + max_records ? count : read + max_records;
        while (read < last) {
            Py_ssize_t start = pos, p = pos;
            RecordAt ra;
            if (read_record(buf, p, end, &ra) < 0) goto bail;
            p = ra.next;
            int64_t ts_delta = ra.ts_delta, offset_delta = ra.offset_delta, key_size = ra.key_size,
                    value_size = ra.value_size, header_count = ra.header_count;
            Py_ssize_t key_at = ra.key_at, value_at = ra.value_at, headers_at = ra.headers_at, body_end = ra.next;
            if (read + 1 == count && (p != end || clamped)) goto bail; /* the rule: "records still remaining" */
            long long offset, timestamp, sequence;
            if (add_overflow(base_offset, (long long)offset_delta, &offset)) goto bail;
            if (log_append) {
                timestamp = lat_value;
            } else if (add_overflow(base_timestamp, (long long)ts_delta, &timestamp)) {
                goto bail;
            }
            if (base_sequence >= 0) {
                sequence = base_sequence + offset_delta;
                if (sequence > INT32_MAX_VALUE) sequence -= INT32_MAX_VALUE + 1;
            } else {
                sequence = NO_SEQUENCE;
            }
            PyObject *key, *value, *headers;
            if (form == FORM_SIZES) {
                key = PyLong_FromLongLong(key_size >= 0 ? key_size : -1);
                value = PyLong_FromLongLong(value_size >= 0 ? value_size : -1);
            } else if (form == FORM_SPANS) {
                /* below ``end`` <= 0xFFFFFFFF: position and size each fit in 32 bits */
                if (key_size >= 0) {
                    key = PyLong_FromUnsignedLongLong(((unsigned long long)key_at << 32) | (unsigned long long)key_size);
                } else {
                    key = Py_None;
                    Py_INCREF(key);
                }
                if (value_size >= 0) {
                    value = PyLong_FromUnsignedLongLong(((unsigned long long)value_at << 32) |
                                                        (unsigned long long)value_size);
                } else {
                    value = Py_None;
                    Py_INCREF(value);
                }
            } else {
                if (key_size >= 0) {
                    key = slice_of(mv, key_at, (Py_ssize_t)key_size);
                } else {
                    key = Py_None;
                    Py_INCREF(key);
                }
                if (value_size >= 0) {
                    value = slice_of(mv, value_at, (Py_ssize_t)value_size);
                } else {
                    value = Py_None;
                    Py_INCREF(value);
                }
            }
            headers = PyTuple_New((Py_ssize_t)header_count);
            if (headers != NULL) {
                Py_ssize_t q = headers_at;
                for (int64_t k = 0; k < header_count; k++) {
                    int64_t hk = 0, hv = -1;
                    read_zigzag(buf, &q, body_end, VARINT_MAX_BYTES, 0, &hk);
                    PyObject *hkey = PyBytes_FromStringAndSize((const char *)buf + q, (Py_ssize_t)hk);
                    q += (Py_ssize_t)hk;
                    read_zigzag(buf, &q, body_end, VARINT_MAX_BYTES, 0, &hv);
                    PyObject *hval;
                    if (hv >= 0) {
                        hval = PyBytes_FromStringAndSize((const char *)buf + q, (Py_ssize_t)hv);
                        q += (Py_ssize_t)hv;
                    } else {
                        hval = Py_None;
                        Py_INCREF(hval);
                    }
                    PyObject *pair = (hkey && hval) ? PyTuple_Pack(2, hkey, hval) : NULL;
                    Py_XDECREF(hkey);
                    Py_XDECREF(hval);
                    if (pair == NULL) {
                        Py_CLEAR(headers);
                        break;
                    }
                    PyTuple_SET_ITEM(headers, (Py_ssize_t)k, pair);
                }
            }
            if (key == NULL || value == NULL || headers == NULL) {
                Py_XDECREF(key);
                Py_XDECREF(value);
                Py_XDECREF(headers);
                goto fail;
            }
            PyObject *rec = PyTuple_New(6);
            if (rec == NULL) {
                Py_DECREF(key);
                Py_DECREF(value);
                Py_DECREF(headers);
                goto fail;
            }
            PyObject *o = PyLong_FromLongLong(offset);
            PyObject *t;
            if (log_append) {
                t = lat;
                Py_INCREF(t);
            } else {
                t = PyLong_FromLongLong(timestamp);
            }
            PyObject *s = PyLong_FromLongLong(sequence);
            PyTuple_SET_ITEM(rec, 0, o);
            PyTuple_SET_ITEM(rec, 1, t);
            PyTuple_SET_ITEM(rec, 2, s);
            PyTuple_SET_ITEM(rec, 3, key);
            PyTuple_SET_ITEM(rec, 4, value);
            PyTuple_SET_ITEM(rec, 5, headers);
            if (o == NULL || t == NULL || s == NULL || PyList_Append(records, rec) < 0) {
                Py_DECREF(rec);
                goto fail;
            }
            Py_DECREF(rec);
            if (decoded++ && (prev_offset == LLONG_MAX || offset != prev_offset + 1)) steady = 0;
            prev_offset = offset;
            pos = p;
            read++;
            continue;
        bail:
            pos = start;
            complete = 0;
            break;
        }
    }
    PyBuffer_Release(&b);
    Py_DECREF(mv);
    return Py_BuildValue("(NnnOO)", records, pos, read, complete ? Py_True : Py_False, steady ? Py_True : Py_False);
fail:
    PyBuffer_Release(&b);
    Py_DECREF(mv);
    Py_XDECREF(records);
    return NULL;
}

/* ------------------------------------------------------------------ record lines */

typedef struct {
    char *p;
    Py_ssize_t n, cap;
} Out;

/* Room for ``more`` bytes; callers reserve a line's worst case first (every number 20 characters). */
static int out_reserve(Out *o, Py_ssize_t more) {
    if (o->n + more <= o->cap) return 0;
    Py_ssize_t cap = o->cap ? o->cap : 1 << 16;
    while (cap < o->n + more) cap *= 2;
    char *q = PyMem_Realloc(o->p, cap);
    if (q == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    o->p = q;
    o->cap = cap;
    return 0;
}

#if defined(__GNUC__) || defined(__clang__)
#define HOT_INLINE static inline __attribute__((always_inline))
#else
#define HOT_INLINE static __forceinline
#endif

/* Inlined everywhere: a literal's copy becomes a few moves (a call to memcpy a field was measured slower). */
HOT_INLINE void out_raw(Out *o, const char *s, Py_ssize_t n) {
    memcpy(o->p + o->n, s, n);
    o->n += n;
}

static const char digit_pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                      "8081828384858687888990919293949596979899";

HOT_INLINE int decimal_digits(unsigned long long u) {
    int n = 1;
    for (;;) {
        if (u < 10) return n;
        if (u < 100) return n + 1;
        if (u < 1000) return n + 2;
        if (u < 10000) return n + 3;
        u /= 10000;
        n += 4;
    }
}

/* A number in decimal, written in place from its last digit, two digits a step (a division a digit
 * was an eighth of --print-data-log's time). */
HOT_INLINE void out_ll(Out *o, long long v) {
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    char *p = o->p + o->n;
    if (v < 0) *p++ = '-';
    char *end = p + decimal_digits(u), *q = end;
    while (u >= 100) {
        unsigned r = (unsigned)(u % 100) * 2;
        u /= 100;
        q -= 2;
        q[0] = digit_pairs[r];
        q[1] = digit_pairs[r + 1];
    }
    if (u >= 10) {
        q -= 2;
        q[0] = digit_pairs[2 * u];
        q[1] = digit_pairs[2 * u + 1];
    } else {
        *--q = (char)('0' + u);
    }
    o->n = end - o->p;
}

#define LIT(o, s) out_raw((o), (s), (Py_ssize_t)(sizeof(s) - 1))

/* Append what the buffer holds to ``pieces`` as one bytes object (UTF-8: the lines as written). */
static int out_flush(Out *o, PyObject *pieces) {
    if (o->n == 0) return 0;
    PyObject *data = PyBytes_FromStringAndSize(o->p, o->n);
    if (data == NULL) return -1;
    int r = PyList_Append(pieces, data);
    Py_DECREF(data);
    o->n = 0;
    return r;
}

static int as_ll(PyObject *v, long long *out) {
    int overflow = 0;
    if (!PyLong_CheckExact(v)) return -1;
    *out = PyLong_AsLongLongAndOverflow(v, &overflow);
    if (overflow || (*out == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return -1;
    }
    return 0;
}

/* Python's strict UTF-8 (what str(b, "utf-8") accepts): no overlongs, no surrogates, nothing past U+10FFFF. */
static int valid_utf8(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t i = 0;
    while (i < n) {
        /* eight ASCII bytes at a time */
        while (i + 8 <= n) {
            uint64_t v;
            memcpy(&v, s + i, 8);
            if (v & 0x8080808080808080ULL) break;
            i += 8;
        }
        if (i >= n) break;
        unsigned char c = s[i];
        if (c < 0x80) {
            i++;
        } else if (c >= 0xC2 && c <= 0xDF) {
            if (i + 1 >= n || (s[i + 1] & 0xC0) != 0x80) return 0;
            i += 2;
        } else if (c >= 0xE0 && c <= 0xEF) {
            if (i + 2 >= n) return 0;
            unsigned char c1 = s[i + 1];
            if ((c1 & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80) return 0;
            if (c == 0xE0 && c1 < 0xA0) return 0;
            if (c == 0xED && c1 >= 0xA0) return 0;
            i += 3;
        } else if (c >= 0xF0 && c <= 0xF4) {
            if (i + 3 >= n) return 0;
            unsigned char c1 = s[i + 1];
            if ((c1 & 0xC0) != 0x80 || (s[i + 2] & 0xC0) != 0x80 || (s[i + 3] & 0xC0) != 0x80) return 0;
            if (c == 0xF0 && c1 < 0x90) return 0;
            if (c == 0xF4 && c1 >= 0x90) return 0;
            i += 4;
        } else {
            return 0;
        }
    }
    return 1;
}

/* Append fallback(rec), a str line, encoded as the writer encodes text (UTF-8, "replace"). */
static int slow_line(Out *o, PyObject *fallback, PyObject *rec) {
    PyObject *line = PyObject_CallOneArg(fallback, rec);
    if (line == NULL) return -1;
    if (!PyUnicode_Check(line)) {
        Py_DECREF(line);
        PyErr_SetString(PyExc_TypeError, "record_lines: the fallback must return str");
        return -1;
    }
    PyObject *data = PyUnicode_AsEncodedString(line, "utf-8", "replace");
    Py_DECREF(line);
    if (data == NULL) return -1;
    int r = out_reserve(o, PyBytes_GET_SIZE(data));
    if (r == 0) out_raw(o, PyBytes_AS_STRING(data), PyBytes_GET_SIZE(data));
    Py_DECREF(data);
    return r;
}

/* A span (``position << 32 | size``) inside ``buf[:len]``: 0 and where it lies, or -1 (the fallback's case). */
static inline int span_in(PyObject *v, Py_ssize_t len, Py_ssize_t *at, Py_ssize_t *n) {
    long long s;
    if (as_ll(v, &s) < 0 || s < 0) return -1;
    unsigned long long a = (unsigned long long)s >> 32, m = (unsigned long long)s & 0xFFFFFFFFULL;
    if (a > (unsigned long long)len || m > (unsigned long long)len - a) return -1;
    *at = (Py_ssize_t)a;
    *n = (Py_ssize_t)m;
    return 0;
}

/* The part of a record line up to and including "headerKeys: [": Kafka's
 * "| offset: O <tsType>: T keySize: K valueSize: V sequence: S headerKeys: [".  Space must be reserved. */
HOT_INLINE void line_fields(Out *o, long long off, const char *ts_type, Py_ssize_t ts_len, long long ts, long long ks,
                      long long vs, long long seq) {
    LIT(o, "| offset: ");
    out_ll(o, off);
    LIT(o, " ");
    out_raw(o, ts_type, ts_len);
    LIT(o, ": ");
    out_ll(o, ts);
    LIT(o, " keySize: ");
    out_ll(o, ks);
    LIT(o, " valueSize: ");
    out_ll(o, vs);
    LIT(o, " sequence: ");
    out_ll(o, seq);
    LIT(o, " headerKeys: [");
}

/* line_fields of a record without headers, to "headerKeys: []". */
HOT_INLINE void line_head(Out *o, long long off, const char *ts_type, Py_ssize_t ts_len, long long ts, long long ks,
                          long long vs, long long seq) {
    line_fields(o, off, ts_type, ts_len, ts, ks, vs, seq);
    LIT(o, "]");
}

/* The line of a record without headers, key and value printed (valid UTF-8, copied as they are). */
static int text_line(Out *o, long long off, long long ts, long long seq, const char *ts_type, Py_ssize_t ts_len,
                     const char *k, Py_ssize_t kn, const char *v, Py_ssize_t vn) {
    if (out_reserve(o, 256 + ts_len + kn + vn) < 0) return -1;
    line_head(o, off, ts_type, ts_len, ts, (long long)kn, (long long)vn, seq);
    LIT(o, " key: ");
    out_raw(o, k, kn);
    LIT(o, " payload: ");
    out_raw(o, v, vn);
    LIT(o, "\n");
    return 0;
}

/* One record's line into ``o``: 0, or -1 with an exception (the fallback's, or no memory).
 * ``buf``/``buf_len``: the buffer spans refer to (FORM_SPANS only). */
static int record_line_c(Out *o, PyObject *rec, const char *ts_type, Py_ssize_t ts_len, PyObject *fallback, int form,
                         const char *buf, Py_ssize_t buf_len) {
    long long off, ts, seq, ks = 0, vs = 0;
    if (!PyTuple_CheckExact(rec) || PyTuple_GET_SIZE(rec) != 6) goto slow;
    PyObject *hs = PyTuple_GET_ITEM(rec, 5);
    if (!PyTuple_CheckExact(hs) || PyTuple_GET_SIZE(hs) != 0) goto slow;
    if (as_ll(PyTuple_GET_ITEM(rec, 0), &off) < 0 || as_ll(PyTuple_GET_ITEM(rec, 1), &ts) < 0 ||
        as_ll(PyTuple_GET_ITEM(rec, 2), &seq) < 0)
        goto slow;
    PyObject *k = PyTuple_GET_ITEM(rec, 3), *v = PyTuple_GET_ITEM(rec, 4);
    if (form == FORM_SIZES) {
        if (as_ll(k, &ks) < 0 || as_ll(v, &vs) < 0) goto slow;
        if (out_reserve(o, 256 + ts_len) < 0) return -1;
        line_head(o, off, ts_type, ts_len, ts, ks, vs, seq);
        LIT(o, "\n");
        return 0;
    }
    if (k == Py_None || v == Py_None) goto slow;
    if (form == FORM_SPANS) {
        Py_ssize_t ka, kn, va, vn;
        if (span_in(k, buf_len, &ka, &kn) < 0 || span_in(v, buf_len, &va, &vn) < 0) goto slow;
        if (!valid_utf8((const unsigned char *)buf + ka, kn) || !valid_utf8((const unsigned char *)buf + va, vn))
            goto slow;
        return text_line(o, off, ts, seq, ts_type, ts_len, buf + ka, kn, buf + va, vn);
    }
    Py_buffer kb, vb;
    if (PyObject_GetBuffer(k, &kb, PyBUF_SIMPLE) < 0) {
        PyErr_Clear();
        goto slow;
    }
    if (PyObject_GetBuffer(v, &vb, PyBUF_SIMPLE) < 0) {
        PyErr_Clear();
        PyBuffer_Release(&kb);
        goto slow;
    }
    int r = 1;
    if (valid_utf8(kb.buf, kb.len) && valid_utf8(vb.buf, vb.len))
        r = text_line(o, off, ts, seq, ts_type, ts_len, kb.buf, kb.len, vb.buf, vb.len);
    PyBuffer_Release(&kb);
    PyBuffer_Release(&vb);
    if (r <= 0) return r;
slow:
    return slow_line(o, fallback, rec);
}

/* record_lines(records, ts_type, fallback, form, buf, pieces) -> None: the lines appended to ``pieces``
 * (bytes, UTF-8)
 *
 * TextSink's record lines of v2 records.  With FORM_SIZES (--deep-iteration) key and value are sizes;
 * with FORM_SLICES buffers and with FORM_SPANS spans in ``buf`` (None otherwise), printed as Kafka's
 * string decoders print them (--print-data-log).  A record the fast path does not cover (headers, a null
 * key or value when printed, UTF-8 that is not valid, a number past int64, a span outside ``buf``) gets
 * ``fallback(record)``: the Python formatter's line (str).  Should it raise, ``pieces`` holds every line
 * before that record (the caller writes them, as the Python formatter does). */
static PyObject *py_record_lines(PyObject *self, PyObject *args) {
    PyObject *records, *fallback, *bufobj, *pieces;
    const char *ts_type;
    Py_ssize_t ts_len;
    int form;
    if (!PyArg_ParseTuple(args, "O!s#OiOO!:record_lines", &PyList_Type, &records, &ts_type, &ts_len, &fallback,
                          &form, &bufobj, &PyList_Type, &pieces))
        return NULL;
    if (form < FORM_SLICES || form > FORM_SPANS) {
        PyErr_SetString(PyExc_ValueError, "record_lines: form must be 0 (slices), 1 (sizes) or 2 (spans)");
        return NULL;
    }
    Py_buffer b = {0};
    int have_buf = 0;
    if (form == FORM_SPANS) {
        /* held until the end: while exported, the buffer can be neither resized nor released */
        if (PyObject_GetBuffer(bufobj, &b, PyBUF_SIMPLE) < 0) return NULL;
        have_buf = 1;
    }
    Out o = {NULL, 0, 0};
    /* the size is read each time round and each record held: a fallback (Python code) could change the list */
    for (Py_ssize_t r = 0; r < PyList_GET_SIZE(records); r++) {
        PyObject *rec = PyList_GET_ITEM(records, r);
        Py_INCREF(rec);
        int bad = record_line_c(&o, rec, ts_type, ts_len, fallback, form, (const char *)b.buf, b.len);
        Py_DECREF(rec);
        if (bad) goto fail;
    }
    if (out_flush(&o, pieces) < 0) goto fail;
    PyMem_Free(o.p);
    if (have_buf) PyBuffer_Release(&b);
    Py_RETURN_NONE;
fail: {
    /* the lines before the failing record are the caller's to write */
    PyObject *et, *ev, *tb;
    PyErr_Fetch(&et, &ev, &tb);
    if (out_flush(&o, pieces) < 0) PyErr_Clear();
    PyErr_Restore(et, ev, tb);
    PyMem_Free(o.p);
    if (have_buf) PyBuffer_Release(&b);
    return NULL;
}
}

/* ------------------------------------------------------------------ batch lines */

static inline int str_part(PyObject *parts, Py_ssize_t k, const char **s, Py_ssize_t *n) {
    PyObject *v = PyTuple_GET_ITEM(parts, k);
    if (!PyUnicode_Check(v)) {
        PyErr_SetString(PyExc_TypeError, "batch line parts must be str");
        return -1;
    }
    *s = PyUnicode_AsUTF8AndSize(v, n);
    return *s == NULL ? -1 : 0;
}

/* One v2 batch line (DumpLogSegments.printBatchLevel): the header's values ``v`` (H_* order), its last
 * offset, position, size and CRC verdict; ``parts`` the 3 str of TextSink._batch_line_parts. */
static int batch_line(Out *o, const long long *v, long long last_offset, long long position, long long size,
                      int valid, PyObject *parts) {
    const char *p0, *p1, *p2;
    Py_ssize_t n0, n1, n2;
    if (str_part(parts, 0, &p0, &n0) < 0 || str_part(parts, 1, &p1, &n1) < 0 || str_part(parts, 2, &p2, &n2) < 0)
        return -1;
    if (out_reserve(o, 512 + n0 + n1 + n2) < 0) return -1;
    LIT(o, "baseOffset: ");
    out_ll(o, v[H_BASE_OFFSET]);
    LIT(o, " lastOffset: ");
    out_ll(o, last_offset);
    LIT(o, " count: ");
    out_ll(o, v[H_COUNT]);
    long long base_seq = v[H_BASE_SEQUENCE];
    if (base_seq == NO_SEQUENCE) {
        LIT(o, " baseSequence: -1 lastSequence: -1 ");
    } else {
        long long delta = v[H_LAST_OFFSET_DELTA], last_seq;
        /* DefaultRecordBatch.incrementSequence */
        if (base_seq > INT32_MAX_VALUE - delta)
            last_seq = delta - (INT32_MAX_VALUE - base_seq) - 1;
        else
            last_seq = base_seq + delta;
        LIT(o, " baseSequence: ");
        out_ll(o, base_seq);
        LIT(o, " lastSequence: ");
        out_ll(o, last_seq);
        LIT(o, " ");
    }
    out_raw(o, p0, n0);
    LIT(o, "position: ");
    out_ll(o, position);
    LIT(o, " ");
    out_raw(o, p1, n1);
    out_ll(o, v[H_MAX_TIMESTAMP]);
    LIT(o, " size: ");
    out_ll(o, size);
    LIT(o, " ");
    out_raw(o, p2, n2);
    out_ll(o, v[H_CRC]);
    if (valid)
        LIT(o, " isvalid: true\n");
    else
        LIT(o, " isvalid: false\n");
    return 0;
}

/* The constant parts of the batch line of header values ``v`` (H_* order): ``*parts`` kept while the
 * producer, epochs and flags (``key``) stay those of the batch before, else ``parts_fn(h)`` (``h`` the header
 * tuple, or NULL: built from ``v``).  0; 1 when parts_fn raised an Exception (cleared: e.g. an unknown codec,
 * which the Python formatter raises after the lines before it); -1 on any other error. */
static int parts_for(PyObject *parts_fn, const long long *v, PyObject *h, long long key[6], int *have_key,
                     PyObject **parts) {
    long long attrs = v[H_ATTRIBUTES];
    long long k6[6] = {v[H_LEADER_EPOCH], v[H_PRODUCER_ID], v[H_PRODUCER_EPOCH], attrs, v[H_MAGIC],
                       (attrs & DELETE_HORIZON_FLAG) ? v[H_BASE_TIMESTAMP] : 0};
    if (*have_key && memcmp(k6, key, 6 * sizeof(long long)) == 0) return 0;
    Py_CLEAR(*parts);
    *have_key = 0;
    PyObject *built = NULL;
    if (h == NULL) {
        h = built = Py_BuildValue(HEADER_FORMAT, v[H_BASE_OFFSET], (int)v[H_LENGTH], (int)v[H_LEADER_EPOCH],
                                  (int)v[H_MAGIC], (unsigned long)v[H_CRC], (int)v[H_ATTRIBUTES],
                                  (int)v[H_LAST_OFFSET_DELTA], v[H_BASE_TIMESTAMP], v[H_MAX_TIMESTAMP],
                                  v[H_PRODUCER_ID], (int)v[H_PRODUCER_EPOCH], (int)v[H_BASE_SEQUENCE],
                                  (int)v[H_COUNT]);
        if (h == NULL) return -1;
    }
    *parts = PyObject_CallOneArg(parts_fn, h);
    Py_XDECREF(built);
    if (*parts == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_Exception)) return -1;
        PyErr_Clear();
        return 1;
    }
    if (!PyTuple_Check(*parts) || PyTuple_GET_SIZE(*parts) != 3) {
        Py_CLEAR(*parts);
        PyErr_SetString(PyExc_TypeError, "parts_fn must return 3 str");
        return -1;
    }
    memcpy(key, k6, 6 * sizeof(long long));
    *have_key = 1;
    return 0;
}

/* batch_lines(items, start, parts_fn) -> (text, index, slow)
 *
 * TextSink.batch_lines for FileRecords.scan items from ``start``: the v2 batch line, its constant parts
 * from ``parts_fn(header)`` (called when the header's producer, epochs or flags change from the item
 * before).  Stops at ``index``: the end, an item without a header (``slow`` False: the sink's batch()),
 * or one whose numbers pass int64 (``slow`` True: the Python formatter). */
static PyObject *py_batch_lines(PyObject *self, PyObject *args) {
    PyObject *items, *parts_fn;
    Py_ssize_t start;
    if (!PyArg_ParseTuple(args, "O!nO:batch_lines", &PyList_Type, &items, &start, &parts_fn)) return NULL;
    Out o = {NULL, 0, 0};
    PyObject *parts = NULL;
    long long key[6] = {0, 0, 0, 0, 0, 0};
    int have_key = 0, slow = 0;
    Py_ssize_t i = start < 0 ? 0 : start;
    /* everything is read from the item before parts_fn (Python code) runs; the size is read each time round */
    for (; i < PyList_GET_SIZE(items); i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
        if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 4) {
            slow = 1;
            break;
        }
        PyObject *h = PyTuple_GET_ITEM(item, 2);
        if (h == Py_None) break;
        if (!PyTuple_CheckExact(h) || PyTuple_GET_SIZE(h) != H_FIELDS) {
            slow = 1;
            break;
        }
        long long v[H_FIELDS], position, size;
        int bad = as_ll(PyTuple_GET_ITEM(item, 0), &position) < 0 || as_ll(PyTuple_GET_ITEM(item, 1), &size) < 0;
        for (int k = 0; k < H_FIELDS && !bad; k++) bad = as_ll(PyTuple_GET_ITEM(h, k), &v[k]) < 0;
        long long last_offset;
        if (bad || add_overflow(v[H_BASE_OFFSET], v[H_LAST_OFFSET_DELTA], &last_offset)) {
            slow = 1;
            break;
        }
        int valid = PyObject_IsTrue(PyTuple_GET_ITEM(item, 3));
        if (valid < 0) goto fail;
        int got = parts_for(parts_fn, v, h, key, &have_key, &parts);
        if (got < 0) goto fail;
        if (got > 0) {
            slow = 1;
            break;
        }
        if (batch_line(&o, v, last_offset, position, size, valid, parts) < 0) goto fail;
    }
    Py_XDECREF(parts);
    PyObject *text = PyUnicode_DecodeUTF8(o.p ? o.p : "", o.n, "strict");
    PyMem_Free(o.p);
    if (text == NULL) return NULL;
    return Py_BuildValue("(NnO)", text, i, slow ? Py_True : Py_False);
fail:
    Py_XDECREF(parts);
    PyMem_Free(o.p);
    return NULL;
}

/* ------------------------------------------------------------------ a window of the dump */

/* What dump_window writes per batch (Dumper's modes): the batch lines alone (shallow), and with them the
 * record lines of key and value sizes (--deep-iteration) or of key and value printed by Kafka's string
 * decoders (--print-data-log). */
#define WINDOW_SHALLOW 0
#define WINDOW_SIZES 1
#define WINDOW_STRINGS 2
/* Attributes the deep modes leave to the Python path (DefaultRecordBatch's masks): a codec, a control batch;
 * and the one that makes every record's timestamp the batch's max timestamp. */
#define CODEC_MASK 0x07
#define TIMESTAMP_TYPE_FLAG 0x08
#define CONTROL_FLAG 0x20
#define TRANSACTIONAL_FLAG 0x10

/* A v2 record's offset, timestamp and sequence from its batch header ``v`` (DefaultRecord's rules:
 * LogAppendTime takes the batch's max timestamp; the sequence wraps past Integer.MAX_VALUE as
 * DefaultRecordBatch.incrementSequence does).  1 when the offset or time overflows int64 (the Python
 * path's number), else 0. */
static int record_fields(const long long *v, const RecordAt *ra, int log_append, long long *offset,
                         long long *timestamp, long long *sequence) {
    if (add_overflow(v[H_BASE_OFFSET], (long long)ra->offset_delta, offset)) return 1;
    if (log_append)
        *timestamp = v[H_MAX_TIMESTAMP];
    else if (add_overflow(v[H_BASE_TIMESTAMP], (long long)ra->ts_delta, timestamp))
        return 1;
    if (v[H_BASE_SEQUENCE] >= 0) {
        *sequence = v[H_BASE_SEQUENCE] + ra->offset_delta;
        if (*sequence > INT32_MAX_VALUE) *sequence -= INT32_MAX_VALUE + 1;
    } else {
        *sequence = NO_SEQUENCE;
    }
    return 0;
}

/* A v2 batch's records in order (DefaultRecordBatch's iterator over uncompressed records), the one walk
 * dump_window and export_window share: the count bounded by the bytes, each record's layout (read_record),
 * "records still remaining" after the last, and its offset, timestamp and sequence (record_fields). */
typedef struct {
    const unsigned char *p; /* the batch's bytes */
    const long long *v;     /* its header's values (H_* order) */
    Py_ssize_t pos, end;
    long long left; /* records not yet read */
    int log_append;
} Records;

/* 0 and ``it`` at the first record of the batch ``p`` (``total`` bytes, header ``v``; records_open_at: of the
 * records from ``start`` of ``p``, a compressed batch's decompressed bytes); 1 for a count the Python rule
 * judges (negative, or more records than bytes: every record takes a byte at least). */
static int records_open_at(Records *it, const unsigned char *p, Py_ssize_t start, long long total,
                           const long long *v) {
    it->p = p;
    it->v = v;
    it->pos = start;
    it->end = (Py_ssize_t)total;
    it->left = v[H_COUNT];
    it->log_append = (v[H_ATTRIBUTES] & TIMESTAMP_TYPE_FLAG) != 0;
    return it->left < 0 || it->left > it->end - it->pos;
}

static int records_open(Records *it, const unsigned char *p, long long total, const long long *v) {
    return records_open_at(it, p, RECORD_BATCH_OVERHEAD, total, v);
}

/* The next record: 1 with its layout and its offset, timestamp and sequence; 0 after the last; -1 for a
 * record the Python rule must judge (read_record's cases, bytes after the last record, a number past int64). */
static int records_next(Records *it, RecordAt *ra, long long *offset, long long *timestamp, long long *sequence) {
    if (it->left == 0) return 0;
    if (read_record(it->p, it->pos, it->end, ra) < 0) return -1;
    if (--it->left == 0 && ra->next != it->end) return -1; /* "records still remaining" */
    if (record_fields(it->v, ra, it->log_append, offset, timestamp, sequence)) return -1;
    it->pos = ra->next;
    return 1;
}

/* A record's header at ``*q`` (below ``end``, already checked by read_record): its key's and value's place
 * and size (``*vn`` < 0: a null value); ``*q`` moves past it. */
HOT_INLINE void header_at(const unsigned char *p, Py_ssize_t *q, Py_ssize_t end, Py_ssize_t *ka, int64_t *kn,
                          Py_ssize_t *va, int64_t *vn) {
    *kn = 0;
    *vn = -1;
    read_zigzag(p, q, end, VARINT_MAX_BYTES, 0, kn);
    *ka = *q;
    *q += (Py_ssize_t)*kn;
    read_zigzag(p, q, end, VARINT_MAX_BYTES, 0, vn);
    *va = *q;
    if (*vn > 0) *q += (Py_ssize_t)*vn;
}

/* ------------------------------------------------------------------ JSON rows (kseg.jsonlines.dumps) */

/* How many bytes JSON's escaping of the valid UTF-8 ``s`` takes (json's ensure_ascii=False: the quote, the
 * backslash and the C0 controls escaped; kseg.jsonlines: U+0085, U+2028 and U+2029 too), quotes excluded. */
static Py_ssize_t json_len(const unsigned char *s, Py_ssize_t n) {
    Py_ssize_t k = n;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        if (c < 0x20) {
            k += (c == '\b' || c == '\t' || c == '\n' || c == '\f' || c == '\r') ? 1 : 5;
        } else if (c == '"' || c == '\\') {
            k += 1;
        } else if (c == 0xC2 && i + 1 < n && s[i + 1] == 0x85) {
            k += 4; /* 2 bytes -> \u0085 */
        } else if (c == 0xE2 && i + 2 < n && s[i + 1] == 0x80 && (s[i + 2] == 0xA8 || s[i + 2] == 0xA9)) {
            k += 3; /* 3 bytes -> \u2028 */
        }
    }
    return k;
}

static const char hex_digits[] = "0123456789abcdef";

/* The JSON string of the valid UTF-8 ``s``, quoted (space reserved here). */
static int out_json_str(Out *o, const unsigned char *s, Py_ssize_t n) {
    if (out_reserve(o, json_len(s, n) + 2) < 0) return -1;
    char *w = o->p + o->n;
    *w++ = '"';
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = s[i];
        const char *esc = NULL;
        if (c >= 0x20 && c != '"' && c != '\\' && c != 0xC2 && c != 0xE2) {
            *w++ = (char)c;
            continue;
        }
        switch (c) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\b': esc = "\\b"; break;
        case '\t': esc = "\\t"; break;
        case '\n': esc = "\\n"; break;
        case '\f': esc = "\\f"; break;
        case '\r': esc = "\\r"; break;
        default: break;
        }
        if (esc != NULL) {
            *w++ = esc[0];
            *w++ = esc[1];
        } else if (c < 0x20) {
            memcpy(w, "\\u00", 4);
            w[4] = hex_digits[c >> 4];
            w[5] = hex_digits[c & 15];
            w += 6;
        } else if (c == 0xC2 && i + 1 < n && s[i + 1] == 0x85) {
            memcpy(w, "\\u0085", 6);
            w += 6;
            i += 1;
        } else if (c == 0xE2 && i + 2 < n && s[i + 1] == 0x80 && (s[i + 2] == 0xA8 || s[i + 2] == 0xA9)) {
            memcpy(w, s[i + 2] == 0xA8 ? "\\u2028" : "\\u2029", 6);
            w += 6;
            i += 2;
        } else {
            *w++ = (char)c;
        }
    }
    *w++ = '"';
    o->n = w - o->p;
    return 0;
}

/* The quoted base64 (RFC 4648, padded) of ``s``: a header value that is not UTF-8 (values.header_objects). */
static int out_base64(Out *o, const unsigned char *s, Py_ssize_t n) {
    static const char abc[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    if (out_reserve(o, (n + 2) / 3 * 4 + 2) < 0) return -1;
    char *w = o->p + o->n;
    *w++ = '"';
    Py_ssize_t i = 0;
    for (; i + 3 <= n; i += 3) {
        uint32_t t = (uint32_t)s[i] << 16 | (uint32_t)s[i + 1] << 8 | s[i + 2];
        w[0] = abc[t >> 18];
        w[1] = abc[(t >> 12) & 63];
        w[2] = abc[(t >> 6) & 63];
        w[3] = abc[t & 63];
        w += 4;
    }
    if (i < n) {
        uint32_t t = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0);
        w[0] = abc[t >> 18];
        w[1] = abc[(t >> 12) & 63];
        w[2] = i + 1 < n ? abc[(t >> 6) & 63] : '=';
        w[3] = '=';
        w += 4;
    }
    *w++ = '"';
    o->n = w - o->p;
    return 0;
}

/* A JSON row's ``"name":number`` member after the first (space reserved). */
#define JSON_NUM(o, name, x)                                                                                       \
    do {                                                                                                           \
        LIT(o, ",\"" name "\":");                                                                                  \
        out_ll(o, x);                                                                                              \
    } while (0)
#define JSON_BOOL(o, name, x) ((x) ? LIT(o, ",\"" name "\":true") : LIT(o, ",\"" name "\":false"))

/* CompressionType's lower-case names (kseg.format.compression.CODEC_NAMES): an id past them is the Python
 * path's (codec_name raises). */
static const char *const codec_names[] = {"none", "gzip", "snappy", "lz4", "zstd"};
#define CODECS 5

/* The ``"batch"`` row of a v2 batch (kseg.render.jsonl.v2_batch_object): 0, or 1 for a codec id the
 * engine has no name for. */
static int batch_json(Out *o, const long long *v, long long last_offset, long long position, long long size,
                      int valid, int version, const char *ts_name, Py_ssize_t ts_len) {
    long long attrs = v[H_ATTRIBUTES];
    if ((attrs & CODEC_MASK) >= CODECS) return 1;
    const char *codec = codec_names[attrs & CODEC_MASK];
    long long base_seq = v[H_BASE_SEQUENCE], delta = v[H_LAST_OFFSET_DELTA], last_seq = NO_SEQUENCE;
    if (base_seq != NO_SEQUENCE) /* DefaultRecordBatch.incrementSequence */
        last_seq = base_seq > INT32_MAX_VALUE - delta ? delta - (INT32_MAX_VALUE - base_seq) - 1 : base_seq + delta;
    if (out_reserve(o, 1024 + ts_len) < 0) return -1;
    LIT(o, "{\"type\":\"batch\"");
    JSON_NUM(o, "v", version);
    JSON_NUM(o, "position", position);
    JSON_NUM(o, "baseOffset", v[H_BASE_OFFSET]);
    JSON_NUM(o, "lastOffset", last_offset);
    JSON_NUM(o, "count", v[H_COUNT]);
    JSON_NUM(o, "baseSequence", base_seq);
    JSON_NUM(o, "lastSequence", last_seq);
    JSON_NUM(o, "producerId", v[H_PRODUCER_ID]);
    JSON_NUM(o, "producerEpoch", v[H_PRODUCER_EPOCH]);
    JSON_NUM(o, "partitionLeaderEpoch", v[H_LEADER_EPOCH]);
    JSON_BOOL(o, "isTransactional", attrs & TRANSACTIONAL_FLAG);
    JSON_BOOL(o, "isControl", attrs & CONTROL_FLAG);
    if (attrs & DELETE_HORIZON_FLAG)
        JSON_NUM(o, "deleteHorizonMs", v[H_BASE_TIMESTAMP]);
    else
        LIT(o, ",\"deleteHorizonMs\":null");
    LIT(o, ",\"timestampType\":\"");
    out_raw(o, ts_name, ts_len);
    LIT(o, "\"");
    JSON_NUM(o, "maxTimestamp", v[H_MAX_TIMESTAMP]);
    JSON_NUM(o, "size", size);
    JSON_NUM(o, "magic", v[H_MAGIC]);
    LIT(o, ",\"compression\":\"");
    out_raw(o, codec, (Py_ssize_t)strlen(codec));
    LIT(o, "\"");
    JSON_NUM(o, "crc", v[H_CRC]);
    JSON_BOOL(o, "isValid", valid);
    LIT(o, "}\n");
    return 0;
}

/* The ``"record"`` row of a v2 data record (JsonSink.v2_records; ``strings``: key and payload printed by
 * Kafka's string decoders, already checked to be UTF-8).  0, 1 for a header key that is not UTF-8 (Java's
 * replacement: the Python path's), -1 on error. */
static int record_json(Out *o, const unsigned char *p, const RecordAt *ra, long long offset, long long timestamp,
                       long long sequence, int strings, int version, const char *ts_name, Py_ssize_t ts_len) {
    if (out_reserve(o, 256 + ts_len) < 0) return -1;
    LIT(o, "{\"type\":\"record\"");
    JSON_NUM(o, "v", version);
    JSON_NUM(o, "offset", offset);
    LIT(o, ",\"timestampType\":\"");
    out_raw(o, ts_name, ts_len);
    LIT(o, "\"");
    JSON_NUM(o, "timestamp", timestamp);
    JSON_NUM(o, "keySize", ra->key_size >= 0 ? ra->key_size : -1);
    JSON_NUM(o, "valueSize", ra->value_size >= 0 ? ra->value_size : -1);
    JSON_NUM(o, "sequence", sequence);
    LIT(o, ",\"headerKeys\":[");
    Py_ssize_t q = ra->headers_at, ka, va;
    int64_t kn, vn;
    for (int64_t k = 0; k < ra->header_count; k++) {
        header_at(p, &q, ra->next, &ka, &kn, &va, &vn);
        if (!valid_utf8(p + ka, (Py_ssize_t)kn)) return 1;
        if (out_reserve(o, 1) < 0) return -1;
        if (k) LIT(o, ",");
        if (out_json_str(o, p + ka, (Py_ssize_t)kn) < 0) return -1;
    }
    if (out_reserve(o, 16) < 0) return -1;
    LIT(o, "],\"headers\":[");
    q = ra->headers_at;
    for (int64_t k = 0; k < ra->header_count; k++) {
        header_at(p, &q, ra->next, &ka, &kn, &va, &vn);
        if (out_reserve(o, 32) < 0) return -1;
        if (k) LIT(o, ",");
        LIT(o, "{\"key\":");
        if (out_json_str(o, p + ka, (Py_ssize_t)kn) < 0 || out_reserve(o, 32) < 0) return -1;
        LIT(o, ",\"value\":");
        if (vn < 0) {
            LIT(o, "null}");
        } else if (valid_utf8(p + va, (Py_ssize_t)vn)) {
            if (out_json_str(o, p + va, (Py_ssize_t)vn) < 0 || out_reserve(o, 1) < 0) return -1;
            LIT(o, "}");
        } else {
            if (out_base64(o, p + va, (Py_ssize_t)vn) < 0 || out_reserve(o, 32) < 0) return -1;
            LIT(o, ",\"base64\":true}");
        }
    }
    if (out_reserve(o, 32) < 0) return -1;
    LIT(o, "]");
    if (strings) { /* json_fields: each when not null */
        if (ra->key_size >= 0) {
            LIT(o, ",\"key\":");
            if (out_json_str(o, p + ra->key_at, (Py_ssize_t)ra->key_size) < 0 || out_reserve(o, 32) < 0) return -1;
        }
        if (ra->value_size >= 0) {
            LIT(o, ",\"payload\":");
            if (out_json_str(o, p + ra->value_at, (Py_ssize_t)ra->value_size) < 0 || out_reserve(o, 32) < 0)
                return -1;
        }
    }
    LIT(o, "}\n");
    return 0;
}

/* A record's line in Kafka's text (TextSink.v2_records / v2_spans): 0, 1 for a header key that is not UTF-8. */
static int record_text(Out *o, const unsigned char *p, const RecordAt *ra, long long offset, long long timestamp,
                       long long sequence, int strings, const char *ts_name, Py_ssize_t ts_len) {
    if (out_reserve(o, 256 + ts_len + (ra->next - ra->key_at)) < 0) return -1;
    line_fields(o, offset, ts_name, ts_len, timestamp, ra->key_size >= 0 ? ra->key_size : -1,
                ra->value_size >= 0 ? ra->value_size : -1, sequence);
    /* header keys, comma-joined, as Kafka's new String(key, UTF_8): valid UTF-8 as it is */
    Py_ssize_t q = ra->headers_at, ka, va;
    int64_t kn, vn;
    for (int64_t k = 0; k < ra->header_count; k++) {
        header_at(p, &q, ra->next, &ka, &kn, &va, &vn);
        if (!valid_utf8(p + ka, (Py_ssize_t)kn)) return 1;
        if (k) LIT(o, ",");
        out_raw(o, (const char *)p + ka, (Py_ssize_t)kn);
    }
    LIT(o, "]");
    if (strings) { /* key_payload: each printed when not null */
        if (ra->key_size >= 0) {
            LIT(o, " key: ");
            out_raw(o, (const char *)p + ra->key_at, (Py_ssize_t)ra->key_size);
        }
        if (ra->value_size >= 0) {
            LIT(o, " payload: ");
            out_raw(o, (const char *)p + ra->value_at, (Py_ssize_t)ra->value_size);
        }
    }
    LIT(o, "\n");
    return 0;
}

/* ------------------------------------------------------------------ codecs of the window loop */

/* lz4 and zstd batches are decompressed by dump_window itself, by the very codec libraries the Python path
 * uses (kseg.format.compression.window_codec hands them over: lz4's block decompressor, a zstd decompressor
 * whose stream reader reads across frames), called from here: no Python frame and no object per record, and
 * the bytes are exactly the Python path's.  Kafka's LZ4 frame is read here by the Python path's rules.  Only
 * a whole, well-formed stream is taken: any codec error, a stream that ends early or runs on, and output past
 * the bounds hand the batch back to the Python path, whose rule raises the one message. */

#define CODEC_LZ4 3
#define CODEC_ZSTD 4

/* XXH32 (the LZ4 frame's descriptor and block checksums; kseg.format.compression.xxh32). */
#define XXH_P1 2654435761U
#define XXH_P2 2246822519U
#define XXH_P3 3266489917U
#define XXH_P4 668265263U
#define XXH_P5 374761393U
static inline uint32_t rotl32(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }
static inline uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint32_t xxh32(const unsigned char *p, Py_ssize_t n) {
    Py_ssize_t i = 0;
    uint32_t h;
    if (n >= 16) {
        uint32_t v1 = XXH_P1 + XXH_P2, v2 = XXH_P2, v3 = 0, v4 = 0U - XXH_P1;
        for (; i + 16 <= n; i += 16) {
            v1 = rotl32(v1 + le32(p + i) * XXH_P2, 13) * XXH_P1;
            v2 = rotl32(v2 + le32(p + i + 4) * XXH_P2, 13) * XXH_P1;
            v3 = rotl32(v3 + le32(p + i + 8) * XXH_P2, 13) * XXH_P1;
            v4 = rotl32(v4 + le32(p + i + 12) * XXH_P2, 13) * XXH_P1;
        }
        h = rotl32(v1, 1) + rotl32(v2, 7) + rotl32(v3, 12) + rotl32(v4, 18);
    } else {
        h = XXH_P5;
    }
    h += (uint32_t)n;
    for (; i + 4 <= n; i += 4) h = rotl32(h + le32(p + i) * XXH_P3, 17) * XXH_P4;
    for (; i < n; i++) h = rotl32(h + p[i] * XXH_P5, 11) * XXH_P1;
    h ^= h >> 15;
    h *= XXH_P2;
    h ^= h >> 13;
    h *= XXH_P3;
    h ^= h >> 16;
    return h;
}

/* The most decompressed bytes of a batch the window loop takes (kseg.format.compression.PIECE, the piece
 * the Python path reads a stream in): a larger batch takes the per-batch path, which streams it. */
#define WINDOW_PIECE (1 << 20)
/* The most bytes of lines one compressed batch may add to the output buffer (its lines are held whole, in
 * case a later record hands the batch back): a batch of more (many tiny records) takes the per-batch path,
 * which writes its lines a chunk at a time. */
#define WINDOW_BATCH_OUT (4 << 20)

/* The decompressed bytes of one batch, in a buffer reused batch after batch within one dump_window call
 * (a batch's record lines are all written before the next batch is decompressed into it), and the codecs,
 * asked of ``codec_fn`` at the first batch that needs them. */
typedef struct {
    unsigned char *p;
    Py_ssize_t cap;
    PyObject *codec_fn;  /* window_codec(codec id) -> the codec's object (borrowed) */
    PyObject *lz4_block; /* lz4.block.decompress */
    PyObject *zstd_open; /* ZstdDecompressor().stream_reader */
    PyObject *across;    /* {"read_across_frames": True} */
} Inflated;

static int inflated_room(Inflated *d, Py_ssize_t n) {
    if (n <= d->cap) return 0;
    unsigned char *q = PyMem_Realloc(d->p, n);
    if (q == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    d->p = q;
    d->cap = n;
    return 0;
}

static void inflated_free(Inflated *d) {
    PyMem_Free(d->p);
    Py_XDECREF(d->lz4_block);
    Py_XDECREF(d->zstd_open);
    Py_XDECREF(d->across);
}

/* After a codec call failed: 1 for a codec error (cleared: the Python path raises its own message), -1 to
 * propagate what is not one (no memory, KeyboardInterrupt, SystemExit). */
static int codec_failed(void) {
    if (PyErr_ExceptionMatches(PyExc_MemoryError) || !PyErr_ExceptionMatches(PyExc_Exception)) return -1;
    PyErr_Clear();
    return 1;
}

/* The codec's object from ``codec_fn``: 0, 1 when there is none (the batch goes to the Python path, whose
 * import raises), -1 on error. */
static int codec_object(Inflated *d, int codec) {
    if (codec == CODEC_LZ4 ? d->lz4_block != NULL : d->zstd_open != NULL) return 0;
    if (d->codec_fn == Py_None) return 1;
    PyObject *obj = PyObject_CallFunction(d->codec_fn, "i", codec);
    if (obj == NULL) return codec_failed(); /* a library that does not import: the Python path's message */
    if (codec == CODEC_LZ4) {
        d->lz4_block = obj;
        return 0;
    }
    d->zstd_open = PyObject_GetAttrString(obj, "stream_reader");
    Py_DECREF(obj);
    d->across = Py_BuildValue("{sO}", "read_across_frames", Py_True);
    return d->zstd_open == NULL || d->across == NULL ? -1 : 0;
}

/* Kafka's LZ4 frame (compression._lz4_frame_start and _unlz4, KafkaLZ4BlockInputStream) of ``src``:
 * 0 with the bytes in ``d`` (``*n``), 1 for a frame the Python path must read (an error, or more than
 * ``bound`` bytes), -1 on error. */
static int inflate_lz4(Inflated *d, const unsigned char *src, Py_ssize_t len, Py_ssize_t bound, Py_ssize_t *n) {
    static const Py_ssize_t block_sizes[8] = {0, 0, 0, 0, 1 << 16, 1 << 18, 1 << 20, 1 << 22};
    if (len < 6 || le32(src) != 0x184D2204U) return 1;
    unsigned flg = src[4], bd = src[5];
    if (flg >> 6 != 1 || (flg & 0x02) || (bd & 0x8F)) return 1;
    Py_ssize_t block_max = block_sizes[(bd >> 4) & 0x07];
    if (block_max == 0) return 1;
    Py_ssize_t pos = 6 + ((flg & 0x08) ? 8 : 0); /* a content size is skipped, as Kafka does */
    if (pos >= len) return 1;
    /* magic 2: the descriptor checksum is checked (only magic 0's old writer hashed the magic too) */
    if (src[pos] != ((xxh32(src + 4, pos - 4) >> 8) & 0xFF)) return 1;
    pos++;
    Py_ssize_t total = 0;
    for (;;) {
        if (pos + 4 > len) return 1;
        uint32_t word = le32(src + pos);
        pos += 4;
        Py_ssize_t size = (Py_ssize_t)(word & 0x7FFFFFFFU);
        if (size == 0) break; /* the end mark; a content checksum after it is not read, as Kafka does not */
        if (size > block_max || pos + size > len) return 1;
        const unsigned char *raw = src + pos;
        Py_ssize_t got = size;
        PyObject *block = NULL;
        if ((word & 0x80000000U) == 0) { /* compressed: lz4.block.decompress(block, uncompressed_size=block_max) */
            PyObject *in = PyBytes_FromStringAndSize((const char *)src + pos, size);
            if (in == NULL) return -1;
            PyObject *args = Py_BuildValue("(N)", in), *kw = Py_BuildValue("{sn}", "uncompressed_size", block_max);
            if (args != NULL && kw != NULL) block = PyObject_Call(d->lz4_block, args, kw);
            Py_XDECREF(args);
            Py_XDECREF(kw);
            if (block == NULL) return codec_failed();
            if (!PyBytes_Check(block)) {
                Py_DECREF(block);
                return 1;
            }
            raw = (const unsigned char *)PyBytes_AS_STRING(block);
            got = PyBytes_GET_SIZE(block);
        }
        if (total + got > bound || inflated_room(d, total + got) < 0) {
            Py_XDECREF(block);
            return PyErr_Occurred() ? -1 : 1;
        }
        memcpy(d->p + total, raw, (size_t)got);
        Py_XDECREF(block);
        total += got;
        if (flg & 0x10) { /* block checksums, of the block as stored */
            if (pos + size + 4 > len || le32(src + pos + size) != xxh32(src + pos, size)) return 1;
            pos += 4;
        }
        pos += size;
    }
    *n = total;
    return 0;
}

/* One or more zstd frames read as the Python path reads them (compression._unzstd: the decompressor's
 * stream reader across frames, until it returns nothing), into ``d``: 0 and ``*n`` bytes, 1 for the Python
 * path (a codec error, more than ``bound`` bytes), -1 on error. */
static int inflate_zstd(Inflated *d, const unsigned char *src, Py_ssize_t len, Py_ssize_t bound, Py_ssize_t *n) {
    if (inflated_room(d, bound + 1) < 0) return -1;
    PyObject *in = PyBytes_FromStringAndSize((const char *)src, len);
    if (in == NULL) return -1;
    PyObject *args = Py_BuildValue("(N)", in);
    PyObject *reader = args == NULL ? NULL : PyObject_Call(d->zstd_open, args, d->across);
    Py_XDECREF(args);
    Py_ssize_t total = 0;
    int r = 1;
    while (reader != NULL) {
        if (total > bound) break; /* past the bound: the Python path raises it */
        PyObject *room = PyMemoryView_FromMemory((char *)d->p + total, bound + 1 - total, PyBUF_WRITE);
        PyObject *got = room == NULL ? NULL : PyObject_CallMethod(reader, "readinto", "O", room);
        Py_XDECREF(room);
        if (got == NULL) break;
        Py_ssize_t k = PyLong_AsSsize_t(got);
        Py_DECREF(got);
        if (k < 0 || k > bound + 1 - total) break;
        if (k == 0) {
            r = 0;
            break;
        }
        total += k;
    }
    Py_XDECREF(reader);
    if (PyErr_Occurred()) return codec_failed();
    *n = total;
    return r;
}

/* The records of the compressed batch ``p`` (``total`` bytes, codec ``codec``) decompressed into ``d``: 0
 * and ``*n`` bytes, or 1 for a batch the per-batch path takes (gzip, snappy, a codec library that does not
 * import, a codec error, more than ``min(limit, WINDOW_PIECE)`` bytes), -1 on error. */
static int inflate_batch(Inflated *d, int codec, const unsigned char *p, long long total, long long limit,
                         Py_ssize_t *n) {
    if (codec != CODEC_LZ4 && codec != CODEC_ZSTD) return 1;
    int r = codec_object(d, codec);
    if (r) return r;
    Py_ssize_t bound = limit < WINDOW_PIECE ? (Py_ssize_t)limit : WINDOW_PIECE;
    const unsigned char *src = p + RECORD_BATCH_OVERHEAD;
    Py_ssize_t len = (Py_ssize_t)(total - RECORD_BATCH_OVERHEAD);
    return codec == CODEC_LZ4 ? inflate_lz4(d, src, len, bound, n) : inflate_zstd(d, src, len, bound, n);
}

/* The record lines (``json`` > 0: JSON rows of that schema version) of a data batch's records (``p``: the
 * batch's bytes, or a compressed batch's decompressed bytes, records from ``start`` to ``total``), checked
 * against the continuity rule from ``*last`` (Dumper._next_offset: -1 is "none yet" unless ``gap``).  0 and
 * the lines in ``o``; 1 for a batch the Python path must take (a record the rules judge, a gap, invalid UTF-8
 * printed or in a header key, a number past int64, lines past ``o->n`` = ``most``); -1 on error. */
static int window_records(Out *o, const unsigned char *p, Py_ssize_t start, long long total, const long long *v,
                          int mode, int json, int gap, long long *last, const char *ts_name, Py_ssize_t ts_len,
                          Py_ssize_t most) {
    Records it;
    RecordAt ra;
    long long prev = *last, offset, timestamp, sequence;
    int strings = mode == WINDOW_STRINGS, got;
    if (records_open_at(&it, p, start, total, v)) return 1;
    while ((got = records_next(&it, &ra, &offset, &timestamp, &sequence)) > 0) {
        if (o->n > most) return 1;
        /* Dumper._next_offset: a gap is noted by the Python path */
        if ((prev != -1 || gap) && (prev == LLONG_MAX || offset != prev + 1)) return 1;
        prev = offset;
        if (strings) {
            if (ra.key_size >= 0 && !valid_utf8(p + ra.key_at, (Py_ssize_t)ra.key_size)) return 1;
            if (ra.value_size >= 0 && !valid_utf8(p + ra.value_at, (Py_ssize_t)ra.value_size)) return 1;
        }
        int r = json ? record_json(o, p, &ra, offset, timestamp, sequence, strings, json, ts_name, ts_len)
                     : record_text(o, p, &ra, offset, timestamp, sequence, strings, ts_name, ts_len);
        if (r) return r;
    }
    if (got < 0) return 1;
    *last = prev;
    return 0;
}

/* dump_window(view, ws, wl, pos, end, mode, last_offset, gap, parts_fn, ts_names, out_limit, json, limit, codec_fn)
 *     -> (data, pos, last_offset, full)
 *
 * Dumper._dump_batches over the window ``view[:wl]`` (the file's bytes from ``ws``), from ``pos``: for each
 * whole v2 batch framed there (FileRecords.frame_at's rule), its batch line (TextSink.batch_lines, parts from
 * ``parts_fn``) and in the deep modes its record lines (TextSink.v2_records / v2_spans), the offsets checked
 * by Dumper._next_offset's rule from ``last_offset`` (``gap``: Kafka 4.3+'s "-1 is followed by N").
 * ``ts_names``: TimestampType's (CreateTime, LogAppendTime) names.  ``json`` > 0: JsonSink's rows of that schema
 * version instead (kseg.render.jsonl: v2_batch_object, v2_records; ``parts_fn`` unused).  Returns the lines (UTF-8), where it
 * stopped, the last record offset, and ``full``: True when it stopped because ``data`` reached
 * ``out_limit`` bytes (call again); False at a batch the Python path takes, one batch: iteration's end,
 * a framing error, a batch outside the window, a legacy, control or invalid batch in the deep modes, or any
 * batch whose records the rules would judge or whose text the engine does not write.  In the deep modes an lz4
 * or zstd batch is decompressed here (inflate_batch, by the libraries ``codec_fn`` gives: at most ``limit``
 * bytes, the dump's decompression bound, and WINDOW_PIECE) into a buffer its lines are written from before the
 * next batch reuses it; gzip and snappy, a codec error and a larger batch take the per-batch path. */
static PyObject *py_dump_window(PyObject *self, PyObject *args) {
    PyObject *view, *parts_fn;
    Py_ssize_t ws, wl, out_limit;
    long long pos, end, last;
    int mode, gap, json;
    const char *ts_create, *ts_append;
    Py_ssize_t create_len, append_len;
    long long limit;
    PyObject *codec_fn;
    if (!PyArg_ParseTuple(args, "OnnLLiLpO(s#s#)niLO:dump_window", &view, &ws, &wl, &pos, &end, &mode, &last, &gap,
                          &parts_fn, &ts_create, &create_len, &ts_append, &append_len, &out_limit, &json, &limit,
                          &codec_fn))
        return NULL;
    if (mode < WINDOW_SHALLOW || mode > WINDOW_STRINGS) {
        PyErr_SetString(PyExc_ValueError, "dump_window: mode must be 0 (shallow), 1 (sizes) or 2 (strings)");
        return NULL;
    }
    Py_buffer b;
    if (PyObject_GetBuffer(view, &b, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *buf = (const unsigned char *)b.buf;
    if (wl > b.len) wl = b.len;
    if (wl < 0) wl = 0;
    Out o = {NULL, 0, 0};
    Inflated d = {NULL, 0, codec_fn, NULL, NULL, NULL};
    PyObject *parts = NULL;
    long long key[6] = {0, 0, 0, 0, 0, 0};
    int have_key = 0, full = 0;
    long long stop = end - HEADER_SIZE_UP_TO_MAGIC;
    while (pos < stop) {
        if (o.n >= out_limit) {
            full = 1;
            break;
        }
        const unsigned char *p;
        long long total, v[H_FIELDS];
        if (frame_v2(buf, ws, wl, pos, end, &p, &total) != FRAME_OK) break; /* the Python path's */
        read_header(p, v);
        long long attrs = v[H_ATTRIBUTES];
        int codec = (int)(attrs & CODEC_MASK);
        if (mode != WINDOW_SHALLOW && ((attrs & CONTROL_FLAG) || (codec && codec != CODEC_LZ4 && codec != CODEC_ZSTD)))
            break;
        int valid = crc32c_update(0, p + ATTRIBUTES_OFFSET, (Py_ssize_t)(total - ATTRIBUTES_OFFSET)) == (uint32_t)v[H_CRC];
        if (mode != WINDOW_SHALLOW && !valid) break;
        long long last_offset;
        if (add_overflow(v[H_BASE_OFFSET], v[H_LAST_OFFSET_DELTA], &last_offset)) break;
        const char *ts_name = (attrs & TIMESTAMP_TYPE_FLAG) ? ts_append : ts_create;
        Py_ssize_t ts_len = (attrs & TIMESTAMP_TYPE_FLAG) ? append_len : create_len;
        Py_ssize_t mark = o.n;
        if (json) {
            int got = batch_json(&o, v, last_offset, pos, total, valid, json, ts_name, ts_len);
            if (got < 0) goto fail;
            if (got > 0) break;
        } else {
            int got = parts_for(parts_fn, v, NULL, key, &have_key, &parts);
            if (got < 0) goto fail;
            if (got > 0) break;
            if (batch_line(&o, v, last_offset, pos, total, valid, parts) < 0) goto fail;
        }
        if (mode != WINDOW_SHALLOW && (codec == 0 || v[H_COUNT] != 0)) { /* a compressed batch of no records is
                                                                        not decompressed (RecordBatch._chunks) */
            int r;
            if (codec == 0) {
                r = window_records(&o, p, RECORD_BATCH_OVERHEAD, total, v, mode, json, gap, &last, ts_name, ts_len,
                                   PY_SSIZE_T_MAX);
            } else {
                Py_ssize_t n = 0;
                r = inflate_batch(&d, codec, p, total, limit, &n);
                if (r == 0)
                    r = window_records(&o, d.p, 0, n, v, mode, json, gap, &last, ts_name, ts_len,
                                       mark + WINDOW_BATCH_OUT);
            }
            if (r < 0) goto fail;
            if (r > 0) { /* the whole batch to the Python path: nothing of it written here */
                o.n = mark;
                break;
            }
        }
        pos += total;
    }
    Py_XDECREF(parts);
    PyBuffer_Release(&b);
    inflated_free(&d);
    PyObject *data = PyBytes_FromStringAndSize(o.p ? o.p : "", o.n);
    PyMem_Free(o.p);
    if (data == NULL) return NULL;
    return Py_BuildValue("(NLLO)", data, pos, last, full ? Py_True : Py_False);
fail:
    Py_XDECREF(parts);
    PyBuffer_Release(&b);
    inflated_free(&d);
    PyMem_Free(o.p);
    return NULL;
}

/* ------------------------------------------------------------------ a window of export's columns */

/* The buffers export_window fills, in the order it returns them: Arrow's layouts (little-endian values,
 * int32 offsets with a leading 0, validity bitmaps LSB first), one entry a row (``C_*`` values per record
 * ``R`` rows; header keys and values one entry per header).  kseg.ops.export.columns names them by the
 * same numbers (COLUMN_BUFFERS, compared at import). */
#define C_OFFSET 0       /* int64: the record's offset */
#define C_TIMESTAMP 1    /* int64: its timestamp (epoch ms, -1 none) */
#define C_TS_VALID 2     /* bits: the timestamp column holds it (not -1, years 1-9999) */
#define C_TS_TYPE_OFF 3  /* int32 offsets and UTF-8 data: the batch's TimestampType name */
#define C_TS_TYPE 4
#define C_KEY_OFF 5      /* int32 offsets, data, validity: the key (null when null) */
#define C_KEY 6
#define C_KEY_VALID 7
#define C_VALUE_OFF 8    /* the same for the value */
#define C_VALUE 9
#define C_VALUE_VALID 10
#define C_HEADERS_OFF 11 /* int32: each row's first header, into the header buffers below */
#define C_HKEY_OFF 12    /* int32 offsets and UTF-8 data: header keys (Kafka's new String(key, UTF_8)) */
#define C_HKEY 13
#define C_HVALUE_OFF 14  /* int32 offsets, data, validity: header values */
#define C_HVALUE 15
#define C_HVALUE_VALID 16
#define C_SEQUENCE 17    /* int32: the record's producer sequence */
#define C_POSITION 18    /* int64: the batch's position in the .log */
#define C_BASE_OFFSET 19 /* int64 */
#define C_LAST_OFFSET 20 /* int64 */
#define C_PRODUCER_ID 21 /* int64 */
#define C_PRODUCER_EPOCH 22 /* int32 */
#define C_BASE_SEQUENCE 23  /* int32 */
#define C_LEADER_EPOCH 24   /* int32 */
#define C_TRANSACTIONAL 25  /* bits */
#define C_BUFFERS 26

typedef struct {
    Out b[C_BUFFERS];
    Py_ssize_t rows, headers;
} Cols;

typedef struct {
    Py_ssize_t n[C_BUFFERS];
    Py_ssize_t rows, headers;
} ColsMark;

static void cols_mark(const Cols *c, ColsMark *m) {
    for (int k = 0; k < C_BUFFERS; k++) m->n[k] = c->b[k].n;
    m->rows = c->rows;
    m->headers = c->headers;
}

static void cols_reset(Cols *c, const ColsMark *m) {
    for (int k = 0; k < C_BUFFERS; k++) c->b[k].n = m->n[k];
    c->rows = m->rows;
    c->headers = m->headers;
}

static void cols_free(Cols *c) {
    for (int k = 0; k < C_BUFFERS; k++) PyMem_Free(c->b[k].p);
}

/* Arrow's buffers are little-endian, as the machines kseg builds for are (x86-64, arm64). */
HOT_INLINE int put(Out *o, const void *v, Py_ssize_t n) {
    if (out_reserve(o, n) < 0) return -1;
    out_raw(o, (const char *)v, n);
    return 0;
}

HOT_INLINE int put64(Out *o, int64_t v) { return put(o, &v, 8); }

HOT_INLINE int put32(Out *o, int32_t v) { return put(o, &v, 4); }

/* Bit ``i`` of a validity bitmap set to ``on`` (bytes written as the bitmap grows; a rolled-back bitmap is
 * shorter and its bits are written again). */
HOT_INLINE int put_bit(Out *o, Py_ssize_t i, int on) {
    Py_ssize_t byte = i >> 3;
    if (byte >= o->n) {
        if (out_reserve(o, byte + 1 - o->n) < 0) return -1;
        memset(o->p + o->n, 0, (size_t)(byte + 1 - o->n));
        o->n = byte + 1;
    }
    unsigned char bit = (unsigned char)(1u << (i & 7));
    if (on)
        o->p[byte] |= (char)bit;
    else
        o->p[byte] &= (char)~bit;
    return 0;
}

/* A binary (or string) value: its bytes (``n`` < 0: null) appended to ``data``, its end to ``off``, its
 * validity bit ``i``. */
HOT_INLINE int put_binary(Out *off, Out *data, Out *valid, Py_ssize_t i, const unsigned char *s, int64_t n) {
    if (n > 0 && put(data, s, (Py_ssize_t)n) < 0) return -1;
    if (valid != NULL && put_bit(valid, i, n >= 0) < 0) return -1;
    return put32(off, (int32_t)data->n);
}

/* The rows of one uncompressed data batch (``p``: its bytes, ``total`` long, ``v`` its header) whose
 * records ``[from_offset, to_offset] x [from_time, to_time)`` hold (Ranges.holds), appended to ``c``.
 * 0, with the largest offset... of rows added in *added; 1 for a batch the Python path must take (a record
 * the rules judge, a header key that is not UTF-8, a number past its type); -1 on error. */
static int export_records(Cols *c, const unsigned char *p, long long total, const long long *v, long long position,
                          long long last_offset, const long long range[4], const long long ts_range[2],
                          const char *ts_name, Py_ssize_t ts_len, Py_ssize_t *added) {
    Records it;
    RecordAt ra;
    long long offset, timestamp, sequence;
    int transactional = (v[H_ATTRIBUTES] & TRANSACTIONAL_FLAG) != 0, got;
    *added = 0;
    if (records_open(&it, p, total, v)) return 1;
    while ((got = records_next(&it, &ra, &offset, &timestamp, &sequence)) > 0) {
        if (sequence < INT32_MIN || sequence > INT32_MAX) return 1;
        if (!(range[0] <= offset && offset <= range[1] && range[2] <= timestamp && timestamp < range[3])) continue;
        /* header keys first: one that is not UTF-8 takes the batch to the Python rule (Java's replacement) */
        Py_ssize_t q = ra.headers_at, ka, va;
        int64_t kn, vn;
        for (int64_t k = 0; k < ra.header_count; k++) {
            header_at(p, &q, ra.next, &ka, &kn, &va, &vn);
            if (!valid_utf8(p + ka, (Py_ssize_t)kn)) return 1;
            if (put_binary(&c->b[C_HKEY_OFF], &c->b[C_HKEY], NULL, c->headers, p + ka, kn) < 0) return -1;
            if (put_binary(&c->b[C_HVALUE_OFF], &c->b[C_HVALUE], &c->b[C_HVALUE_VALID], c->headers, p + va, vn) < 0)
                return -1;
            c->headers++;
        }
        Py_ssize_t i = c->rows;
        int in_range = timestamp != -1 && ts_range[0] <= timestamp && timestamp <= ts_range[1];
        if (put64(&c->b[C_OFFSET], offset) < 0 || put64(&c->b[C_TIMESTAMP], timestamp) < 0 ||
            put_bit(&c->b[C_TS_VALID], i, in_range) < 0 ||
            put_binary(&c->b[C_TS_TYPE_OFF], &c->b[C_TS_TYPE], NULL, i, (const unsigned char *)ts_name, ts_len) < 0 ||
            put_binary(&c->b[C_KEY_OFF], &c->b[C_KEY], &c->b[C_KEY_VALID], i, p + ra.key_at,
                       ra.key_size >= 0 ? ra.key_size : -1) < 0 ||
            put_binary(&c->b[C_VALUE_OFF], &c->b[C_VALUE], &c->b[C_VALUE_VALID], i, p + ra.value_at,
                       ra.value_size >= 0 ? ra.value_size : -1) < 0 ||
            put32(&c->b[C_HEADERS_OFF], (int32_t)c->headers) < 0 || put32(&c->b[C_SEQUENCE], (int32_t)sequence) < 0 ||
            put64(&c->b[C_POSITION], position) < 0 || put64(&c->b[C_BASE_OFFSET], v[H_BASE_OFFSET]) < 0 ||
            put64(&c->b[C_LAST_OFFSET], last_offset) < 0 || put64(&c->b[C_PRODUCER_ID], v[H_PRODUCER_ID]) < 0 ||
            put32(&c->b[C_PRODUCER_EPOCH], (int32_t)v[H_PRODUCER_EPOCH]) < 0 ||
            put32(&c->b[C_BASE_SEQUENCE], (int32_t)v[H_BASE_SEQUENCE]) < 0 ||
            put32(&c->b[C_LEADER_EPOCH], (int32_t)v[H_LEADER_EPOCH]) < 0 ||
            put_bit(&c->b[C_TRANSACTIONAL], i, transactional) < 0)
            return -1;
        c->rows++;
        (*added)++;
    }
    return got < 0;
}

/* export_window(view, ws, wl, pos, end, ranges, ts_range, ts_names, max_rows, max_bytes)
 *     -> (pos, full, rows, headers, last_offset, buffers)
 *
 * kseg.ops.export.read.read_split's batch loop over the window ``view[:wl]`` (the file's bytes from ``ws``),
 * from ``pos`` to ``end``, for every whole v2 batch framed there (FileRecords.frame_at's rule) that is an
 * uncompressed data batch with a valid CRC and a last offset within int64: Ranges.place's BEFORE skips it
 * (``ranges``: from_offset, to_offset, from_time, to_time), and the records Ranges.holds selects become rows
 * of the C_* buffers (``ts_range``: the epoch milliseconds the timestamp column holds; ``ts_names``:
 * TimestampType's CreateTime and LogAppendTime names).  Returns where it stopped; ``full``: it stopped because
 * the rows reached ``max_rows`` or their key and value bytes ``max_bytes`` (call again); else at a batch
 * the Python path takes, one batch (the end, a framing error, a batch outside the window or past the range,
 * legacy, compressed, control or CRC-invalid, one whose records the rules judge); the rows and headers
 * made, the largest last offset of a batch that gave a row (LLONG_MIN: none), and the C_BUFFERS buffers as
 * bytes (None without a row). */
static PyObject *py_export_window(PyObject *self, PyObject *args) {
    PyObject *view;
    Py_ssize_t ws, wl, max_rows, max_bytes;
    long long pos, end, range[4], ts_range[2];
    const char *ts_create, *ts_append;
    Py_ssize_t create_len, append_len;
    if (!PyArg_ParseTuple(args, "OnnLL(LLLL)(LL)(s#s#)nn:export_window", &view, &ws, &wl, &pos, &end, &range[0],
                          &range[1], &range[2], &range[3], &ts_range[0], &ts_range[1], &ts_create, &create_len,
                          &ts_append, &append_len, &max_rows, &max_bytes))
        return NULL;
    Py_buffer b;
    if (PyObject_GetBuffer(view, &b, PyBUF_SIMPLE) < 0) return NULL;
    const unsigned char *buf = (const unsigned char *)b.buf;
    if (wl > b.len) wl = b.len;
    if (wl < 0) wl = 0;
    Cols c;
    memset(&c, 0, sizeof c);
    int full = 0;
    long long top = LLONG_MIN;
    PyObject *buffers = NULL;
    /* the leading 0 of every offsets buffer */
    if (put32(&c.b[C_TS_TYPE_OFF], 0) < 0 || put32(&c.b[C_KEY_OFF], 0) < 0 || put32(&c.b[C_VALUE_OFF], 0) < 0 ||
        put32(&c.b[C_HEADERS_OFF], 0) < 0 || put32(&c.b[C_HKEY_OFF], 0) < 0 || put32(&c.b[C_HVALUE_OFF], 0) < 0)
        goto fail;
    long long by_time = range[2] != LLONG_MIN || range[3] != LLONG_MAX;
    long long stop = end - HEADER_SIZE_UP_TO_MAGIC;
    while (pos < stop) {
        if (c.rows >= max_rows || c.b[C_KEY].n + c.b[C_VALUE].n + c.b[C_HVALUE].n >= max_bytes) {
            full = 1;
            break;
        }
        const unsigned char *p;
        long long total, v[H_FIELDS];
        if (frame_v2(buf, ws, wl, pos, end, &p, &total) != FRAME_OK) break; /* the Python path's */
        read_header(p, v);
        long long last_offset;
        /* a last offset past 2^63-1 is read_split's bad-last-offset; a codec or a control batch its Python */
        if (add_overflow(v[H_BASE_OFFSET], v[H_LAST_OFFSET_DELTA], &last_offset)) break;
        if (v[H_LAST_OFFSET_DELTA] < 0) break;
        if (v[H_ATTRIBUTES] & (CODEC_MASK | CONTROL_FLAG)) break;
        if (v[H_BASE_OFFSET] > range[1]) break; /* Ranges.place: PAST, the Python path ends the split */
        if (last_offset < range[0] || (by_time && v[H_MAX_TIMESTAMP] < range[2])) { /* BEFORE */
            pos += total;
            continue;
        }
        if (crc32c_update(0, p + ATTRIBUTES_OFFSET, (Py_ssize_t)(total - ATTRIBUTES_OFFSET)) != (uint32_t)v[H_CRC])
            break;
        ColsMark mark;
        cols_mark(&c, &mark);
        Py_ssize_t added;
        int log_append = (v[H_ATTRIBUTES] & TIMESTAMP_TYPE_FLAG) != 0;
        int r = export_records(&c, p, total, v, pos, last_offset, range, ts_range, log_append ? ts_append : ts_create,
                               log_append ? append_len : create_len, &added);
        if (r < 0) goto fail;
        if (r > 0) { /* the whole batch to the Python path: nothing of it kept here */
            cols_reset(&c, &mark);
            break;
        }
        if (added && last_offset > top) top = last_offset;
        pos += total;
    }
    PyBuffer_Release(&b);
    if (c.rows) {
        buffers = PyTuple_New(C_BUFFERS);
        if (buffers == NULL) goto done;
        for (int k = 0; k < C_BUFFERS; k++) {
            PyObject *data = PyBytes_FromStringAndSize(c.b[k].p ? c.b[k].p : "", c.b[k].n);
            if (data == NULL) {
                Py_CLEAR(buffers);
                goto done;
            }
            PyTuple_SET_ITEM(buffers, k, data);
        }
    } else {
        buffers = Py_None;
        Py_INCREF(buffers);
    }
done:
    cols_free(&c);
    if (buffers == NULL) return NULL;
    return Py_BuildValue("(LOnnLN)", pos, full ? Py_True : Py_False, c.rows, c.headers, top, buffers);
fail:
    PyBuffer_Release(&b);
    cols_free(&c);
    return NULL;
}

/* ------------------------------------------------------------------ find */

/* memmem where the C library has it (glibc, the BSDs, macOS); else memchr on the first byte. */
static const char *find_bytes(const char *hay, Py_ssize_t n, const char *needle, Py_ssize_t m) {
#if defined(_WIN32)
    const char *end = hay + n - m + 1;
    for (const char *p = hay; p < end; p++) {
        p = memchr(p, needle[0], (size_t)(end - p));
        if (p == NULL) return NULL;
        if (memcmp(p, needle, (size_t)m) == 0) return p;
    }
    return NULL;
#else
    return memmem(hay, (size_t)n, needle, (size_t)m);
#endif
}

/* find(buffer, needle, start, end) -> int: bytes.find(needle, start, end) for 0 <= start, end (the
 * index in buffer of needle's first place in buffer[start:end], -1 when there is none); the buffer is
 * any contiguous one (the reader's window: an mmap, a bytearray, a memoryview of them). */
static PyObject *py_find(PyObject *self, PyObject *args) {
    Py_buffer hay, needle;
    Py_ssize_t start, end, at = -1;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*y*nn", &hay, &needle, &start, &end)) return NULL;
    if (start < 0 || end < 0) {
        PyBuffer_Release(&hay);
        PyBuffer_Release(&needle);
        PyErr_SetString(PyExc_ValueError, "find: start and end must not be negative");
        return NULL;
    }
    if (end > hay.len) end = hay.len;
    if (start <= end && end - start >= needle.len) {
        if (needle.len == 0) {
            at = start;
        } else {
            const char *p = find_bytes((const char *)hay.buf + start, end - start, needle.buf, needle.len);
            if (p != NULL) at = p - (const char *)hay.buf;
        }
    }
    PyBuffer_Release(&hay);
    PyBuffer_Release(&needle);
    return PyLong_FromSsize_t(at);
}

/* ------------------------------------------------------------------ verify-index's log pass over a window */

/* verify_window's state: one writable int64 buffer, read on entry and written back, so the Python pass
 * (kseg.ops.verify.log) and the engine share one set of running values.  kseg.ops.verify.log names the
 * slots by the same numbers (compared at import). */
#define V_BASE_OFFSET 0 /* in: the segment's base offset (a batch below it is a problem) */
#define V_LIMIT 1       /* in: --max-message-size, or -1 */
#define V_EPOCHS 2      /* in: 1 when a leader-epoch check judges batches from V_EPOCH_FROM on */
#define V_EPOCH_LO 3    /* in: the range and epoch the last judged batch agreed with (EpochCheck.lo/hi/expected) */
#define V_EPOCH_HI 4
#define V_EPOCH_EXPECTED 5
#define V_EPOCH_FROM 6
#define V_EVERY 7     /* in: record every batch, not only those the index keys ask about */
#define V_HAS_MAX 8   /* in/out: 1 once a batch has been read */
#define V_MAX_LAST 9  /* in/out: the largest last offset so far (after a batch here: that batch's) */
#define V_RUNNING 10  /* in/out: the largest batch max timestamp so far */
#define V_BATCHES 11  /* in/out: batches read */
#define V_VALID_END 12 /* in/out: where the last batch read ends */
#define V_RECORDED 13 /* in/out: rows written to ``out`` (the caller takes them and sets 0) */
#define V_AT 14       /* in/out, 3 slots: each key stream's cursor (the first key not passed) */
#define V_MORE 17     /* in, 3 slots: 1 when the stream has keys past its buffer (the caller refills) */
#define V_FIELDS 20
/* Why verify_window returned. */
#define VERIFY_PYTHON 0 /* the batch at pos (if any) takes the per-batch path: a problem, a judged epoch, framing */
#define VERIFY_FULL 1   /* ``out`` is full */
#define VERIFY_KEYS 2   /* a key stream's buffer is used up and it has more: refill it */

/* Pass the keys of ``k[*at..n)`` at or below ``limit`` (``inclusive``) or below it; 1 with the new cursor in
 * *at, or 0 when the buffer ran out and the stream has more (nothing passed: the caller refills first). */
static inline int pass_keys(const long long *k, Py_ssize_t n, long long *at, int more, long long limit,
                            int inclusive) {
    Py_ssize_t i = (Py_ssize_t)*at;
    if (i < 0) i = 0;
    while (i < n && (inclusive ? k[i] <= limit : k[i] < limit)) i++;
    if (i == n && more) return 0;
    *at = i;
    return 1;
}

/* verify_window(view, ws, wl, pos, end, state, positions, offsets_a, offsets_b, out) -> (pos, why, stream)
 *
 * The log pass of verify-index (kseg.ops.verify.log._LogPass.batch) for every whole v2 batch of the window
 * that raises nothing: framing (frame_v2), CRC-32C, --max-message-size, offsets at or above the segment's
 * base offset and above every earlier last offset, lastOffsetDelta neither overflowing nor negative, and no
 * leader epoch for the epoch check to judge.  For each such batch the running values of ``state`` advance
 * and, when it is one an index entry asks about (an .index entry names its position, or it is the first
 * batch reaching an offset an .index or .timeindex entry names) or V_EVERY, (position, base offset, last
 * offset, running max timestamp) go to ``out`` (four columns of len(out)/4 int64).  The three key
 * streams are int64 buffers, ascending, read from the cursors V_AT.  It stops at the first batch any rule
 * has more to say about: that batch takes the per-batch path, whose problems it reports.  ``stream``: with
 * VERIFY_KEYS, the key stream to refill (its cursor stays where it was), else -1. */
static PyObject *py_verify_window(PyObject *self, PyObject *args) {
    PyObject *view, *state_obj, *key_obj[3], *out_obj;
    Py_ssize_t ws, wl;
    long long pos, end;
    if (!PyArg_ParseTuple(args, "OnnLLOOOOO:verify_window", &view, &ws, &wl, &pos, &end, &state_obj, &key_obj[0],
                          &key_obj[1], &key_obj[2], &out_obj))
        return NULL;
    Py_buffer b, sb, ob, kb[3];
    int got_keys = 0, why = VERIFY_PYTHON, refill = -1;
    if (PyObject_GetBuffer(view, &b, PyBUF_SIMPLE) < 0) return NULL;
    if (PyObject_GetBuffer(state_obj, &sb, PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&b);
        return NULL;
    }
    if (PyObject_GetBuffer(out_obj, &ob, PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&sb);
        PyBuffer_Release(&b);
        return NULL;
    }
    for (; got_keys < 3; got_keys++)
        if (PyObject_GetBuffer(key_obj[got_keys], &kb[got_keys], PyBUF_SIMPLE) < 0) goto fail;
    if (sb.len < (Py_ssize_t)(V_FIELDS * sizeof(long long)) || sb.len % sizeof(long long) ||
        ob.len % (4 * sizeof(long long)) || kb[0].len % sizeof(long long) || kb[1].len % sizeof(long long) ||
        kb[2].len % sizeof(long long)) {
        PyErr_SetString(PyExc_ValueError, "verify_window: state, keys and out must be int64 arrays");
        goto fail;
    }
    const unsigned char *buf = (const unsigned char *)b.buf;
    if (wl > b.len) wl = b.len;
    if (wl < 0) wl = 0;
    long long *s = (long long *)sb.buf, *out = (long long *)ob.buf;
    const long long *k[3];
    Py_ssize_t kn[3];
    for (int j = 0; j < 3; j++) {
        k[j] = (const long long *)kb[j].buf;
        kn[j] = kb[j].len / (Py_ssize_t)sizeof(long long);
    }
    Py_ssize_t cap = ob.len / (Py_ssize_t)(4 * sizeof(long long));
    long long base_offset = s[V_BASE_OFFSET], limit = s[V_LIMIT];
    int epochs = s[V_EPOCHS] != 0, every = s[V_EVERY] != 0, has_max = s[V_HAS_MAX] != 0;
    long long max_last = s[V_MAX_LAST], running = s[V_RUNNING], batches = s[V_BATCHES], valid_end = s[V_VALID_END];
    long long recorded = s[V_RECORDED];
    if (recorded < 0) recorded = 0;
    long long stop = end - HEADER_SIZE_UP_TO_MAGIC;
    while (pos < stop) {
        if (recorded >= cap) {
            why = VERIFY_FULL;
            break;
        }
        const unsigned char *p;
        long long total, last;
        if (frame_v2(buf, ws, wl, pos, end, &p, &total) != FRAME_OK) break;
        if (limit >= 0 && total > limit) break;
        if (crc32c_update(0, p + ATTRIBUTES_OFFSET, (Py_ssize_t)(total - ATTRIBUTES_OFFSET)) != ube32(p + CRC_OFFSET))
            break;
        long long base = be64(p + BASE_OFFSET_OFFSET);
        if (base < base_offset || (has_max && base <= max_last)) break;
        if (add_overflow(base, (long long)be32(p + LAST_OFFSET_DELTA_OFFSET), &last) || last < base) break;
        long long epoch = be32(p + PARTITION_LEADER_EPOCH_OFFSET);
        if (epochs && !(s[V_EPOCH_LO] <= base && base < s[V_EPOCH_HI] && epoch == s[V_EPOCH_EXPECTED]) && epoch >= 0 &&
            last >= s[V_EPOCH_FROM])
            break; /* EpochCheck.batch has something to judge */
        int record = every;
        if (!every) {
            long long at[3] = {s[V_AT], s[V_AT + 1], s[V_AT + 2]};
            for (int j = 0; j < 3 && refill < 0; j++)
                if (!pass_keys(k[j], kn[j], &at[j], s[V_MORE + j] != 0, j ? last : pos, j != 0)) refill = j;
            if (refill >= 0) {
                why = VERIFY_KEYS;
                break;
            }
            record = (at[0] < kn[0] && k[0][at[0]] == pos) || at[1] > s[V_AT + 1] || at[2] > s[V_AT + 2];
            s[V_AT] = at[0], s[V_AT + 1] = at[1], s[V_AT + 2] = at[2];
        }
        long long max_ts = be64(p + MAX_TIMESTAMP_OFFSET);
        has_max = 1;
        max_last = last;
        if (max_ts > running) running = max_ts;
        batches++;
        valid_end = pos + total;
        if (record) {
            out[recorded] = pos;
            out[cap + recorded] = base;
            out[2 * cap + recorded] = last;
            out[3 * cap + recorded] = running;
            recorded++;
        }
        pos = valid_end;
    }
    s[V_HAS_MAX] = has_max, s[V_MAX_LAST] = max_last, s[V_RUNNING] = running, s[V_BATCHES] = batches;
    s[V_VALID_END] = valid_end, s[V_RECORDED] = recorded;
    for (int j = 0; j < 3; j++) PyBuffer_Release(&kb[j]);
    PyBuffer_Release(&ob);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&b);
    return Py_BuildValue("(Lii)", pos, why, refill);
fail:
    for (int j = 0; j < got_keys; j++) PyBuffer_Release(&kb[j]);
    PyBuffer_Release(&ob);
    PyBuffer_Release(&sb);
    PyBuffer_Release(&b);
    return NULL;
}

/* entries_match(data, kind, base_offset, prev_key, prev_value, lo, hi, batch_keys, batch_values, batch_bases)
 *   -> bool or None
 *
 * verify-index's bulk check of a run of index entries (kseg.ops.verify.offset_index._all_batch_ends,
 * kseg.ops.verify.time_index._all_exact_times) read from the index file's bytes ``data``: kind 0, .index
 * entries (big-endian int32 relative offset, int32 position: key the position, value the offset); kind 1,
 * .timeindex entries (int64 timestamp, int32 relative offset: key the offset, value the timestamp).  Whether
 * the keys and values strictly increase from ``prev_key`` and ``prev_value``, every key lies in [lo, hi], and
 * each names a recorded batch -- ``batch_keys[k] == key`` (an int64 array, strictly ascending) -- whose
 * ``batch_values[k]`` is the entry's value and, with ``batch_bases`` (else None), whose ``batch_bases[k]`` is
 * not above it.  None when an absolute offset passes int64 or ``data`` is not whole entries (the Python rule
 * decides). */
static PyObject *py_entries_match(PyObject *self, PyObject *args) {
    PyObject *bk_obj, *bv_obj, *bb_obj;
    Py_buffer data;
    int kind;
    long long base_offset, prev_key, prev_value, lo, hi;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*iLLLLLOOO:entries_match", &data, &kind, &base_offset, &prev_key, &prev_value, &lo,
                          &hi, &bk_obj, &bv_obj, &bb_obj))
        return NULL;
    Py_buffer bk, bv, bb;
    int have_bases = bb_obj != Py_None, match = 1, undecided = 0, got = 0;
    if (PyObject_GetBuffer(bk_obj, &bk, PyBUF_SIMPLE) < 0) goto done;
    got = 1;
    if (PyObject_GetBuffer(bv_obj, &bv, PyBUF_SIMPLE) < 0) goto done;
    got = 2;
    if (have_bases && PyObject_GetBuffer(bb_obj, &bb, PyBUF_SIMPLE) < 0) goto done;
    got = 3;
    Py_ssize_t size = kind == 0 ? 8 : 12;
    if ((kind != 0 && kind != 1) || bk.len % sizeof(long long) || bv.len != bk.len || (have_bases && bb.len != bk.len)) {
        PyErr_SetString(PyExc_ValueError, "entries_match: kind 0 or 1, batches int64 arrays of one length");
        match = -1;
        goto done;
    }
    if (data.len % size) {
        undecided = 1;
        goto done;
    }
    const unsigned char *d = (const unsigned char *)data.buf;
    const long long *k = (const long long *)bk.buf, *v = (const long long *)bv.buf;
    const long long *b = have_bases ? (const long long *)bb.buf : NULL;
    Py_ssize_t m = bk.len / (Py_ssize_t)sizeof(long long), n = data.len / size, j = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        const unsigned char *e = d + i * size;
        long long key, value;
        if (kind == 0) {
            key = be32(e + 4);
            if (add_overflow(base_offset, (long long)be32(e), &value)) {
                undecided = 1;
                break;
            }
        } else {
            value = be64(e);
            if (add_overflow(base_offset, (long long)be32(e + 8), &key)) {
                undecided = 1;
                break;
            }
        }
        if (key <= prev_key || value <= prev_value || key < lo || key > hi) {
            match = 0;
            break;
        }
        if (i == 0) { /* the first batch at or past the first key; the keys ascend, so the rest follow it */
            Py_ssize_t a = 0, z = m;
            while (a < z) {
                Py_ssize_t mid = a + (z - a) / 2;
                if (k[mid] < key) a = mid + 1;
                else z = mid;
            }
            j = a;
        }
        while (j < m && k[j] < key) j++;
        if (j == m || k[j] != key || v[j] != value || (b != NULL && b[j] > value)) {
            match = 0;
            break;
        }
        prev_key = key, prev_value = value;
    }
done:
    if (got >= 3 && have_bases) PyBuffer_Release(&bb);
    if (got >= 2) PyBuffer_Release(&bv);
    if (got >= 1) PyBuffer_Release(&bk);
    PyBuffer_Release(&data);
    if (match < 0 || (got < 3)) return NULL;
    if (undecided) Py_RETURN_NONE;
    return PyBool_FromLong(match);
}

/* index_keys(data, kind, column, base_offset) -> bytes or None
 *
 * The keys verify-index's log pass walks (kseg.ops.verify.log.index_keys), from an index file's whole entries
 * ``data``, as native int64s: kind 0 (.index: big-endian int32 relative offset, int32 position), column 0 the
 * absolute offsets, column 1 the positions; kind 1 (.timeindex: int64 timestamp, int32 relative offset) the
 * absolute offsets.  None when an absolute offset passes int64 or ``data`` is not whole entries (the Python
 * reading decides). */
static PyObject *py_index_keys(PyObject *self, PyObject *args) {
    Py_buffer data;
    int kind, column;
    long long base_offset;
    (void)self;
    if (!PyArg_ParseTuple(args, "y*iiL:index_keys", &data, &kind, &column, &base_offset)) return NULL;
    Py_ssize_t size = kind == 0 ? 8 : 12;
    if ((kind != 0 && kind != 1) || (column != 0 && column != 1) || (kind == 1 && column != 0)) {
        PyBuffer_Release(&data);
        PyErr_SetString(PyExc_ValueError, "index_keys: kind 0 with column 0 or 1, or kind 1 with column 0");
        return NULL;
    }
    if (data.len % size) {
        PyBuffer_Release(&data);
        Py_RETURN_NONE;
    }
    Py_ssize_t n = data.len / size;
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(long long));
    if (out == NULL) {
        PyBuffer_Release(&data);
        return NULL;
    }
    long long *k = (long long *)PyBytes_AS_STRING(out);
    const unsigned char *d = (const unsigned char *)data.buf;
    Py_ssize_t at = kind == 0 ? (column == 0 ? 0 : 4) : 8;
    int relative = !(kind == 0 && column == 1);
    for (Py_ssize_t i = 0; i < n; i++) {
        long long v = be32(d + i * size + at);
        if (relative && add_overflow(base_offset, v, &k[i])) {
            Py_DECREF(out);
            PyBuffer_Release(&data);
            Py_RETURN_NONE;
        }
        if (!relative) k[i] = v;
    }
    PyBuffer_Release(&data);
    return out;
}

/* ------------------------------------------------------------------ Kafka's recovery fed a list of batches */

/* recover_items' state: one writable int64 buffer, read on entry and written back, so the Python rule
 * (kseg.ops.rebuild.recovery.Recovery) and the engine share one set of running values.  kseg.ops.rebuild.recovery
 * names the slots by the same numbers (compared at import). */
#define R_BASE_OFFSET 0       /* in: the segment's base offset */
#define R_INTERVAL 1          /* in: index.interval.bytes */
#define R_NO_TXN 2            /* in: 1 when no producer has a transaction open (a plain producer batch changes nothing) */
#define R_INDEX_MAX 3         /* in: the most .index entries (OffsetIndex.maxEntries) */
#define R_TIME_MAX 4          /* in: the most .timeindex entries */
#define R_MAX_TS 5            /* in/out: maxTimestampSoFar */
#define R_MAX_OFFSET 6        /* in/out: the offset paired with it */
#define R_LAST_INDEX_ENTRY 7  /* in/out: validBytes at the last index entry */
#define R_VALID_BYTES 8       /* in/out: validBytes */
#define R_BATCHES 9           /* in/out: batches fed */
#define R_LAST_POSITION 10    /* in/out: the last batch's position */
#define R_INDEX_N 11          /* in/out: .index entries */
#define R_INDEX_LAST 12       /* in/out: the last .index entry's offset (when R_INDEX_N > 0) */
#define R_TIME_N 13           /* in/out: .timeindex entries */
#define R_TIME_LAST_TS 14     /* in/out: TimeIndex.lastEntry: its timestamp */
#define R_TIME_LAST_OFFSET 15 /* in/out: and its offset */
#define R_INDEX_ROWS 16       /* in/out: .index rows written to ``out`` (the caller takes them and sets 0) */
#define R_TIME_ROWS 17        /* in/out: .timeindex rows written to ``out`` */
#define R_FIELDS 18

/* An int64 field of a tuple, or -1 with no exception set when it is not one (the caller hands back). */
static inline int tuple_ll(PyObject *t, Py_ssize_t i, long long *v) {
    PyObject *o = PyTuple_GET_ITEM(t, i);
    if (!PyLong_CheckExact(o)) return -1;
    int overflow = 0;
    *v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow || (*v == -1 && PyErr_Occurred())) {
        PyErr_Clear();
        return -1;
    }
    return 0;
}

/* recover_items(items, start, state, out) -> (index, full)
 *
 * Kafka's recovery (Recovery.feed, steps 2-5) for items[start:], FileRecords.scan's (position, size, header,
 * valid) of v2 batches, up to the first the Python rule has more to say about: no header (a batch object),
 * not valid, an offset not fitting the index, an index entry the rule refuses (a full index, an offset not
 * above the last), or a batch of a producer that changes producer state (a control or transactional batch,
 * or any while a transaction is open).  For each batch fed the running values of ``state`` advance and the
 * index entries it makes go to ``out``: four columns of len(out)/4 int64 -- .index offsets and positions,
 * .timeindex timestamps and offsets -- counted by R_INDEX_ROWS and R_TIME_ROWS.  Returns the index of the
 * item it stopped at (len(items) at the end) and whether it stopped because ``out`` was full. */
static PyObject *py_recover_items(PyObject *self, PyObject *args) {
    PyObject *items, *state_obj, *out_obj;
    Py_ssize_t start;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!nOO:recover_items", &PyList_Type, &items, &start, &state_obj, &out_obj))
        return NULL;
    Py_buffer sb, ob;
    if (PyObject_GetBuffer(state_obj, &sb, PyBUF_WRITABLE) < 0) return NULL;
    if (PyObject_GetBuffer(out_obj, &ob, PyBUF_WRITABLE) < 0) {
        PyBuffer_Release(&sb);
        return NULL;
    }
    if (sb.len < (Py_ssize_t)(R_FIELDS * sizeof(long long)) || sb.len % sizeof(long long) ||
        ob.len % (4 * sizeof(long long))) {
        PyBuffer_Release(&ob);
        PyBuffer_Release(&sb);
        PyErr_SetString(PyExc_ValueError, "recover_items: state and out must be int64 arrays");
        return NULL;
    }
    long long *s = (long long *)sb.buf, *out = (long long *)ob.buf;
    Py_ssize_t cap = ob.len / (Py_ssize_t)(4 * sizeof(long long));
    long long base_offset = s[R_BASE_OFFSET], interval = s[R_INTERVAL];
    int no_txn = s[R_NO_TXN] != 0;
    long long max_ts = s[R_MAX_TS], max_offset = s[R_MAX_OFFSET], last_index_entry = s[R_LAST_INDEX_ENTRY];
    long long valid_bytes = s[R_VALID_BYTES], batches = s[R_BATCHES], last_position = s[R_LAST_POSITION];
    long long index_n = s[R_INDEX_N], index_last = s[R_INDEX_LAST], time_n = s[R_TIME_N];
    long long time_last_ts = s[R_TIME_LAST_TS], time_last_offset = s[R_TIME_LAST_OFFSET];
    long long index_rows = s[R_INDEX_ROWS], time_rows = s[R_TIME_ROWS];
    if (index_rows < 0) index_rows = 0;
    if (time_rows < 0) time_rows = 0;
    Py_ssize_t n = PyList_GET_SIZE(items), i = start < 0 ? 0 : start;
    int full = 0;
    for (; i < n; i++) {
        if (index_rows >= cap || time_rows >= cap) {
            full = 1;
            break;
        }
        PyObject *item = PyList_GET_ITEM(items, i);
        if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 4) break;
        PyObject *h = PyTuple_GET_ITEM(item, 2);
        if (!PyTuple_CheckExact(h) || PyTuple_GET_SIZE(h) != H_FIELDS || PyTuple_GET_ITEM(item, 3) != Py_True) break;
        long long position, size, base, delta, batch_max_ts, pid, attrs, last;
        if (tuple_ll(item, 0, &position) || tuple_ll(item, 1, &size) || tuple_ll(h, H_BASE_OFFSET, &base) ||
            tuple_ll(h, H_LAST_OFFSET_DELTA, &delta) || tuple_ll(h, H_MAX_TIMESTAMP, &batch_max_ts) ||
            tuple_ll(h, H_PRODUCER_ID, &pid) || tuple_ll(h, H_ATTRIBUTES, &attrs))
            break;
        if (add_overflow(base, delta, &last) || last < base_offset || last - base_offset > INT32_MAX_VALUE) break;
        if (pid >= 0 && (!no_txn || (attrs & (CONTROL_FLAG | TRANSACTIONAL_FLAG)))) break;
        long long ts = max_ts, ts_offset = max_offset;
        if (batch_max_ts > ts) ts = batch_max_ts, ts_offset = last;
        int index = valid_bytes - last_index_entry > interval, timed = 0;
        if (index) {
            if (index_n >= s[R_INDEX_MAX] || (index_n > 0 && last <= index_last)) break;
            if (time_n >= s[R_TIME_MAX] - 1 || (time_n > 0 && ts_offset < time_last_offset)) break;
            timed = ts > time_last_ts;
        }
        max_ts = ts, max_offset = ts_offset;
        if (index) {
            out[index_rows] = last;
            out[cap + index_rows] = valid_bytes;
            index_rows++, index_n++, index_last = last;
            if (timed) {
                out[2 * cap + time_rows] = ts;
                out[3 * cap + time_rows] = ts_offset;
                time_rows++, time_n++, time_last_ts = ts, time_last_offset = ts_offset;
            }
            last_index_entry = valid_bytes;
        }
        valid_bytes += size;
        batches++;
        last_position = position;
    }
    s[R_MAX_TS] = max_ts, s[R_MAX_OFFSET] = max_offset, s[R_LAST_INDEX_ENTRY] = last_index_entry;
    s[R_VALID_BYTES] = valid_bytes, s[R_BATCHES] = batches, s[R_LAST_POSITION] = last_position;
    s[R_INDEX_N] = index_n, s[R_INDEX_LAST] = index_last, s[R_TIME_N] = time_n;
    s[R_TIME_LAST_TS] = time_last_ts, s[R_TIME_LAST_OFFSET] = time_last_offset;
    s[R_INDEX_ROWS] = index_rows, s[R_TIME_ROWS] = time_rows;
    PyBuffer_Release(&ob);
    PyBuffer_Release(&sb);
    return Py_BuildValue("(nO)", i, full ? Py_True : Py_False);
}

/* found_items(items, start, found_type, out) -> index
 *
 * salvage's Found of each batch (kseg.ops.salvage.found.found_v2) for items[start:], FileRecords.scan's
 * (position, size, header, valid): an instance of ``found_type`` (Found, a tuple of 13 fields) appended to
 * ``out`` for every whole v2 batch whose CRC holds, up to the first item that is not one (a batch object, a
 * CRC that fails) or whose last offset passes int64, which the Python rule takes.  Returns that item's index
 * (len(items) at the end). */
static PyObject *py_found_items(PyObject *self, PyObject *args) {
    PyObject *items, *type_obj, *out;
    Py_ssize_t start;
    (void)self;
    if (!PyArg_ParseTuple(args, "O!nO!O!:found_items", &PyList_Type, &items, &start, &PyType_Type, &type_obj,
                          &PyList_Type, &out))
        return NULL;
    PyTypeObject *type = (PyTypeObject *)type_obj;
    if (!PyType_IsSubtype(type, &PyTuple_Type) || type->tp_alloc == NULL) {
        PyErr_SetString(PyExc_TypeError, "found_items: found_type must be a tuple type");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(items), i = start < 0 ? 0 : start;
    for (; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
        if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 4) break;
        PyObject *h = PyTuple_GET_ITEM(item, 2);
        if (!PyTuple_CheckExact(h) || PyTuple_GET_SIZE(h) != H_FIELDS || PyTuple_GET_ITEM(item, 3) != Py_True) break;
        long long base, delta, attrs, last;
        if (tuple_ll(h, H_BASE_OFFSET, &base) || tuple_ll(h, H_LAST_OFFSET_DELTA, &delta) ||
            tuple_ll(h, H_ATTRIBUTES, &attrs) || add_overflow(base, delta, &last))
            break;
        PyObject *last_obj = PyLong_FromLongLong(last), *codec = PyLong_FromLong((long)(attrs & CODEC_MASK));
        PyObject *f = type->tp_alloc(type, 13);
        if (last_obj == NULL || codec == NULL || f == NULL) {
            Py_XDECREF(last_obj);
            Py_XDECREF(codec);
            Py_XDECREF(f);
            return NULL;
        }
        PyObject *fields[13] = {PyTuple_GET_ITEM(item, 0), PyTuple_GET_ITEM(item, 1), PyTuple_GET_ITEM(h, H_MAGIC),
                                PyTuple_GET_ITEM(h, H_BASE_OFFSET), last_obj, PyTuple_GET_ITEM(h, H_COUNT), codec,
                                (attrs & CONTROL_FLAG) ? Py_True : Py_False, PyTuple_GET_ITEM(h, H_PRODUCER_ID),
                                (attrs & TRANSACTIONAL_FLAG) ? Py_True : Py_False, PyTuple_GET_ITEM(h, H_CRC),
                                PyTuple_GET_ITEM(h, H_LEADER_EPOCH), h};
        for (int j = 0; j < 13; j++) {
            if (j != 4 && j != 6) Py_INCREF(fields[j]); /* last_obj and codec are new references, given away */
            PyTuple_SET_ITEM(f, j, fields[j]);
        }
        int r = PyList_Append(out, f);
        Py_DECREF(f);
        if (r < 0) return NULL;
    }
    return PyLong_FromSsize_t(i);
}

/* ------------------------------------------------------------------ module */

/* Bumped whenever a seam's signature or meaning changes; must equal kseg.engine.ABI. */
#define KSEG_ENGINE_ABI 9

static PyMethodDef methods[] = {
    {"crc32c", py_crc32c, METH_VARARGS, "crc32c(data, crc=0) -> int: CRC-32C (Castagnoli) of a buffer."},
    {"crc32c_table", py_crc32c_table, METH_VARARGS, "crc32c() by the slicing-by-8 table (the fallback), for tests."},
    {"crc_kind", py_crc_kind, METH_NOARGS, "crc_kind() -> 'sse4.2' or 'table'."},
    {"scan", py_scan, METH_VARARGS, "The fast path of FileRecords.scan (see the C source)."},
    {"decode_records", py_decode_records, METH_VARARGS, "v2_records.decode_records for well-formed records."},
    {"batch_lines", py_batch_lines, METH_VARARGS, "TextSink.batch_lines' v2 batch lines."},
    {"record_lines", py_record_lines, METH_VARARGS, "TextSink.v2_records' record lines."},
    {"dump_window", py_dump_window, METH_VARARGS, "Dumper._dump_batches over a window (see the C source)."},
    {"export_window", py_export_window, METH_VARARGS, "read_split's rows of a window as Arrow buffers (see the C source)."},
    {"verify_window", py_verify_window, METH_VARARGS, "verify-index's log pass over a window (see the C source)."},
    {"index_keys", py_index_keys, METH_VARARGS, "verify-index's index keys from an index file's entries (see the C source)."},
    {"entries_match", py_entries_match, METH_VARARGS, "verify-index's bulk check of index entries (see the C source)."},
    {"found_items", py_found_items, METH_VARARGS, "salvage's Found of each valid v2 batch of scan items (see the C source)."},
    {"recover_items", py_recover_items, METH_VARARGS, "Recovery.feed over a list of scan items (see the C source)."},
    {"find", py_find, METH_VARARGS, "bytes.find(needle, start, end) over a buffer, by memmem (see the C source)."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "kseg._engine", "kseg's optional compiled engine.", -1,
                                    methods};

PyMODINIT_FUNC PyInit__engine(void) {
    crc_init();
    zeros_table(crc_long, CRC_LONG);
    zeros_table(crc_short, CRC_SHORT);
#ifdef KSEG_HW_CRC
    __builtin_cpu_init();
    crc_hw = __builtin_cpu_supports("sse4.2") ? 1 : 0;
#endif
    PyObject *m = PyModule_Create(&module);
    /* The seams this build implements; kseg/engine.py refuses a module whose ABI differs. */
    if (m != NULL && PyModule_AddIntConstant(m, "ABI", KSEG_ENGINE_ABI) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    /* The values it shares with Python, each compared with Python's at import (kseg.engine.check). */
    if (m != NULL &&
        (PyModule_AddIntConstant(m, "FORM_SLICES", FORM_SLICES) < 0 ||
         PyModule_AddIntConstant(m, "FORM_SIZES", FORM_SIZES) < 0 ||
         PyModule_AddIntConstant(m, "FORM_SPANS", FORM_SPANS) < 0 ||
         PyModule_AddIntConstant(m, "LOG_OVERHEAD", LOG_OVERHEAD) < 0 ||
         PyModule_AddIntConstant(m, "HEADER_SIZE_UP_TO_MAGIC", HEADER_SIZE_UP_TO_MAGIC) < 0 ||
         PyModule_AddIntConstant(m, "RECORD_OVERHEAD_V0", RECORD_OVERHEAD_V0) < 0 ||
         PyModule_AddIntConstant(m, "MAGIC_OFFSET", MAGIC_OFFSET) < 0 ||
         PyModule_AddIntConstant(m, "CRC_OFFSET", CRC_OFFSET) < 0 ||
         PyModule_AddIntConstant(m, "ATTRIBUTES_OFFSET", ATTRIBUTES_OFFSET) < 0 ||
         PyModule_AddIntConstant(m, "LAST_OFFSET_DELTA_OFFSET", LAST_OFFSET_DELTA_OFFSET) < 0 ||
         PyModule_AddIntConstant(m, "RECORD_BATCH_OVERHEAD", RECORD_BATCH_OVERHEAD) < 0 ||
         PyModule_AddIntConstant(m, "BASE_OFFSET_OFFSET", BASE_OFFSET_OFFSET) < 0 ||
         PyModule_AddIntConstant(m, "LENGTH_OFFSET", LENGTH_OFFSET) < 0 ||
         PyModule_AddIntConstant(m, "PARTITION_LEADER_EPOCH_OFFSET", PARTITION_LEADER_EPOCH_OFFSET) < 0 ||
         PyModule_AddIntConstant(m, "BASE_TIMESTAMP_OFFSET", BASE_TIMESTAMP_OFFSET) < 0 ||
         PyModule_AddIntConstant(m, "MAX_TIMESTAMP_OFFSET", MAX_TIMESTAMP_OFFSET) < 0 ||
         PyModule_AddIntConstant(m, "PRODUCER_ID_OFFSET", PRODUCER_ID_OFFSET) < 0 ||
         PyModule_AddIntConstant(m, "PRODUCER_EPOCH_OFFSET", PRODUCER_EPOCH_OFFSET) < 0 ||
         PyModule_AddIntConstant(m, "BASE_SEQUENCE_OFFSET", BASE_SEQUENCE_OFFSET) < 0 ||
         PyModule_AddIntConstant(m, "RECORDS_COUNT_OFFSET", RECORDS_COUNT_OFFSET) < 0 ||
         PyModule_AddIntConstant(m, "H_BASE_OFFSET", H_BASE_OFFSET) < 0 ||
         PyModule_AddIntConstant(m, "H_LENGTH", H_LENGTH) < 0 ||
         PyModule_AddIntConstant(m, "H_LEADER_EPOCH", H_LEADER_EPOCH) < 0 ||
         PyModule_AddIntConstant(m, "H_MAGIC", H_MAGIC) < 0 || PyModule_AddIntConstant(m, "H_CRC", H_CRC) < 0 ||
         PyModule_AddIntConstant(m, "H_ATTRIBUTES", H_ATTRIBUTES) < 0 ||
         PyModule_AddIntConstant(m, "H_LAST_OFFSET_DELTA", H_LAST_OFFSET_DELTA) < 0 ||
         PyModule_AddIntConstant(m, "H_BASE_TIMESTAMP", H_BASE_TIMESTAMP) < 0 ||
         PyModule_AddIntConstant(m, "H_MAX_TIMESTAMP", H_MAX_TIMESTAMP) < 0 ||
         PyModule_AddIntConstant(m, "H_PRODUCER_ID", H_PRODUCER_ID) < 0 ||
         PyModule_AddIntConstant(m, "H_PRODUCER_EPOCH", H_PRODUCER_EPOCH) < 0 ||
         PyModule_AddIntConstant(m, "H_BASE_SEQUENCE", H_BASE_SEQUENCE) < 0 ||
         PyModule_AddIntConstant(m, "H_COUNT", H_COUNT) < 0 ||
         PyModule_AddIntConstant(m, "DELETE_HORIZON_FLAG", DELETE_HORIZON_FLAG) < 0 ||
         PyModule_AddIntConstant(m, "CODEC_MASK", CODEC_MASK) < 0 ||
         PyModule_AddIntConstant(m, "TIMESTAMP_TYPE_FLAG", TIMESTAMP_TYPE_FLAG) < 0 ||
         PyModule_AddIntConstant(m, "CONTROL_FLAG", CONTROL_FLAG) < 0 ||
         PyModule_AddIntConstant(m, "C_OFFSET", C_OFFSET) < 0 ||
         PyModule_AddIntConstant(m, "C_TIMESTAMP", C_TIMESTAMP) < 0 ||
         PyModule_AddIntConstant(m, "C_TS_VALID", C_TS_VALID) < 0 ||
         PyModule_AddIntConstant(m, "C_TS_TYPE_OFF", C_TS_TYPE_OFF) < 0 ||
         PyModule_AddIntConstant(m, "C_TS_TYPE", C_TS_TYPE) < 0 ||
         PyModule_AddIntConstant(m, "C_KEY_OFF", C_KEY_OFF) < 0 ||
         PyModule_AddIntConstant(m, "C_KEY", C_KEY) < 0 ||
         PyModule_AddIntConstant(m, "C_KEY_VALID", C_KEY_VALID) < 0 ||
         PyModule_AddIntConstant(m, "C_VALUE_OFF", C_VALUE_OFF) < 0 ||
         PyModule_AddIntConstant(m, "C_VALUE", C_VALUE) < 0 ||
         PyModule_AddIntConstant(m, "C_VALUE_VALID", C_VALUE_VALID) < 0 ||
         PyModule_AddIntConstant(m, "C_HEADERS_OFF", C_HEADERS_OFF) < 0 ||
         PyModule_AddIntConstant(m, "C_HKEY_OFF", C_HKEY_OFF) < 0 ||
         PyModule_AddIntConstant(m, "C_HKEY", C_HKEY) < 0 ||
         PyModule_AddIntConstant(m, "C_HVALUE_OFF", C_HVALUE_OFF) < 0 ||
         PyModule_AddIntConstant(m, "C_HVALUE", C_HVALUE) < 0 ||
         PyModule_AddIntConstant(m, "C_HVALUE_VALID", C_HVALUE_VALID) < 0 ||
         PyModule_AddIntConstant(m, "C_SEQUENCE", C_SEQUENCE) < 0 ||
         PyModule_AddIntConstant(m, "C_POSITION", C_POSITION) < 0 ||
         PyModule_AddIntConstant(m, "C_BASE_OFFSET", C_BASE_OFFSET) < 0 ||
         PyModule_AddIntConstant(m, "C_LAST_OFFSET", C_LAST_OFFSET) < 0 ||
         PyModule_AddIntConstant(m, "C_PRODUCER_ID", C_PRODUCER_ID) < 0 ||
         PyModule_AddIntConstant(m, "C_PRODUCER_EPOCH", C_PRODUCER_EPOCH) < 0 ||
         PyModule_AddIntConstant(m, "C_BASE_SEQUENCE", C_BASE_SEQUENCE) < 0 ||
         PyModule_AddIntConstant(m, "C_LEADER_EPOCH", C_LEADER_EPOCH) < 0 ||
         PyModule_AddIntConstant(m, "C_TRANSACTIONAL", C_TRANSACTIONAL) < 0 ||
         PyModule_AddIntConstant(m, "C_BUFFERS", C_BUFFERS) < 0 ||
         PyModule_AddIntConstant(m, "TRANSACTIONAL_FLAG", TRANSACTIONAL_FLAG) < 0 ||
         PyModule_AddIntConstant(m, "WINDOW_SHALLOW", WINDOW_SHALLOW) < 0 ||
         PyModule_AddIntConstant(m, "WINDOW_SIZES", WINDOW_SIZES) < 0 ||
         PyModule_AddIntConstant(m, "WINDOW_STRINGS", WINDOW_STRINGS) < 0 ||
         PyModule_AddIntConstant(m, "V_BASE_OFFSET", V_BASE_OFFSET) < 0 ||
         PyModule_AddIntConstant(m, "V_LIMIT", V_LIMIT) < 0 ||
         PyModule_AddIntConstant(m, "V_EPOCHS", V_EPOCHS) < 0 ||
         PyModule_AddIntConstant(m, "V_EPOCH_LO", V_EPOCH_LO) < 0 ||
         PyModule_AddIntConstant(m, "V_EPOCH_HI", V_EPOCH_HI) < 0 ||
         PyModule_AddIntConstant(m, "V_EPOCH_EXPECTED", V_EPOCH_EXPECTED) < 0 ||
         PyModule_AddIntConstant(m, "V_EPOCH_FROM", V_EPOCH_FROM) < 0 ||
         PyModule_AddIntConstant(m, "V_EVERY", V_EVERY) < 0 ||
         PyModule_AddIntConstant(m, "V_HAS_MAX", V_HAS_MAX) < 0 ||
         PyModule_AddIntConstant(m, "V_MAX_LAST", V_MAX_LAST) < 0 ||
         PyModule_AddIntConstant(m, "V_RUNNING", V_RUNNING) < 0 ||
         PyModule_AddIntConstant(m, "V_BATCHES", V_BATCHES) < 0 ||
         PyModule_AddIntConstant(m, "V_VALID_END", V_VALID_END) < 0 ||
         PyModule_AddIntConstant(m, "V_RECORDED", V_RECORDED) < 0 ||
         PyModule_AddIntConstant(m, "V_AT", V_AT) < 0 ||
         PyModule_AddIntConstant(m, "V_MORE", V_MORE) < 0 ||
         PyModule_AddIntConstant(m, "V_FIELDS", V_FIELDS) < 0 ||
         PyModule_AddIntConstant(m, "VERIFY_PYTHON", VERIFY_PYTHON) < 0 ||
         PyModule_AddIntConstant(m, "VERIFY_FULL", VERIFY_FULL) < 0 ||
         PyModule_AddIntConstant(m, "VERIFY_KEYS", VERIFY_KEYS) < 0 ||
         PyModule_AddIntConstant(m, "R_BASE_OFFSET", R_BASE_OFFSET) < 0 ||
         PyModule_AddIntConstant(m, "R_INTERVAL", R_INTERVAL) < 0 ||
         PyModule_AddIntConstant(m, "R_NO_TXN", R_NO_TXN) < 0 ||
         PyModule_AddIntConstant(m, "R_INDEX_MAX", R_INDEX_MAX) < 0 ||
         PyModule_AddIntConstant(m, "R_TIME_MAX", R_TIME_MAX) < 0 ||
         PyModule_AddIntConstant(m, "R_MAX_TS", R_MAX_TS) < 0 ||
         PyModule_AddIntConstant(m, "R_MAX_OFFSET", R_MAX_OFFSET) < 0 ||
         PyModule_AddIntConstant(m, "R_LAST_INDEX_ENTRY", R_LAST_INDEX_ENTRY) < 0 ||
         PyModule_AddIntConstant(m, "R_VALID_BYTES", R_VALID_BYTES) < 0 ||
         PyModule_AddIntConstant(m, "R_BATCHES", R_BATCHES) < 0 ||
         PyModule_AddIntConstant(m, "R_LAST_POSITION", R_LAST_POSITION) < 0 ||
         PyModule_AddIntConstant(m, "R_INDEX_N", R_INDEX_N) < 0 ||
         PyModule_AddIntConstant(m, "R_INDEX_LAST", R_INDEX_LAST) < 0 ||
         PyModule_AddIntConstant(m, "R_TIME_N", R_TIME_N) < 0 ||
         PyModule_AddIntConstant(m, "R_TIME_LAST_TS", R_TIME_LAST_TS) < 0 ||
         PyModule_AddIntConstant(m, "R_TIME_LAST_OFFSET", R_TIME_LAST_OFFSET) < 0 ||
         PyModule_AddIntConstant(m, "R_INDEX_ROWS", R_INDEX_ROWS) < 0 ||
         PyModule_AddIntConstant(m, "R_TIME_ROWS", R_TIME_ROWS) < 0 ||
         PyModule_AddIntConstant(m, "R_FIELDS", R_FIELDS) < 0 ||
         PyModule_AddIntConstant(m, "NO_SEQUENCE", NO_SEQUENCE) < 0 ||
         PyModule_AddIntConstant(m, "INT32_MAX", (long)INT32_MAX_VALUE) < 0 ||
         PyModule_AddIntConstant(m, "VARINT_MAX_BYTES", VARINT_MAX_BYTES) < 0 ||
         PyModule_AddIntConstant(m, "VARLONG_MAX_BYTES", VARLONG_MAX_BYTES) < 0 ||
         PyModule_AddStringConstant(m, "HEADER_FORMAT", HEADER_FORMAT) < 0)) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
