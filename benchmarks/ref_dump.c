/*
 * The machine's limit for `kseg dump` (issue 34): a single-threaded C loop doing the same work as
 * `kseg dump [--deep-iteration | --print-data-log] --files FILE` on v2 batches, and nothing more: uncompressed
 * batches always; lz4 and zstd ones when built with -DREF_CODECS (and -llz4 -lzstd; run.py does so when
 * `cc` can link them).
 *
 *   ref_dump MODE FILE...  MODE: shallow, deep or print; the lines go to stdout
 *                          MODE crc: read and CRC-32C only (the floor of verify-index's log pass); prints
 *                          the count of batches whose CRC does not match
 *
 * The file is read in 8 MiB pieces (read(2) into one reused buffer, a batch cut by a piece's end moved to
 * its front); each batch's CRC-32C is computed (SSE4.2's crc32 instruction where the CPU has it, a
 * table otherwise); in the deep modes each record is decoded (varints, headers walked) and its line
 * written; the text is that of Kafka's tool for batches without producer, headers or invalid UTF-8
 * (the benchmark inputs), built by hand into a 64 KiB buffer written with write(2), after the same two
 * lines kseg starts a file with ("Dumping FILE", "Log starting offset: N").  A compressed batch's records
 * are decompressed into one reused buffer (grown, never shrunk): zstd by ZSTD_decompressStream over the
 * frame, lz4 by walking the frame Kafka writes (KafkaLZ4BlockOutputStream: the LZ4 frame header, then
 * blocks of a 4-byte little-endian size, its top bit marking a stored block, up to a zero end mark) and
 * LZ4_decompress_safe on each block.  No checks past what keeps the loop in bounds: it is a floor to
 * measure against, not a reader of untrusted input.
 *
 * Built by benchmarks/run.py (cc -O2, with -DREF_CODECS -llz4 -lzstd where they link) into
 * benchmarks/data/; never part of kseg.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef REF_CODECS
#include <lz4.h>
#include <zstd.h>
#endif

#define PIECE (8 << 20)

static uint32_t table[256];

static void crc_init(void) {
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        table[n] = c;
    }
}

#if defined(__x86_64__)
__attribute__((target("sse4.2"))) static uint32_t crc_hw(const unsigned char *p, size_t n) {
    uint64_t c = 0xFFFFFFFFu;
    while (n >= 8) {
        uint64_t v;
        memcpy(&v, p, 8);
        c = __builtin_ia32_crc32di(c, v);
        p += 8;
        n -= 8;
    }
    while (n--) c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
    return ~(uint32_t)c;
}
#endif

static int hw;

static uint32_t crc32c(const unsigned char *p, size_t n) {
#if defined(__x86_64__)
    if (hw) return crc_hw(p, n);
#endif
    uint32_t c = 0xFFFFFFFFu;
    while (n--) c = table[(c ^ *p++) & 0xFF] ^ (c >> 8);
    return ~c;
}

static char out[1 << 16];
static size_t on;

static void flush_out(void) {
    size_t k = 0;
    while (k < on) {
        ssize_t w = write(1, out + k, on - k);
        if (w <= 0) exit(1);
        k += (size_t)w;
    }
    on = 0;
}

static inline void room(size_t n) {
    if (on + n > sizeof out) flush_out();
}

static inline void put(const char *s, size_t n) {
    if (n > sizeof out) {
        flush_out();
        (void)!write(1, s, n);
        return;
    }
    room(n);
    memcpy(out + on, s, n);
    on += n;
}

#define LIT(s) put((s), sizeof(s) - 1)

static inline void num(long long v) {
    char tmp[24];
    int i = 24;
    unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;
    do {
        tmp[--i] = (char)('0' + u % 10);
        u /= 10;
    } while (u);
    if (v < 0) tmp[--i] = '-';
    put(tmp + i, 24 - i);
}

static inline int64_t be64(const unsigned char *p) {
    uint64_t v = 0;
    for (int k = 0; k < 8; k++) v = (v << 8) | p[k];
    return (int64_t)v;
}
static inline int32_t be32(const unsigned char *p) {
    return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]);
}
static inline int16_t be16(const unsigned char *p) { return (int16_t)(((uint16_t)p[0] << 8) | p[1]); }

static inline int64_t varint(const unsigned char **pp) {
    const unsigned char *p = *pp;
    uint64_t raw = 0;
    int shift = 0;
    for (;;) {
        unsigned char c = *p++;
        raw |= (uint64_t)(c & 0x7F) << shift;
        if (c < 0x80) break;
        shift += 7;
    }
    *pp = p;
    return (int64_t)((raw >> 1) ^ (~(raw & 1) + 1));
}

#ifdef REF_CODECS
static unsigned char *plain; /* the decompressed records of the current batch, reused */
static size_t plain_cap;

static void grow(size_t need) {
    if (need <= plain_cap) return;
    size_t cap = plain_cap ? plain_cap : 1 << 20;
    while (cap < need) cap *= 2;
    plain = realloc(plain, cap);
    if (!plain) exit(3);
    plain_cap = cap;
}

static inline uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}

/* Kafka's lz4 frame: magic, FLG, BD, [content size], header checksum; blocks; end mark; [checksum]. */
static size_t lz4_frame(const unsigned char *p, size_t n) {
    const unsigned char *end = p + n;
    static const size_t max_block[8] = {0, 0, 0, 0, 64 << 10, 256 << 10, 1 << 20, 4 << 20};
    int flg = p[4];
    size_t most = max_block[(p[5] >> 4) & 7], got = 0;
    p += 7 + ((flg & 0x08) ? 8 : 0);
    if (!most) exit(3);
    while (p + 4 <= end) {
        uint32_t word = le32(p);
        p += 4;
        if (word == 0) break;
        size_t len = word & 0x7FFFFFFFu;
        grow(got + most);
        if (word & 0x80000000u) {
            memcpy(plain + got, p, len);
            got += len;
        } else {
            int r = LZ4_decompress_safe((const char *)p, (char *)plain + got, (int)len, (int)most);
            if (r < 0) exit(3);
            got += (size_t)r;
        }
        p += len + ((flg & 0x10) ? 4 : 0);
    }
    return got;
}

static size_t zstd_frame(const unsigned char *p, size_t n) {
    static ZSTD_DCtx *dctx;
    if (!dctx) dctx = ZSTD_createDCtx();
    ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
    grow(n * 4);
    ZSTD_inBuffer in = {p, n, 0};
    ZSTD_outBuffer out = {plain, plain_cap, 0};
    for (;;) {
        size_t r = ZSTD_decompressStream(dctx, &out, &in);
        if (ZSTD_isError(r)) exit(3);
        if (r == 0 || (in.pos == in.size && out.pos < out.size)) break;
        if (out.pos == out.size) {
            grow(plain_cap * 2);
            out.dst = plain;
            out.size = plain_cap;
        }
    }
    return out.pos;
}

/* The records of a compressed batch (codec 3 lz4 or 4 zstd), decompressed into `plain`. */
static const unsigned char *inflate(int codec, const unsigned char *p, size_t n) {
    if (codec == 3) lz4_frame(p, n);
    else if (codec == 4) zstd_frame(p, n);
    else { /* gzip, snappy: not in the benchmark inputs */
        fprintf(stderr, "ref_dump: codec %d is not decompressed here\n", codec);
        exit(3);
    }
    return plain;
}
#endif

static long long invalid; /* mode crc: batches whose CRC does not match (printed at the end) */

static void batch(const unsigned char *p, long long pos, long long total, int mode) {
    long long base = be64(p), ts_base = be64(p + 27), ts_max = be64(p + 35), pid = be64(p + 43);
    int attrs = be16(p + 21), delta = be32(p + 23), count = be32(p + 57), seq = be32(p + 53);
    uint32_t crc = (uint32_t)be32(p + 17);
    int valid = crc32c(p + 21, (size_t)(total - 21)) == crc;
    if (mode == 3) { /* read + CRC only: the floor of verify-index's log pass */
        invalid += !valid;
        return;
    }
    const char *ts_name = (attrs & 8) ? "LogAppendTime" : "CreateTime";
    LIT("baseOffset: ");
    num(base);
    LIT(" lastOffset: ");
    num(base + delta);
    LIT(" count: ");
    num(count);
    LIT(" baseSequence: ");
    num(seq);
    LIT(" lastSequence: ");
    num(seq < 0 ? -1 : seq + delta);
    LIT(" producerId: ");
    num(pid);
    LIT(" producerEpoch: ");
    num(be16(p + 51));
    LIT(" partitionLeaderEpoch: ");
    num(be32(p + 12));
    LIT(" isTransactional: ");
    if (attrs & 0x10) LIT("true"); else LIT("false");
    LIT(" isControl: ");
    if (attrs & 0x20) LIT("true"); else LIT("false");
    LIT(" deleteHorizonMs: OptionalLong.empty position: ");
    num(pos);
    LIT(" ");
    put(ts_name, strlen(ts_name));
    LIT(": ");
    num(ts_max);
    LIT(" size: ");
    num(total);
    static const char *const codecs[] = {"none", "gzip", "snappy", "lz4", "zstd", "none", "none", "none"};
    LIT(" magic: 2 compresscodec: ");
    put(codecs[attrs & 7], strlen(codecs[attrs & 7]));
    LIT(" crc: ");
    num(crc);
    if (valid) LIT(" isvalid: true\n"); else LIT(" isvalid: false\n");
    if (mode == 0) return;
    const unsigned char *q = p + 61;
    if (attrs & 7) {
#ifdef REF_CODECS
        q = inflate(attrs & 7, q, (size_t)(total - 61));
#else
        fprintf(stderr, "ref_dump: a compressed batch at %lld: built without -DREF_CODECS\n", pos);
        exit(3);
#endif
    }
    for (int r = 0; r < count; r++) {
        int64_t size = varint(&q);
        const unsigned char *next = q + size;
        q++; /* attributes */
        int64_t tsd = varint(&q), od = varint(&q), ks = varint(&q);
        const unsigned char *k = q;
        if (ks > 0) q += ks;
        int64_t vs = varint(&q);
        const unsigned char *v = q;
        if (vs > 0) q += vs;
        int64_t hc = varint(&q);
        for (int64_t h = 0; h < hc; h++) {
            int64_t hk = varint(&q);
            q += hk;
            int64_t hv = varint(&q);
            if (hv > 0) q += hv;
        }
        LIT("| offset: ");
        num(base + od);
        LIT(" ");
        put(ts_name, strlen(ts_name));
        LIT(": ");
        num((attrs & 8) ? ts_max : ts_base + tsd);
        LIT(" keySize: ");
        num(ks);
        LIT(" valueSize: ");
        num(vs);
        LIT(" sequence: ");
        num(seq < 0 ? -1 : seq + od);
        LIT(" headerKeys: []");
        if (mode == 2) {
            if (ks >= 0) {
                LIT(" key: ");
                put((const char *)k, (size_t)ks);
            }
            if (vs >= 0) {
                LIT(" payload: ");
                put((const char *)v, (size_t)vs);
            }
        }
        LIT("\n");
        q = next;
    }
}

/* One file, read in PIECE-sized pieces, each batch to batch(). */
static int file(const char *path, unsigned char *buf, int mode) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        perror(path);
        return 2;
    }
    if (mode != 3) {
        const char *name = strrchr(path, '/');
        name = name ? name + 1 : path;
        LIT("Dumping ");
        put(path, strlen(path));
        LIT("\nLog starting offset: ");
        num(strtoll(name, NULL, 10));
        LIT("\n");
    }
    size_t have = 0;
    long long pos = 0;
    int eof = 0;
    while (!eof || have >= 17) {
        if (!eof) {
            ssize_t n = read(fd, buf + have, PIECE - have);
            if (n < 0) return 2;
            if (n == 0) eof = 1;
            have += (size_t)n;
        }
        size_t i = 0;
        while (have - i >= 17) {
            long long total = 12 + (long long)be32(buf + i + 8);
            if ((long long)(have - i) < total) break;
            batch(buf + i, pos, total, mode);
            pos += total;
            i += (size_t)total;
        }
        memmove(buf, buf + i, have - i);
        have -= i;
        if (eof) break;
    }
    close(fd);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: ref_dump shallow|deep|print|crc FILE...\n");
        return 2;
    }
    int mode = strcmp(argv[1], "crc") == 0     ? 3
               : strcmp(argv[1], "print") == 0 ? 2
               : strcmp(argv[1], "deep") == 0  ? 1
                                               : 0;
    crc_init();
#if defined(__x86_64__)
    __builtin_cpu_init();
    hw = __builtin_cpu_supports("sse4.2");
#endif
    unsigned char *buf = malloc(PIECE);
    for (int k = 2; k < argc; k++)
        if (file(argv[k], buf, mode)) return 2;
    flush_out();
    if (mode == 3) printf("%lld invalid\n", invalid);
    return 0;
}
