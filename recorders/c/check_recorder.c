/* check_recorder.c: drives aabb_recorder.h through the cases the Rust test
 * crates/aabb-recorder/tests/c_recorder.rs checks against the decoded stream.
 *
 *     check_recorder rejects FILE   bad boxes (NaN, min > max, twice, a static id, outside a
 *                                   step) left out; prints the counts
 *     check_recorder drops PORT     400 steps of 2,000 moving boxes to a debugger that does
 *                                   not read at first, through a 200 kB buffer; prints each
 *                                   step dropped
 *     check_recorder exact PORT     the same with options.exact, 200 steps (8 MB, more than
 *                                   the kernel buffers): nothing dropped
 *     check_recorder parts FILE     the engine's broad phase (fat boxes, pairs, tree,
 *                                   timings) over 3 steps, with bad parts left out; prints
 *                                   the counts
 *     check_recorder bench N STEPS  N boxes all moving, same order, to /dev/null; prints the
 *                                   nanoseconds a box on the engine's side
 *     check_recorder fifo DIR       FIFOs made in DIR: with no reader (an error at once), a
 *                                   reader that stops reading (close within the timeout, the
 *                                   steps not delivered counted dropped), a reader that exits
 *                                   (no SIGPIPE: the loss is counted and said); and
 *                                   /dev/full (a full disk)
 *     check_recorder refused PORT FILE [BUFFER]
 *                                   connect_or_file to a debugger that refuses the stream
 *                                   after 4 steps: the stream goes to FILE (replayed from
 *                                   its start, or with BUFFER bytes too few to replay it,
 *                                   from the next step)
 *     check_recorder fast PORT FILE 70 steps at once to a debugger that refuses before
 *                                   reading anything: all of them in FILE
 */
#define AABB_RECORDER_IMPLEMENTATION
#include "aabb_recorder.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void box2(aabb_rec *rec, uint32_t id, float x0, float y0, float x1, float y1) {
    float min[2], max[2];
    min[0] = x0;
    min[1] = y0;
    max[0] = x1;
    max[1] = y1;
    aabb_rec_add_box(rec, id, min, max);
}

static void print_stats(const char *what, const struct aabb_rec_stats *st) {
    printf("%s: steps %lu sent %lu dropped %lu rejected %lu error \"%s\" last \"%s\"\n", what,
           (unsigned long)st->steps, (unsigned long)st->steps_sent,
           (unsigned long)st->steps_dropped, (unsigned long)st->boxes_rejected, st->error,
           st->last_rejection);
}

static int rejects(const char *path) {
    aabb_rec_hello hello = {"check rejects", "m", 2, 0.5f};
    aabb_rec *rec = aabb_rec_open_file(path, &hello);
    struct aabb_rec_stats st;
    float a[2] = {0.0f, 0.0f}, b[2] = {1.0f, 1.0f}, c[2] = {2.0f, 1.0f}, bad[2] = {3.0f, 0.0f};
    int t;
    if (!rec) {
        fprintf(stderr, "cannot write %s\n", path);
        return 1;
    }
    box2(rec, 1, 0.0f, 0.0f, 1.0f, 1.0f);  /* outside a step */
    aabb_rec_static_box(rec, 50, a, b);
    aabb_rec_static_box(rec, 50, a, c);    /* twice */
    aabb_rec_static_box(rec, 52, bad, b);  /* min > max */
    for (t = 0; t < 6; t++) {
        float x = (float)t;
        uint32_t id;
        static const uint32_t order[6] = {4, 3, 3, 50, 2, 1};
        int k;
        aabb_rec_begin_step(rec);
        for (id = 1; id <= 4; id++) box2(rec, id, x, 0.0f, x + 1.0f, 1.0f);
        box2(rec, 2, 9.0f, 9.0f, 9.5f, 9.5f);          /* twice */
        box2(rec, 5, 0.0f / 0.0f, 0.0f, 1.0f, 1.0f);   /* NaN */
        box2(rec, 6, 0.0f, 0.0f, 1.0f / 0.0f, 1.0f);   /* infinite */
        box2(rec, 7, 2.0f, 0.0f, 1.0f, 1.0f);          /* min > max */
        box2(rec, 50, 0.0f, 0.0f, 1.0f, 1.0f);         /* a static box's id */
        aabb_rec_end_step(rec);
        /* Reversed, with 3 twice and a static id. */
        aabb_rec_begin_step(rec);
        for (k = 0; k < 6; k++) box2(rec, order[k], x, 1.0f, x + 1.0f, 2.0f);
        aabb_rec_end_step(rec);
    }
    if (aabb_rec_end_step(rec) != -1) printf("end_step without a step did not return -1\n");
    aabb_rec_close(rec, &st);
    print_stats("rejects", &st);
    return 0;
}

static void fat2(aabb_rec *rec, uint32_t id, float x0, float y0, float x1, float y1) {
    float min[2], max[2];
    min[0] = x0;
    min[1] = y0;
    max[0] = x1;
    max[1] = y1;
    aabb_rec_fat_box(rec, id, min, max);
}

static void node2(aabb_rec *rec, uint32_t id, uint32_t parent, uint32_t c1, uint32_t c2,
                  int leaf, uint32_t height, float x0, float y0, float x1, float y1) {
    aabb_rec_node n;
    memset(&n, 0, sizeof n);
    n.id = id;
    n.parent = parent;
    n.child1 = c1;
    n.child2 = c2;
    n.leaf = leaf;
    n.enlarged = !leaf;
    n.height = height;
    n.min[0] = x0;
    n.min[1] = y0;
    n.max[0] = x1;
    n.max[1] = y1;
    aabb_rec_tree_node(rec, &n);
}

/* The tree and the timings of the parts case (steps 0 and 1). */
static void tree_and_timings(aabb_rec *rec) {
    aabb_rec_tree_root(rec, 100);
    aabb_rec_tree_partial(rec);
    node2(rec, 100, AABB_REC_NONE, 11, 12, 0, 1, -0.25f, -0.25f, 2.75f, 1.25f);
    node2(rec, 11, 100, 1, AABB_REC_NONE, 1, 0, -0.25f, -0.25f, 1.25f, 1.25f);
    node2(rec, 12, 100, 2, AABB_REC_NONE, 1, 0, 1.25f, -0.25f, 2.75f, 1.25f);
    aabb_rec_timing(rec, "broad_phase_ns", 1500.0);
    aabb_rec_timing(rec, "pairs_tested", 6.0);
    aabb_rec_timing(rec, "margin", 0.25);
}

/* The case crates/aabb-recorder/tests/common/mod.rs (parts_case) decodes: boxes 1, 2, 3 and
   the static 50; step 0 with every part (and bad ones), step 1 with no pairs and the same
   tree and timings (sent as empty sections), step 2 with nothing. */
static int parts(const char *path) {
    aabb_rec_hello hello = {"check parts", "m", 2, 0.5f};
    aabb_rec *rec = aabb_rec_open_file(path, &hello);
    struct aabb_rec_stats st;
    float g0[2] = {-10.0f, -1.0f}, g1[2] = {10.0f, 0.0f};
    int t;
    if (!rec) {
        fprintf(stderr, "cannot write %s\n", path);
        return 1;
    }
    aabb_rec_static_box(rec, 50, g0, g1);
    for (t = 0; t < 3; t++) {
        aabb_rec_begin_step(rec);
        box2(rec, 1, 0.0f, 0.0f, 1.0f, 1.0f);
        box2(rec, 2, 1.5f, 0.0f, 2.5f, 1.0f);
        box2(rec, 3, 5.0f, 0.0f, 6.0f, 1.0f);
        if (t == 0) {
            fat2(rec, 3, 4.75f, -0.25f, 6.25f, 1.25f);
            fat2(rec, 1, -0.25f, -0.25f, 1.25f, 1.25f);
            fat2(rec, 2, 1.25f, -0.25f, 2.75f, 1.25f);
            fat2(rec, 2, 1.25f, -0.25f, 2.75f, 1.25f);      /* twice */
            fat2(rec, 50, -10.0f, -1.0f, 10.0f, 0.0f);
            fat2(rec, 9, 0.0f, 0.0f, 1.0f, 1.0f);           /* not a box of the step */
            fat2(rec, 1, 0.0f / 0.0f, 0.0f, 1.0f, 1.0f);    /* NaN */
            aabb_rec_pair(rec, 3, 50);
            aabb_rec_pair(rec, 2, 1);
            aabb_rec_pair(rec, 1, 2);                       /* twice */
            aabb_rec_pair(rec, 50, 1);
            aabb_rec_pair(rec, 2, 50);
            aabb_rec_pair(rec, 1, 9);                       /* not a box of the step */
            aabb_rec_pair(rec, 4, 4);                       /* one id */
            tree_and_timings(rec);
            aabb_rec_timing(rec, "Bad", 1.0);               /* not a key */
            aabb_rec_timing(rec, "narrow_phase_ns", 0.0 / 0.0); /* NaN */
            aabb_rec_timing(rec, "margin", 0.5);            /* twice */
        } else if (t == 1) {
            aabb_rec_begin_pairs(rec);
            tree_and_timings(rec);
        }
        aabb_rec_end_step(rec);
    }
    aabb_rec_close(rec, &st);
    printf("parts: steps %lu sent %lu rejected %lu parts rejected %lu\n",
           (unsigned long)st.steps, (unsigned long)st.steps_sent,
           (unsigned long)st.boxes_rejected, (unsigned long)st.parts_rejected);
    return 0;
}

static int drops(int port, int exact) {
    aabb_rec_hello hello = {"check drops", "m", 2, 0.5f};
    aabb_rec_options options;
    aabb_rec *rec;
    struct aabb_rec_stats st;
    int step;
    uint32_t i;
    memset(&options, 0, sizeof options);
    options.buffer_bytes = 200000;
    options.exact = exact;
    rec = aabb_rec_connect_ex("127.0.0.1", port, &hello, &options);
    if (!rec) {
        fprintf(stderr, "cannot connect to port %d\n", port);
        return 1;
    }
    for (step = 0; step < (exact ? 200 : 400); step++) {
        struct timespec pause;
        aabb_rec_begin_step(rec);
        for (i = 0; i < 2000; i++) {
            float x = (float)i + (float)step * 0.5f;
            box2(rec, i, x, 0.0f, x + 1.0f, 1.0f);
        }
        if (aabb_rec_end_step(rec) == 0) printf("dropped %d\n", step);
        pause.tv_sec = 0;
        pause.tv_nsec = 2000000L;
        nanosleep(&pause, NULL);
    }
    aabb_rec_close(rec, &st);
    print_stats(exact ? "exact" : "drops", &st);
    return 0;
}

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int bench(int n, int steps) {
    aabb_rec_hello hello = {"check bench", "m", 2, 0.5f};
    aabb_rec *rec = aabb_rec_open_file("/dev/null", &hello);
    double t0, best = 1e30, total = 0.0;
    int step, i;
    if (!rec || n < 1 || steps < 1) return 1;
    for (step = 0; step < steps; step++) {
        double dt;
        t0 = now();
        aabb_rec_begin_step(rec);
        for (i = 0; i < n; i++) {
            float x = (float)i + (float)step * 0.001f;
            box2(rec, (uint32_t)i, x, 1.0f, x + 0.5f, 1.5f);
        }
        aabb_rec_end_step(rec);
        dt = now() - t0;
        total += dt;
        if (dt < best) best = dt;
    }
    aabb_rec_close(rec, NULL);
    printf("%d boxes all moving, %d steps: %.2f ns a box (mean), %.2f ns (best step)\n", n,
           steps, total / steps / n * 1e9, best / n * 1e9);
    return 0;
}

/* N boxes a step, all moving, steps [from, from + steps). */
static void crowd(aabb_rec *rec, int from, int steps, uint32_t n) {
    int step;
    uint32_t i;
    for (step = from; step < from + steps; step++) {
        aabb_rec_begin_step(rec);
        for (i = 0; i < n; i++) {
            float x = (float)i + (float)step * 0.5f;
            box2(rec, i, x, 0.0f, x + 1.0f, 0.5f);
        }
        aabb_rec_end_step(rec);
    }
}

/* The STEP frames that arrived whole in what a FIFO holds now. */
static unsigned long whole_steps(int fd) {
    static unsigned char data[1 << 20];
    size_t len = 0, pos = 8;
    unsigned long n = 0;
    for (;;) {
        ssize_t r = read(fd, data + len, sizeof data - len);
        if (r <= 0) break;
        len += (size_t)r;
        if (len == sizeof data) break;
    }
    while (pos + 5 <= len) {
        uint32_t length = (uint32_t)data[pos] | (uint32_t)data[pos + 1] << 8 |
                          (uint32_t)data[pos + 2] << 16 | (uint32_t)data[pos + 3] << 24;
        if (pos + 4 + length > len) break;
        if (data[pos + 4] == 3) n++;
        pos += 4 + length;
    }
    return n;
}

static int free_port(void) {
    struct sockaddr_in a;
    socklen_t len = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = 0;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof a) == 0 &&
        getsockname(fd, (struct sockaddr *)&a, &len) == 0)
        port = ntohs(a.sin_port);
    if (fd >= 0) close(fd);
    return port;
}

static int fifo(const char *dir) {
    aabb_rec_hello hello = {"check fifo", "m", 2, 0.5f};
    aabb_rec_options options;
    struct aabb_rec_stats st;
    char path[512];
    aabb_rec *rec;
    double t;
    int r;
    snprintf(path, sizeof path, "%s/none.fifo", dir);
    if (mkfifo(path, 0600) != 0) return 1;
    t = now();
    rec = aabb_rec_open_file(path, &hello);
    if (rec) printf("no reader: opened\n");
    else printf("no reader: %s; at once %d\n", aabb_rec_strerror(errno), now() - t < 2.0);
    t = now();
    rec = aabb_rec_connect_or_file("127.0.0.1", free_port(), path, &hello, NULL);
    if (rec) printf("no debugger, no reader: opened\n");
    else
        printf("no debugger, no reader: %s; at once %d\n", aabb_rec_strerror(errno),
               now() - t < 2.0);

    snprintf(path, sizeof path, "%s/stalled.fifo", dir);
    if (mkfifo(path, 0600) != 0) return 1;
    r = open(path, O_RDONLY | O_NONBLOCK);
    memset(&options, 0, sizeof options);
    options.timeout_ms = 300;
    rec = aabb_rec_open_file_ex(path, &hello, &options);
    if (r < 0 || !rec) return 1;
    crowd(rec, 0, 30, 2000);
    t = now();
    aabb_rec_close(rec, &st);
    t = now() - t;
    printf("stalled: steps %lu sent %lu dropped %lu delivered %lu closed within the timeout %d\n",
           (unsigned long)st.steps, (unsigned long)st.steps_sent,
           (unsigned long)st.steps_dropped, whole_steps(r), t < 0.3 + 1.0);
    printf("stalled error: %s\n", st.error);
    close(r);

    snprintf(path, sizeof path, "%s/exits.fifo", dir);
    if (mkfifo(path, 0600) != 0) return 1;
    r = open(path, O_RDONLY | O_NONBLOCK);
    rec = aabb_rec_open_file(path, &hello);
    if (r < 0 || !rec) return 1;
    close(r);
    crowd(rec, 0, 10, 100);
    aabb_rec_close(rec, &st);
    printf("exits: steps %lu sent %lu dropped %lu connected %d\n", (unsigned long)st.steps,
           (unsigned long)st.steps_sent, (unsigned long)st.steps_dropped, st.connected);
    printf("exits error: %s\n", st.error);

    /* A full disk. */
    rec = aabb_rec_open_file("/dev/full", &hello);
    if (!rec) return 1;
    crowd(rec, 0, 5, 10);
    aabb_rec_close(rec, &st);
    printf("full: steps %lu sent %lu dropped %lu error %s\n", (unsigned long)st.steps,
           (unsigned long)st.steps_sent, (unsigned long)st.steps_dropped, st.error);
    return 0;
}

static int refused(int port, const char *path, size_t buffer_bytes) {
    aabb_rec_hello hello = {"check refused", "m", 2, 0.5f};
    struct aabb_rec_stats st;
    float w0[2] = {-5.0f, -5.0f}, w1[2] = {5.0f, -4.0f};
    aabb_rec_options options;
    aabb_rec *rec;
    double deadline;
    memset(&options, 0, sizeof options);
    options.buffer_bytes = buffer_bytes;
    rec = aabb_rec_connect_or_file("127.0.0.1", port, path, &hello, &options);
    if (!rec) {
        fprintf(stderr, "cannot connect to port %d nor write %s\n", port, path);
        return 1;
    }
    aabb_rec_stats(rec, &st);
    printf("first target: %s\n", st.to_file ? "file" : "debugger");
    aabb_rec_static_box(rec, 77, w0, w1);
    crowd(rec, 0, 4, 50);
    deadline = now() + 10.0;
    for (;;) {
        struct timespec pause;
        aabb_rec_poll(rec);
        aabb_rec_stats(rec, &st);
        if (st.fallback[0] || now() > deadline) break;
        pause.tv_sec = 0;
        pause.tv_nsec = 5000000L;
        nanosleep(&pause, NULL);
    }
    crowd(rec, 4, 6, 50);
    aabb_rec_close(rec, &st);
    printf("refused: steps %lu sent %lu dropped %lu refused %lu bytes %lu error \"%s\"\n",
           (unsigned long)st.steps, (unsigned long)st.steps_sent,
           (unsigned long)st.steps_dropped, (unsigned long)st.steps_refused,
           (unsigned long)st.bytes_sent, st.error);
    printf("to file %d\nfallback: %s\n", st.to_file, st.fallback);
    return 0;
}

/* 70 steps at once to a debugger that refuses before reading anything. */
static int fast(int port, const char *path) {
    aabb_rec_hello hello = {"check fast", "m", 2, 0.5f};
    struct aabb_rec_stats st;
    aabb_rec *rec = aabb_rec_connect_or_file("127.0.0.1", port, path, &hello, NULL);
    if (!rec) return 1;
    crowd(rec, 0, 70, 5);
    aabb_rec_close(rec, &st);
    printf("fast: steps %lu sent %lu dropped %lu to file %d error \"%s\"\n",
           (unsigned long)st.steps, (unsigned long)st.steps_sent,
           (unsigned long)st.steps_dropped, st.to_file, st.error);
    return 0;
}

int main(int argc, char **argv) {
    if (argc >= 3 && strcmp(argv[1], "rejects") == 0) return rejects(argv[2]);
    if (argc >= 3 && strcmp(argv[1], "parts") == 0) return parts(argv[2]);
    if (argc >= 3 && strcmp(argv[1], "drops") == 0) return drops(atoi(argv[2]), 0);
    if (argc >= 3 && strcmp(argv[1], "exact") == 0) return drops(atoi(argv[2]), 1);
    if (argc >= 4 && strcmp(argv[1], "bench") == 0) return bench(atoi(argv[2]), atoi(argv[3]));
    if (argc >= 3 && strcmp(argv[1], "fifo") == 0) return fifo(argv[2]);
    if (argc >= 4 && strcmp(argv[1], "fast") == 0) return fast(atoi(argv[2]), argv[3]);
    if (argc >= 4 && strcmp(argv[1], "refused") == 0)
        return refused(atoi(argv[2]), argv[3], argc >= 5 ? (size_t)atol(argv[4]) : 0);
    fprintf(stderr,
            "usage: %s rejects FILE | parts FILE | drops PORT | exact PORT | bench N STEPS | "
            "fifo DIR | refused PORT FILE [BUFFER] | fast PORT FILE\n",
            argv[0]);
    return 2;
}
