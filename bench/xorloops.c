/* Plain C baselines for bench/compare.sh, deliberately free of diskscope code:
 *   xorloops pread FILE THREADS BLOCK   pread into page-aligned buffers + XOR, THREADS threads
 *   xorloops mmap  FILE THREADS         mmap + XOR, THREADS threads
 *   xorloops ram   BYTES THREADS        XOR over an anonymous buffer (the RAM ceiling; chunks
 *                                       handed out dynamically, like fast)
 *   xorloops read  FILE BLOCK COUNT     COUNT plain read(2) calls of BLOCK bytes + XOR, no timing
 *   xorloops resident FILE              percent of FILE in the page cache (mincore)
 *   xorloops evict FILE                 fsync + POSIX_FADV_DONTNEED (drop FILE from the cache)
 *   xorloops hugewarm FILE              read FILE into the cache through an MADV_HUGEPAGE mapping
 *                                       (2 MiB folios where the range is not cached yet)
 *   xorloops pieces PID                 the physical layout of PID's I/O buffers (root): in its
 *                                       largest anonymous read-write mapping of 16-256 MiB whose
 *                                       pages are all present, how many physically contiguous
 *                                       pieces each 1 MiB slot from the mapping's start is made
 *                                       of; prints "MEAN SPLIT SLOTS" (SPLIT: slots in more than
 *                                       254 pieces, a virtio disk's max_segments), exit 1 if none
 * Prints the XOR (4-byte little-endian words, zero-padded tail) on stdout and
 * "SECONDS GiB/s" on stderr (for ram: time of the XOR pass only, after filling). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* XOR of n bytes counted from offset 0 (partial tail zero-padded). Four 32-byte accumulators
 * (GCC vector extensions), 128 bytes per iteration. */
typedef uint64_t v4u64 __attribute__((vector_size(32)));
static uint32_t xor_bytes(const unsigned char *p, size_t n) {
    v4u64 a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
    size_t i = 0;
    for (; i + 128 <= n; i += 128) {
        v4u64 w0, w1, w2, w3;
        memcpy(&w0, p + i, 32);
        memcpy(&w1, p + i + 32, 32);
        memcpy(&w2, p + i + 64, 32);
        memcpy(&w3, p + i + 96, 32);
        a0 ^= w0; a1 ^= w1; a2 ^= w2; a3 ^= w3;
    }
    v4u64 a = a0 ^ a1 ^ a2 ^ a3;
    uint64_t wide = a[0] ^ a[1] ^ a[2] ^ a[3];
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        wide ^= w;
    }
    uint32_t x = (uint32_t)wide ^ (uint32_t)(wide >> 32);
    for (; i + 4 <= n; i += 4) {
        uint32_t w;
        memcpy(&w, p + i, 4);
        x ^= w;
    }
    if (i < n) {
        unsigned char pad[4] = {0};
        memcpy(pad, p + i, n - i);
        uint32_t w;
        memcpy(&w, pad, 4);
        x ^= w;
    }
    return x;
}

static uint32_t rotl_off(uint32_t x, uint64_t off) {
    unsigned r = 8 * (off % 4);
    return r ? (x << r) | (x >> (32 - r)) : x;
}

struct job {
    int fd;
    const unsigned char *base;
    uint64_t start, end, block;
    uint32_t x;
};

static void *pread_worker(void *arg) {
    struct job *j = arg;
    unsigned char *buf;
    if (posix_memalign((void **)&buf, 4096, j->block)) { perror("posix_memalign"); exit(1); }
    uint32_t x = 0;
    for (uint64_t off = j->start; off < j->end;) {
        uint64_t want = j->end - off < j->block ? j->end - off : j->block;
        ssize_t n = pread(j->fd, buf, want, off);
        if (n < 0) { perror("pread"); exit(1); }
        if (n == 0) break;
        x ^= rotl_off(xor_bytes(buf, n), off);
        off += n;
    }
    j->x = x;
    free(buf);
    return NULL;
}

static void *mmap_worker(void *arg) {
    struct job *j = arg;
    j->x = rotl_off(xor_bytes(j->base + j->start, j->end - j->start), j->start);
    return NULL;
}

/* The RAM ceiling takes 8 MiB chunks from a shared counter (as `fast` does), so a thread slowed
 * by another process does not leave the other core idle at the end: the best case, not a plain
 * loop. */
static uint64_t ram_next, ram_size;
static void *ram_worker(void *arg) {
    struct job *j = arg;
    const uint64_t chunk = 8u << 20;
    uint32_t x = 0;
    for (;;) {
        uint64_t off = __atomic_fetch_add(&ram_next, chunk, __ATOMIC_RELAXED);
        if (off >= ram_size) break;
        uint64_t len = ram_size - off < chunk ? ram_size - off : chunk;
        x ^= rotl_off(xor_bytes(j->base + off, len), off);
    }
    j->x = x;
    return NULL;
}

static uint32_t run_threads(void *(*fn)(void *), int fd, const unsigned char *base,
                            uint64_t size, int threads, uint64_t block) {
    pthread_t t[64];
    struct job jobs[64];
    uint64_t unit = 2u << 20, units = (size + unit - 1) / unit;
    for (int i = 0; i < threads; i++) {
        uint64_t s = units * i / threads * unit, e = units * (i + 1) / threads * unit;
        jobs[i] = (struct job){fd, base, s < size ? s : size, e < size ? e : size, block, 0};
        pthread_create(&t[i], NULL, fn, &jobs[i]);
    }
    uint32_t x = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        x ^= jobs[i].x;
    }
    return x;
}

static void report(uint32_t x, double secs, uint64_t bytes) {
    printf("%08x\n", x);
    fprintf(stderr, "%.6f s %.2f GiB/s\n", secs, bytes / secs / (1u << 30));
}

/* See the header: the O_DIRECT buffers' layout, read from outside (bench/peer.sh samples fio's
 * and diskscope's alike while they run). */
static int pieces(const char *pid) {
    char path[64];
    snprintf(path, sizeof path, "/proc/%s/maps", pid);
    FILE *maps = fopen(path, "r");
    if (!maps) return 1;
    snprintf(path, sizeof path, "/proc/%s/pagemap", pid);
    int pm = open(path, O_RDONLY);
    if (pm < 0) { fclose(maps); return 1; }
    char line[512];
    unsigned long best_a = 0, best_b = 0;
    while (fgets(line, sizeof line, maps)) {
        unsigned long a, b, off, inode;
        char perms[8], dev[16];
        int used = 0;
        if (sscanf(line, "%lx-%lx %7s %lx %15s %lu %n", &a, &b, perms, &off, dev, &inode, &used) < 6) continue;
        if (strcmp(perms, "rw-p") || inode || line[used] != '\0') continue;
        unsigned long len = b - a;
        if (len < (16ul << 20) || len > (256ul << 20) || len <= best_b - best_a) continue;
        int all = 1;
        for (unsigned long p = a; p < b && all; p += 4096) {
            uint64_t e;
            all = pread(pm, &e, 8, p / 4096 * 8) == 8 && (e >> 63) && (e & ((1ull << 55) - 1));
        }
        if (all) { best_a = a; best_b = b; }
    }
    fclose(maps);
    if (!best_b) { close(pm); return 1; }
    unsigned long slots = (best_b - best_a) >> 20, total = 0, split = 0;
    for (unsigned long s = 0; s < slots; s++) {
        uint64_t prev = 0, n = 0;
        for (unsigned long i = 0; i < 256; i++) {
            uint64_t e;
            if (pread(pm, &e, 8, (best_a / 4096 + s * 256 + i) * 8) != 8) { close(pm); return 1; }
            uint64_t pfn = e & ((1ull << 55) - 1);
            n += i == 0 || pfn != prev + 1;
            prev = pfn;
        }
        total += n;
        split += n > 254;
    }
    close(pm);
    printf("%.1f %lu %lu\n", slots ? (double)total / slots : 0.0, split, slots);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && !strcmp(argv[1], "pieces")) return pieces(argv[2]);
    if (argc < 3 || (argc < 4 && strcmp(argv[1], "resident") && strcmp(argv[1], "evict") && strcmp(argv[1], "hugewarm"))) {
        fprintf(stderr, "usage: xorloops pread FILE THREADS BLOCK | mmap FILE THREADS | ram BYTES THREADS | read FILE BLOCK COUNT [noxor] | resident FILE | evict FILE | hugewarm FILE | pieces PID\n");
        return 2;
    }
    const char *mode = argv[1];
    if (!strcmp(mode, "ram")) {
        uint64_t size = strtoull(argv[2], NULL, 10);
        int threads = atoi(argv[3]);
        unsigned char *buf = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (buf == MAP_FAILED) { perror("mmap"); return 1; }
        madvise(buf, size, MADV_HUGEPAGE);
        for (uint64_t i = 0; i < size; i += 4096) buf[i] = (unsigned char)(i >> 12);
        ram_size = size;
        double t0 = now_s();
        uint32_t x = run_threads(ram_worker, -1, buf, size, threads, 0);
        report(x, now_s() - t0, size);
        return 0;
    }
    int fd = open(argv[2], O_RDONLY);
    if (fd < 0) { perror(argv[2]); return 1; }
    struct stat st;
    fstat(fd, &st);
    uint64_t size = st.st_size;
    if (!strcmp(mode, "evict")) {
        fsync(fd);
        return posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED) != 0;
    }
    if (!strcmp(mode, "hugewarm")) {
        if (!size) return 0;
        unsigned char *m = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) { perror("mmap"); return 1; }
        madvise(m, size, MADV_HUGEPAGE);
        /* Touch every page from this CPU, not only map it: in a VM the first CPU access to a
         * page the host has just filled can cost a second-level (EPT) fault, and that cost
         * belongs to warming, not to whichever contender happens to run first. */
        volatile unsigned char sink = 0;
        for (uint64_t i = 0; i < size; i += 4096) sink ^= m[i];
        return 0;
    }
    if (!strcmp(mode, "resident")) {
        uint64_t pages = (size + 4095) / 4096, res = 0, chunk = 1u << 30;
        unsigned char *vec = malloc(chunk / 4096);
        for (uint64_t off = 0; off < size; off += chunk) {
            uint64_t len = size - off < chunk ? size - off : chunk;
            void *m = mmap(NULL, len, PROT_READ, MAP_SHARED, fd, off);
            if (m == MAP_FAILED || mincore(m, len, vec)) { perror("mincore"); return 1; }
            for (uint64_t i = 0; i < (len + 4095) / 4096; i++) res += vec[i] & 1;
            munmap(m, len);
        }
        printf("%.1f\n", pages ? 100.0 * res / pages : 100.0);
        return 0;
    }
    if (!strcmp(mode, "read")) {
        if (argc < 5) return 2;
        size_t block = strtoull(argv[3], NULL, 10);
        uint64_t count = strtoull(argv[4], NULL, 10);
        /* noxor: the read(2) alone, as fio and `run --checksum none` do it. */
        int xor = !(argc > 5 && !strcmp(argv[5], "noxor"));
        unsigned char *buf;
        if (posix_memalign((void **)&buf, 4096, block)) return 1;
        uint64_t total = 0;
        uint32_t x = 0;
        double t0 = now_s();
        for (uint64_t i = 0; i < count; i++) {
            ssize_t n = read(fd, buf, block);
            if (n <= 0) break;
            if (xor) x ^= rotl_off(xor_bytes(buf, n), total);
            total += n;
        }
        double secs = now_s() - t0;
        printf("%08x\n", x);
        fprintf(stderr, "%.6f s %.1f ns/call\n", secs, secs * 1e9 / count);
        return 0;
    }
    int threads = atoi(argv[3]);
    double t0 = now_s();
    uint32_t x;
    if (!strcmp(mode, "pread")) {
        uint64_t block = argc > 4 ? strtoull(argv[4], NULL, 10) : (1u << 20);
        x = run_threads(pread_worker, fd, NULL, size, threads, block);
    } else if (!strcmp(mode, "mmap")) {
        const unsigned char *base = size ? mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0) : NULL;
        if (base == MAP_FAILED) { perror("mmap"); return 1; }
        x = run_threads(mmap_worker, fd, base, size, threads, 0);
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    report(x, now_s() - t0, size);
    return 0;
}
