/* aabb_recorder.h: streams a physics engine's boxes, step by step, to the aabb-debugger over
 * TCP (the live link) or to a stream file. One header, C99, POSIX sockets and stdio, no
 * threads, no dependencies.
 *
 * In ONE .c file, before any other #include:
 *
 *     #define AABB_RECORDER_IMPLEMENTATION
 *     #include "aabb_recorder.h"
 *
 * Use:
 *
 *     aabb_rec_hello hello = { "my engine 1.0", "m", 2, 1.0f / 60.0f };
 *     aabb_rec *rec = aabb_rec_connect_or_file("127.0.0.1", AABB_REC_DEFAULT_PORT,
 *                                              "run.aabbstream", &hello, NULL);
 *     aabb_rec_static_box(rec, 1000, ground_min, ground_max);         // before the first step
 *     for (;;) {
 *         aabb_rec_begin_step(rec);
 *         for (i = 0; i < n; i++) aabb_rec_add_box(rec, id[i], min[i], max[i]);
 *         aabb_rec_end_step(rec);
 *     }
 *     aabb_rec_close(rec, NULL);
 *
 * The engine's own broad phase may go with each step (optional, between begin_step and
 * end_step; see docs/formats.md, "The engine's broad phase"): aabb_rec_fat_box (one per box,
 * by the box's id), aabb_rec_pair (candidate pairs, any order: sent once each, sorted,
 * lower id first), aabb_rec_tree_root / aabb_rec_tree_node (the tree), aabb_rec_timing
 * (timings and counts by key). Fat boxes and pairs of ids that are not boxes of the step,
 * repeats, NaN and bad keys are left out and counted in parts_rejected.
 *
 * Add every box every step: the recorder sends what appeared, moved or went (boxes added in
 * the same order as the step before are diffed index by index; another order falls back to
 * a sorted copy and binary search). Nothing here aborts, raises a signal or blocks the host:
 * the socket and the file are non-blocking (a FIFO that no process reads fails the open at
 * once, errno ENXIO) and bytes they will not take wait in a buffer bounded in bytes (64 MiB
 * by default); when that is full the whole step is dropped and counted, and the next step
 * sent is a keyframe (the debugger shows the gap). With options.exact the step waits for
 * room instead, at most options.timeout_ms. A debugger or a FIFO's reader that closes, or
 * takes nothing for options.timeout_ms, ends the stream: later steps, and those still
 * waiting in the buffer, are counted dropped and aabb_rec_stats says why. Writes never raise
 * SIGPIPE (MSG_NOSIGNAL on sockets; on pipes SIGPIPE is blocked around the write with
 * pthread_sigmask and consumed, or F_SETNOSIGPIPE; glibc before 2.34 links with -pthread).
 * aabb_rec_connect_or_file goes on in the file when the debugger refuses the stream (it
 * writes "AABB refused: REASON") or closes it before its end. NaN boxes, min > max and ids
 * added twice in a step are left out and counted. Every function accepts a NULL recorder
 * and does nothing.
 *
 * With CMake: add_subdirectory(recorders/c) or FetchContent, or find_package(aabb_recorder)
 * after installing it, then target_link_libraries(app PRIVATE aabb_recorder::aabb_recorder)
 * (CMakeLists.txt beside this header). Or copy this one file into your project.
 *
 * The format is docs/formats.md ("Stream") of the aabb-debugger. License: MIT OR Apache-2.0.
 */
#if defined(AABB_RECORDER_IMPLEMENTATION) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#ifndef AABB_RECORDER_H
#define AABB_RECORDER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The recorder's version: the Rust crate aabb-recorder's, whose stream format it writes
   (CMakeLists.txt reads it from here). */
#define AABB_REC_VERSION "0.1.0"

/* The debugger's default port (on 127.0.0.1). */
#define AABB_REC_DEFAULT_PORT 7616

/* A recorder: opaque. */
typedef struct aabb_rec aabb_rec;

/* The handshake: who sends, in how many dimensions, at what time step. */
typedef struct aabb_rec_hello {
    const char *engine; /* name and version, e.g. "bounce 1.0" (cut to 255 bytes); NULL: "" */
    const char *units;  /* length unit, e.g. "m"; NULL: "m" */
    int dimensions;     /* 2 or 3: how many floats each min and max has */
    float dt;           /* seconds per step: finite, > 0, <= 1 */
} aabb_rec_hello;

/* How a recorder buffers and waits; zeros mean the defaults. */
typedef struct aabb_rec_options {
    size_t buffer_bytes; /* the most bytes waiting for the socket; 0: 64 MiB */
    int exact;           /* nonzero: wait for room instead of dropping steps */
    int timeout_ms;      /* connect timeout; a socket that takes nothing this long is given
                            up; close waits at most this long; 0: 5000 */
} aabb_rec_options;

/* What a recorder did so far. */
struct aabb_rec_stats {
    uint64_t steps;          /* steps ended */
    uint64_t steps_sent;     /* steps written, or waiting in the buffer (steps_waiting) */
    uint64_t steps_dropped;  /* steps not sent: buffer full, the socket or file failed, cut
                                at close, or refused by the debugger */
    uint64_t bytes_sent;     /* bytes written to the target in use */
    uint64_t boxes_rejected; /* boxes left out: NaN, min > max, twice in a step, ... */
    uint64_t parts_rejected; /* fat boxes, pairs, tree nodes, timings left out */
    int connected;           /* the socket or file still takes bytes */
    char error[200];         /* why it stopped taking bytes, or "" */
    char last_rejection[120];/* why the last box was left out, or "" */
    uint64_t steps_waiting;  /* of steps_sent, those still (partly) in the buffer */
    uint64_t steps_refused;  /* of steps_dropped, those written to a debugger that refused */
    int to_file;             /* nonzero: the bytes go to a file (asked for, or the fallback) */
    char fallback[300];      /* why connect_or_file left the debugger for the file, or "" */
};

/* Connects to a debugger at host:port (e.g. "127.0.0.1", AABB_REC_DEFAULT_PORT) and sends
   the handshake. NULL when nothing listens there or the handshake is invalid (errno says
   why). */
aabb_rec *aabb_rec_connect(const char *host, int port, const aabb_rec_hello *hello);
/* aabb_rec_connect with options (NULL: the defaults). */
aabb_rec *aabb_rec_connect_ex(const char *host, int port, const aabb_rec_hello *hello,
                              const aabb_rec_options *options);
/* Writes a stream file at path (created or emptied), opened without waiting. NULL when it
   cannot be created, is a FIFO that no process reads (errno ENXIO) or the handshake is
   invalid (errno says why; aabb_rec_strerror names it). */
aabb_rec *aabb_rec_open_file(const char *path, const aabb_rec_hello *hello);
/* aabb_rec_open_file with options (NULL: the defaults). */
aabb_rec *aabb_rec_open_file_ex(const char *path, const aabb_rec_hello *hello,
                                const aabb_rec_options *options);
/* Connects to the debugger at host:port, or, when none listens, writes the stream file at
   path. When the debugger later refuses the stream or closes it before its end, the
   recorder goes on in the file: a valid stream from the next step on (a keyframe), the steps
   lost in between counted dropped. NULL when neither works (errno says why). */
aabb_rec *aabb_rec_connect_or_file(const char *host, int port, const char *path,
                                   const aabb_rec_hello *hello,
                                   const aabb_rec_options *options);
/* What errno err means for a recorder's open: strerror, or for ENXIO "a FIFO that no
   process reads (opened without waiting)". */
const char *aabb_rec_strerror(int err);
/* Adds a box that never moves; only before the first step. min and max have `dimensions`
   floats. */
void aabb_rec_static_box(aabb_rec *rec, uint32_t id, const float *min, const float *max);
/* Begins a step (ending the open one, if any). */
void aabb_rec_begin_step(aabb_rec *rec);
/* Adds a box to the open step; min and max have `dimensions` floats. */
void aabb_rec_add_box(aabb_rec *rec, uint32_t id, const float *min, const float *max);
/* Ends the open step and sends it: 1 sent (or waiting in the buffer), 0 dropped, -1 no
   open step. */
int aabb_rec_end_step(aabb_rec *rec);
/* "None" in a tree node: the root's parent, a leaf's second link, an empty tree's root. */
#define AABB_REC_NONE 0xFFFFFFFFu

/* One node of the engine's tree. */
typedef struct aabb_rec_node {
    uint32_t id;       /* the engine's node id (not AABB_REC_NONE) */
    uint32_t parent;   /* the parent's node id; AABB_REC_NONE for the root */
    uint32_t child1;   /* a branch's first child; a leaf's box id */
    uint32_t child2;   /* a branch's second child; AABB_REC_NONE for a leaf */
    uint32_t height;   /* 0 for a leaf, 1 + the higher child's for a branch */
    int leaf;          /* nonzero: a leaf */
    int enlarged;      /* nonzero: the engine marked the box enlarged */
    float min[3], max[3]; /* the node's box (`dimensions` floats used) */
} aabb_rec_node;

/* The engine's fat box of the box `id` of this step; min and max have `dimensions` floats. */
void aabb_rec_fat_box(aabb_rec *rec, uint32_t id, const float *min, const float *max);
/* Says that this step sends its candidate pairs, even if none is added. */
void aabb_rec_begin_pairs(aabb_rec *rec);
/* One candidate pair of this step, in either order. */
void aabb_rec_pair(aabb_rec *rec, uint32_t a, uint32_t b);
/* The root of this step's tree (AABB_REC_NONE: an empty tree); says the step sends a tree. */
void aabb_rec_tree_root(aabb_rec *rec, uint32_t root);
/* Says that this step's tree holds only some of the step's boxes. */
void aabb_rec_tree_partial(aabb_rec *rec);
/* One node of this step's tree. */
void aabb_rec_tree_node(aabb_rec *rec, const aabb_rec_node *node);
/* A timing or count of this step: key 1 to 32 bytes of a-z, 0-9 and _ ("broad_phase_ns",
   "narrow_phase_ns", "pairs_tested", "reinserts", "margin", or your own), value finite; a
   key at most once a step, at most 64 a step. */
void aabb_rec_timing(aabb_rec *rec, const char *key, double value);
/* Writes what waits in the buffer without blocking and notices a debugger that refused the
   stream (begin_step and end_step do it too; call it when the engine idles). 1 while the
   stream goes on, 0 once it stopped. */
int aabb_rec_poll(aabb_rec *rec);
/* Fills *out with what the recorder did so far. */
void aabb_rec_stats(const aabb_rec *rec, struct aabb_rec_stats *out);
/* Ends the open step, sends the end of the stream, writes what waits (at most timeout_ms;
   the steps it cuts count as dropped), closes and frees. After connect_or_file it then waits
   at most 500 ms (or timeout_ms, if shorter) for the debugger to close or to refuse a stream
   that ended before its refusal came (the stream then goes to the file). Fills *out (when
   not NULL) with the final counts. */
void aabb_rec_close(aabb_rec *rec, struct aabb_rec_stats *out);

#ifdef __cplusplus
}
#endif

#endif /* AABB_RECORDER_H */

/* ---------------------------------------------------------------------------------------- */

#ifdef AABB_RECORDER_IMPLEMENTATION
#ifndef AABB_RECORDER_IMPLEMENTED
#define AABB_RECORDER_IMPLEMENTED

#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#ifdef MSG_NOSIGNAL
#define AABB_REC_SEND_FLAGS_ MSG_NOSIGNAL
#else
#define AABB_REC_SEND_FLAGS_ 0
#endif

#define AABB_REC_MAX_FRAME_ 67108864u

typedef struct aabb_rec_box_ {
    uint32_t id;
    float min[3];
    float max[3];
} aabb_rec_box_;

typedef struct aabb_rec_key_ {
    uint32_t id;
    uint32_t idx;
} aabb_rec_key_;

typedef struct aabb_rec_buf_ {
    unsigned char *p;
    size_t len, cap;
    int failed; /* out of memory once: everything after is left out */
} aabb_rec_buf_;

/* What a frame handed to aabb_rec_emit_ is. */
#define AABB_REC_HEAD_ 0 /* the magic and HELLO, or STATIC (kept for the fallback file) */
#define AABB_REC_STEP_ 1
#define AABB_REC_BYE_ 2

struct aabb_rec {
    int dims;
    int fd;      /* socket or file (non-blocking), or -1 */
    int is_file; /* fd is a file or FIFO (write), not a socket (send) */
    int dead;    /* the socket or file failed */
    char target[160];      /* "the debugger at HOST:PORT", or the file's path */
    char *fallback_path;   /* connect_or_file's file, until it is used */
    aabb_rec_buf_ header, statics_frame; /* kept for the fallback file */
    int switched;          /* the fallback happened during the emit in progress */
    int peer_closed, ending;
    unsigned char refusal[256];
    size_t n_refusal;
    uint64_t total_in, total_out; /* bytes ever emitted, written, to the fd in use */
    uint64_t *pending;     /* where each STEP frame not all written ends (total_in) */
    size_t n_pending, head_pending, cap_pending;
    uint64_t steps_refused;
    char fallback[300];
    /* Every byte written to the debugger while connect_or_file may still fall back, up to
       retain_budget: a refusal replays them into the file and nothing is lost. */
    int retaining;
    size_t retain_budget;
    aabb_rec_buf_ retained;
    uint64_t *retained_ends; /* where each STEP frame in `retained` ends */
    size_t n_retained_ends, cap_retained_ends;
    int exact;
    int timeout_ms;
    size_t cap;

    aabb_rec_buf_ out; /* bytes the socket has not taken, from out_head */
    size_t out_head;
    double stalled_since; /* when the socket last refused bytes while some waited; 0 if not */

    uint64_t step, next_step;
    int in_step, started, keyframe_next, shuffled;

    aabb_rec_box_ *statics;
    size_t n_statics, cap_statics;
    aabb_rec_box_ *prev, *cur;
    size_t n_prev, n_cur, cap_prev, cap_cur;
    aabb_rec_key_ *keys_cur, *keys_prev;
    size_t cap_keys_cur, cap_keys_prev;
    unsigned char *keep;
    size_t cap_keep;

    aabb_rec_buf_ appeared, moved, gone, frame;
    uint32_t n_appeared, n_moved, n_gone;

    /* The engine's broad phase of the open step. */
    int has_fat, has_pairs, has_tree, tree_partial;
    aabb_rec_box_ *fat;
    size_t n_fat, cap_fat;
    uint32_t *pairs; /* a, b, a, b, ... */
    size_t n_pairs, cap_pairs;
    uint32_t *ids; /* the step's ids, sorted, to check the parts' */
    size_t cap_ids;
    aabb_rec_buf_ tree, timings;
    uint32_t tree_root, n_tree, n_timings;
    char timing_keys[64][33];
    /* Each part's section bytes in this step (next) and in the last step sent (last): a part
       the same as last time goes as an empty section ("the same as the previous step"). */
    aabb_rec_buf_ sec_next[4], sec_last[4];
    int sec_next_ok[4], sec_last_ok[4];

    uint64_t steps, steps_sent, steps_dropped, bytes_sent, boxes_rejected, parts_rejected;
    char error[200];
    char last_rejection[120];
};

/* -- small helpers ------------------------------------------------------------------------ */

static double aabb_rec_now_(void) {
    struct timespec t;
    if (clock_gettime(CLOCK_MONOTONIC, &t) != 0) return 0.0;
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int aabb_rec_grow_(void **p, size_t *cap, size_t need, size_t size) {
    size_t n;
    void *q;
    if (need <= *cap) return 1;
    n = *cap ? *cap : 64;
    while (n < need) n *= 2;
    q = realloc(*p, n * size);
    if (!q) return 0;
    *p = q;
    *cap = n;
    return 1;
}

static void aabb_rec_put_(aabb_rec_buf_ *b, const void *src, size_t n) {
    if (b->failed || n == 0) return;
    if (!aabb_rec_grow_((void **)&b->p, &b->cap, b->len + n, 1)) {
        b->failed = 1;
        return;
    }
    memcpy(b->p + b->len, src, n);
    b->len += n;
}

static void aabb_rec_u32le_(unsigned char *d, uint32_t v) {
    d[0] = (unsigned char)v;
    d[1] = (unsigned char)(v >> 8);
    d[2] = (unsigned char)(v >> 16);
    d[3] = (unsigned char)(v >> 24);
}

static void aabb_rec_put_u32_(aabb_rec_buf_ *b, uint32_t v) {
    unsigned char d[4];
    aabb_rec_u32le_(d, v);
    aabb_rec_put_(b, d, 4);
}

static void aabb_rec_put_u64_(aabb_rec_buf_ *b, uint64_t v) {
    unsigned char d[8];
    aabb_rec_u32le_(d, (uint32_t)v);
    aabb_rec_u32le_(d + 4, (uint32_t)(v >> 32));
    aabb_rec_put_(b, d, 8);
}

static uint32_t aabb_rec_fbits_(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

static void aabb_rec_put_box_(aabb_rec_buf_ *b, int dims, const aabb_rec_box_ *x) {
    unsigned char d[28];
    int k;
    aabb_rec_u32le_(d, x->id);
    for (k = 0; k < dims; k++) {
        aabb_rec_u32le_(d + 4 + 4 * k, aabb_rec_fbits_(x->min[k]));
        aabb_rec_u32le_(d + 4 + 4 * dims + 4 * k, aabb_rec_fbits_(x->max[k]));
    }
    aabb_rec_put_(b, d, (size_t)(4 + 8 * dims));
}

static int aabb_rec_same_(const aabb_rec_box_ *a, const aabb_rec_box_ *b) {
    return memcmp(a, b, sizeof *a) == 0;
}

static void aabb_rec_reject_(aabb_rec *rec, const char *why, uint32_t id) {
    rec->boxes_rejected++;
    snprintf(rec->last_rejection, sizeof rec->last_rejection, "box %lu: %s",
             (unsigned long)id, why);
}

/* 1 when the box can go on the wire: finite, min <= max; else the reason. */
static const char *aabb_rec_check_(const aabb_rec_box_ *b, int dims) {
    int k;
    for (k = 0; k < dims; k++) {
        float lo = b->min[k], hi = b->max[k];
        /* x - x is 0 for finite x, NaN for NaN and infinities. */
        if (!(lo - lo == 0.0f) || !(hi - hi == 0.0f)) return "not finite";
        if (!(lo <= hi)) return "min > max";
    }
    return NULL;
}

/* The steps still (partly) in the buffer are lost: counted dropped, not sent. */
static void aabb_rec_lose_pending_(aabb_rec *rec) {
    uint64_t n = (uint64_t)(rec->n_pending - rec->head_pending);
    rec->steps_sent -= n;
    rec->steps_dropped += n;
    rec->n_pending = rec->head_pending = 0;
}

static void aabb_rec_stop_retaining_(aabb_rec *rec) {
    rec->retaining = 0;
    free(rec->retained.p);
    memset(&rec->retained, 0, sizeof rec->retained);
    free(rec->retained_ends);
    rec->retained_ends = NULL;
    rec->n_retained_ends = rec->cap_retained_ends = 0;
}

/* A STEP frame ending at `end` is all written to the debugger: kept for the replay. */
static void aabb_rec_retain_end_(aabb_rec *rec, uint64_t end) {
    if (!rec->retaining) return;
    if (!aabb_rec_grow_((void **)&rec->retained_ends, &rec->cap_retained_ends,
                        rec->n_retained_ends + 1, sizeof(uint64_t))) {
        aabb_rec_stop_retaining_(rec);
        return;
    }
    rec->retained_ends[rec->n_retained_ends++] = end;
}

/* Bytes were written to the socket or file: kept for the replay while the budget lasts. */
static void aabb_rec_wrote_(aabb_rec *rec, const unsigned char *p, size_t n) {
    if (!rec->retaining || rec->is_file) return;
    if (rec->retained.len + n > rec->retain_budget) {
        aabb_rec_stop_retaining_(rec);
        return;
    }
    aabb_rec_put_(&rec->retained, p, n);
    if (rec->retained.failed) aabb_rec_stop_retaining_(rec);
}

/* Bytes were written: the steps whose frames are all out are sent. */
static void aabb_rec_settle_(aabb_rec *rec) {
    while (rec->head_pending < rec->n_pending &&
           rec->pending[rec->head_pending] <= rec->total_out) {
        if (!rec->is_file) aabb_rec_retain_end_(rec, rec->pending[rec->head_pending]);
        rec->head_pending++;
    }
    if (rec->head_pending == rec->n_pending) rec->head_pending = rec->n_pending = 0;
}

static void aabb_rec_fail_(aabb_rec *rec, const char *what, int err) {
    if (rec->dead) return;
    rec->dead = 1;
    aabb_rec_lose_pending_(rec);
    snprintf(rec->error, sizeof rec->error, "%.140s: %.55s", what, strerror(err));
}

/* write(2) that never raises SIGPIPE: blocked around the write and consumed if raised. */
static ssize_t aabb_rec_write_nosig_(int fd, const void *p, size_t n) {
#if defined(F_SETNOSIGPIPE)
    return write(fd, p, n); /* F_SETNOSIGPIPE is set on the fd */
#else
    sigset_t pipe_set, old, pending;
    ssize_t r;
    int err, was_pending = 0;
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    if (sigpending(&pending) == 0) was_pending = sigismember(&pending, SIGPIPE) == 1;
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);
    r = write(fd, p, n);
    err = errno;
    if (r < 0 && err == EPIPE && !was_pending) {
        struct timespec zero;
        zero.tv_sec = 0;
        zero.tv_nsec = 0;
        while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR) {
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    errno = err;
    return r;
#endif
}

static ssize_t aabb_rec_out_(aabb_rec *rec, const unsigned char *p, size_t n) {
    if (rec->is_file) return aabb_rec_write_nosig_(rec->fd, p, n);
    return send(rec->fd, p, n, AABB_REC_SEND_FLAGS_);
}

/* A write failed: names the cause. */
static void aabb_rec_write_failed_(aabb_rec *rec, int err) {
    char what[220];
    if (rec->is_file && err == EPIPE)
        snprintf(what, sizeof what, "writing to %.160s: its reader went away", rec->target);
    else if (!rec->is_file && (err == EPIPE || err == ECONNRESET))
        snprintf(what, sizeof what, "writing to %.160s (the connection was closed)", rec->target);
    else
        snprintf(what, sizeof what, "writing to %.160s", rec->target);
    aabb_rec_fail_(rec, what, err);
}

static int aabb_rec_emit_(aabb_rec *rec, const unsigned char *p, size_t n, int force, int kind);
static int aabb_rec_open_nowait_(const char *path);

/* Goes on in the fallback file with every byte the debugger was sent (retained), then what
   waits in the buffer: the same stream, nothing lost. */
static void aabb_rec_replay_(aabb_rec *rec, const char *why) {
    aabb_rec_buf_ out;
    uint64_t *pending;
    size_t waiting = rec->out.len - rec->out_head, k, n_old = rec->n_pending - rec->head_pending;
    int fd;
    memset(&out, 0, sizeof out);
    aabb_rec_put_(&out, rec->retained.p, rec->retained.len);
    aabb_rec_put_(&out, rec->out.p + rec->out_head, waiting);
    pending = (uint64_t *)malloc((rec->n_retained_ends + n_old + 1) * sizeof(uint64_t));
    close(rec->fd);
    rec->fd = -1;
    fd = aabb_rec_open_nowait_(rec->fallback_path);
    if (fd < 0 || out.failed || !pending) {
        int err = fd < 0 ? errno : ENOMEM;
        if (fd >= 0) close(fd);
        free(out.p);
        free(pending);
        rec->dead = 1;
        /* The steps the debugger took are lost with the file. */
        rec->steps_sent -= rec->n_retained_ends;
        rec->steps_dropped += rec->n_retained_ends;
        aabb_rec_lose_pending_(rec);
        aabb_rec_stop_retaining_(rec);
        snprintf(rec->error, sizeof rec->error, "%.120s; the fallback file: %.55s", why,
                 aabb_rec_strerror(err));
        free(rec->fallback_path);
        rec->fallback_path = NULL;
        return;
    }
    for (k = 0; k < rec->n_retained_ends; k++) pending[k] = rec->retained_ends[k];
    for (k = 0; k < n_old; k++) pending[rec->n_retained_ends + k] = rec->pending[rec->head_pending + k];
    free(rec->pending);
    rec->pending = pending;
    rec->cap_pending = rec->n_retained_ends + n_old + 1;
    rec->n_pending = rec->n_retained_ends + n_old;
    rec->head_pending = 0;
    free(rec->out.p);
    rec->out = out;
    rec->out_head = 0;
    rec->total_out = 0;
    rec->fd = fd;
    rec->is_file = 1;
    rec->bytes_sent = 0;
    rec->stalled_since = 0.0;
    aabb_rec_stop_retaining_(rec);
    snprintf(rec->fallback, sizeof rec->fallback, "%.200s; the stream goes on in %.70s", why,
             rec->fallback_path);
    snprintf(rec->target, sizeof rec->target, "%s", rec->fallback_path);
    free(rec->fallback_path);
    rec->fallback_path = NULL;
}

/* Leaves the debugger that refused the stream (said: it wrote a line) or closed it, for the
   fallback file: its magic, HELLO and STATIC, then the steps from the next keyframe. */
static void aabb_rec_refused_(aabb_rec *rec, int said, const char *how) {
    char why[260], reason[200];
    uint64_t written;
    int fd;
    size_t i, n = 0;
    if (said) {
        static const char prefix[] = "AABB refused: ";
        size_t k = sizeof prefix - 1;
        if (rec->n_refusal >= k && memcmp(rec->refusal, prefix, k) == 0) {
            for (i = k; i < rec->n_refusal && rec->refusal[i] != '\n' && n + 1 < sizeof reason;
                 i++) {
                unsigned char c = rec->refusal[i];
                reason[n++] = (char)(c >= 0x20 && c < 0x7f ? c : '?');
            }
            while (n > 0 && reason[n - 1] == ' ') n--;
            reason[n] = 0;
        } else {
            snprintf(reason, sizeof reason, "it wrote %lu bytes that are not a refusal line",
                     (unsigned long)rec->n_refusal);
        }
        snprintf(why, sizeof why, "%.110s refused the stream: %.120s", rec->target, reason);
    } else {
        snprintf(why, sizeof why, "%.120s %.60s before the stream's end", rec->target, how);
    }
    if (!rec->fallback_path) {
        if (!said) return; /* a close shows as the write that fails */
        rec->dead = 1;
        aabb_rec_lose_pending_(rec);
        snprintf(rec->error, sizeof rec->error, "%.199s", why);
        return;
    }
    if (rec->retaining) {
        aabb_rec_replay_(rec, why);
        return;
    }
    /* What the debugger got is lost with it. */
    written = rec->steps_sent - (uint64_t)(rec->n_pending - rec->head_pending);
    rec->steps_refused += written;
    rec->steps_sent -= written;
    rec->steps_dropped += written;
    aabb_rec_lose_pending_(rec);
    close(rec->fd);
    rec->fd = -1;
    fd = aabb_rec_open_nowait_(rec->fallback_path);
    if (fd < 0) {
        rec->dead = 1;
        snprintf(rec->error, sizeof rec->error, "%.120s; the fallback file: %.55s", why,
                 aabb_rec_strerror(errno));
        free(rec->fallback_path);
        rec->fallback_path = NULL;
        return;
    }
    rec->fd = fd;
    rec->is_file = 1;
    rec->out.len = rec->out_head = 0;
    rec->total_in = rec->total_out = 0;
    rec->bytes_sent = 0;
    rec->stalled_since = 0.0;
    snprintf(rec->fallback, sizeof rec->fallback, "%.200s; the stream goes on in %.70s", why,
             rec->fallback_path);
    snprintf(rec->target, sizeof rec->target, "%s", rec->fallback_path);
    free(rec->fallback_path);
    rec->fallback_path = NULL;
    rec->keyframe_next = 1;
    for (i = 0; i < 4; i++) rec->sec_last_ok[i] = 0;
    rec->switched = 1;
    if (rec->header.len) aabb_rec_emit_(rec, rec->header.p, rec->header.len, 1, -1);
    if (rec->statics_frame.len)
        aabb_rec_emit_(rec, rec->statics_frame.p, rec->statics_frame.len, 1, -1);
}

/* A debugger writes only to refuse a stream ("AABB refused: REASON\n", then it closes):
   any byte, a close or a reset before the stream's end is a refusal. Never waits. */
static void aabb_rec_check_refusal_(aabb_rec *rec) {
    while (!rec->is_file && !rec->dead && !rec->peer_closed && rec->fd >= 0) {
        unsigned char buf[256];
        size_t room = sizeof rec->refusal - rec->n_refusal;
        ssize_t r = recv(rec->fd, buf, room ? room : 1, MSG_DONTWAIT);
        if (r > 0) {
            size_t k = (size_t)r < room ? (size_t)r : room;
            memcpy(rec->refusal + rec->n_refusal, buf, k);
            rec->n_refusal += k;
            if (memchr(rec->refusal, '\n', rec->n_refusal) ||
                rec->n_refusal == sizeof rec->refusal) {
                rec->peer_closed = 1;
                aabb_rec_refused_(rec, 1, "");
            }
            continue;
        }
        if (r < 0 && errno == EINTR) continue;
        if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
        rec->peer_closed = 1;
        if (rec->n_refusal) aabb_rec_refused_(rec, 1, "");
        else if (r < 0 || !rec->ending)
            aabb_rec_refused_(rec, 0, r == 0 ? "closed the connection" : "reset the connection");
        return;
    }
}

/* Sends what waits in rec->out without blocking; 0 when the socket or file failed. */
static int aabb_rec_pump_(aabb_rec *rec) {
    aabb_rec_check_refusal_(rec);
    while (!rec->dead && rec->out_head < rec->out.len) {
        ssize_t n = aabb_rec_out_(rec, rec->out.p + rec->out_head, rec->out.len - rec->out_head);
        if (n > 0) {
            aabb_rec_wrote_(rec, rec->out.p + rec->out_head, (size_t)n);
            rec->out_head += (size_t)n;
            rec->bytes_sent += (uint64_t)n;
            rec->total_out += (uint64_t)n;
            rec->stalled_since = 0.0;
            aabb_rec_settle_(rec);
            continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            double now = aabb_rec_now_();
            if (rec->stalled_since == 0.0) {
                rec->stalled_since = now;
            } else if ((now - rec->stalled_since) * 1000.0 > (double)rec->timeout_ms) {
                rec->dead = 1;
                aabb_rec_lose_pending_(rec);
                snprintf(rec->error, sizeof rec->error,
                         "writing to %.120s: no progress for %d ms (it stopped reading)",
                         rec->target, rec->timeout_ms);
            }
            break;
        }
        if (n < 0 && !rec->is_file && (errno == EPIPE || errno == ECONNRESET)) {
            int err = errno;
            /* A refusal shows first as a write that fails: its line may wait to be read. */
            aabb_rec_check_refusal_(rec);
            if (rec->switched || rec->dead || rec->is_file) continue;
            errno = err;
        }
        aabb_rec_write_failed_(rec, n < 0 ? errno : EIO);
    }
    if (rec->out_head == rec->out.len) {
        rec->out.len = 0;
        rec->out_head = 0;
    } else if (rec->out_head > rec->out.len / 2) {
        memmove(rec->out.p, rec->out.p + rec->out_head, rec->out.len - rec->out_head);
        rec->out.len -= rec->out_head;
        rec->out_head = 0;
    }
    return !rec->dead;
}

/* Waits (poll) until the socket takes bytes or the timeout passes; 0 on timeout or failure. */
static int aabb_rec_wait_writable_(aabb_rec *rec, int ms) {
    struct pollfd p;
    int r;
    p.fd = rec->fd;
    p.events = POLLOUT;
    p.revents = 0;
    do {
        r = poll(&p, 1, ms);
    } while (r < 0 && errno == EINTR);
    return r > 0;
}

/* Hands a frame to the socket or file. force: whatever the buffer holds. kind: what the
   frame is (AABB_REC_HEAD_, _STEP_, _BYE_; -1 the fallback's own). 1 sent or waiting,
   0 dropped. */
static int aabb_rec_emit_(aabb_rec *rec, const unsigned char *p, size_t n, int force, int kind) {
    if (rec->dead || rec->fd < 0) return 0;
    if (kind >= 0) rec->switched = 0;
    aabb_rec_pump_(rec);
    if (!force) {
        while (rec->exact && !rec->dead && rec->out.len - rec->out_head > 0 &&
               rec->out.len - rec->out_head + n > rec->cap) {
            if (!aabb_rec_wait_writable_(rec, rec->timeout_ms)) {
                rec->dead = 1;
                aabb_rec_lose_pending_(rec);
                snprintf(rec->error, sizeof rec->error,
                         "writing to %.120s: no progress for %d ms (it stopped reading)",
                         rec->target, rec->timeout_ms);
                break;
            }
            aabb_rec_pump_(rec);
        }
        if (rec->dead) return 0;
        if (rec->out.len - rec->out_head > 0 && rec->out.len - rec->out_head + n > rec->cap)
            return 0;
    }
    if (rec->dead) return 0;
    if (rec->switched && kind >= 0) {
        /* The stream went on in the fallback file during this emit: the header is there
           already, a delta cannot start it (the next step is a keyframe). */
        if (kind == AABB_REC_HEAD_) return 1;
        if (kind == AABB_REC_STEP_) return 0;
    }
    rec->total_in += n;
    if (rec->out.len == rec->out_head) {
        /* Nothing waits: write straight from the frame, keep the rest. */
        size_t done = 0;
        while (done < n) {
            ssize_t k = aabb_rec_out_(rec, p + done, n - done);
            if (k > 0) {
                aabb_rec_wrote_(rec, p + done, (size_t)k);
                done += (size_t)k;
                rec->bytes_sent += (uint64_t)k;
                rec->total_out += (uint64_t)k;
                continue;
            }
            if (k < 0 && errno == EINTR) continue;
            if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
            aabb_rec_write_failed_(rec, k < 0 ? errno : EIO);
            return 0;
        }
        p += done;
        n -= done;
        if (n == 0 && kind == AABB_REC_STEP_ && !rec->is_file)
            aabb_rec_retain_end_(rec, rec->total_in);
    }
    if (n > 0) {
        aabb_rec_put_(&rec->out, p, n);
        if (rec->out.failed) {
            rec->out.failed = 0;
            aabb_rec_fail_(rec, "buffering the stream", ENOMEM);
            return 0;
        }
        if (kind == AABB_REC_STEP_) {
            if (!aabb_rec_grow_((void **)&rec->pending, &rec->cap_pending, rec->n_pending + 1,
                                sizeof(uint64_t))) {
                aabb_rec_fail_(rec, "buffering the stream", ENOMEM);
                return 0;
            }
            rec->pending[rec->n_pending++] = rec->total_in;
        }
    }
    return 1;
}

/* -- open --------------------------------------------------------------------------------- */

static size_t aabb_rec_cut_(const char *s) {
    size_t n = s ? strlen(s) : 0;
    if (n > 255) {
        n = 255;
        /* Back to the start of a UTF-8 character. */
        while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
    }
    return n;
}

static aabb_rec *aabb_rec_new_(const aabb_rec_hello *hello, const aabb_rec_options *options) {
    aabb_rec *rec;
    if (!hello || (hello->dimensions != 2 && hello->dimensions != 3) ||
        !(hello->dt > 0.0f && hello->dt <= 1.0f)) {
        errno = EINVAL;
        return NULL;
    }
    rec = (aabb_rec *)calloc(1, sizeof *rec);
    if (!rec) {
        errno = ENOMEM;
        return NULL;
    }
    rec->dims = hello->dimensions;
    rec->fd = -1;
    rec->keyframe_next = 1;
    rec->cap = options && options->buffer_bytes ? options->buffer_bytes : (size_t)64 << 20;
    rec->exact = options ? options->exact : 0;
    rec->timeout_ms = options && options->timeout_ms > 0 ? options->timeout_ms : 5000;
    return rec;
}

static void aabb_rec_hello_frame_(aabb_rec_buf_ *b, const aabb_rec_hello *hello) {
    const char *units = hello->units ? hello->units : "m";
    const char *engine = hello->engine ? hello->engine : "";
    size_t ne = aabb_rec_cut_(engine), nu = aabb_rec_cut_(units);
    unsigned char head[10];
    aabb_rec_put_(b, "AABBSTRM", 8);
    aabb_rec_put_u32_(b, (uint32_t)(1 + 2 + 1 + 1 + 4 + 2 + ne + 2 + nu));
    head[0] = 0x01;                   /* HELLO */
    head[1] = 1;                      /* version 1 */
    head[2] = 0;
    head[3] = (unsigned char)hello->dimensions;
    head[4] = 0;                      /* flags */
    aabb_rec_u32le_(head + 5, aabb_rec_fbits_(hello->dt));
    aabb_rec_put_(b, head, 9);
    head[0] = (unsigned char)ne;
    head[1] = 0;
    aabb_rec_put_(b, head, 2);
    aabb_rec_put_(b, engine, ne);
    head[0] = (unsigned char)nu;
    aabb_rec_put_(b, head, 2);
    aabb_rec_put_(b, units, nu);
}

static void aabb_rec_free_(aabb_rec *rec) {
    free(rec->out.p);
    free(rec->fallback_path);
    free(rec->header.p);
    free(rec->statics_frame.p);
    free(rec->pending);
    free(rec->retained.p);
    free(rec->retained_ends);
    free(rec->statics);
    free(rec->prev);
    free(rec->cur);
    free(rec->keys_cur);
    free(rec->keys_prev);
    free(rec->keep);
    free(rec->appeared.p);
    free(rec->moved.p);
    free(rec->gone.p);
    free(rec->frame.p);
    free(rec->fat);
    free(rec->pairs);
    free(rec->ids);
    free(rec->tree.p);
    free(rec->timings.p);
    {
        int k;
        for (k = 0; k < 4; k++) {
            free(rec->sec_next[k].p);
            free(rec->sec_last[k].p);
        }
    }
    free(rec);
}

static aabb_rec *aabb_rec_start_(aabb_rec *rec, const aabb_rec_hello *hello) {
    aabb_rec_hello_frame_(&rec->frame, hello);
    if (rec->fallback_path) aabb_rec_put_(&rec->header, rec->frame.p, rec->frame.len);
    if (rec->frame.failed || rec->header.failed) {
        if (rec->fd >= 0) close(rec->fd);
        aabb_rec_free_(rec);
        errno = ENOMEM;
        return NULL;
    }
    aabb_rec_emit_(rec, rec->frame.p, rec->frame.len, 1, AABB_REC_HEAD_);
    rec->frame.len = 0;
    return rec;
}

const char *aabb_rec_strerror(int err) {
    if (err == ENXIO) return "a FIFO that no process reads (opened without waiting)";
    return strerror(err);
}

/* Creates or empties the file at path without waiting (a FIFO with no reader: ENXIO at
   once); -1 with errno set. */
static int aabb_rec_open_nowait_(const char *path) {
    int fd;
    if (!path) {
        errno = EINVAL;
        return -1;
    }
    do {
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK, 0666);
    } while (fd < 0 && errno == EINTR);
#ifdef F_SETNOSIGPIPE
    if (fd >= 0) fcntl(fd, F_SETNOSIGPIPE, 1);
#endif
    return fd;
}

aabb_rec *aabb_rec_open_file_ex(const char *path, const aabb_rec_hello *hello,
                                const aabb_rec_options *options) {
    aabb_rec *rec = aabb_rec_new_(hello, options);
    if (!rec) return NULL;
    rec->fd = aabb_rec_open_nowait_(path);
    if (rec->fd < 0) {
        int err = errno;
        aabb_rec_free_(rec);
        errno = err;
        return NULL;
    }
    rec->is_file = 1;
    snprintf(rec->target, sizeof rec->target, "%s", path);
    return aabb_rec_start_(rec, hello);
}

aabb_rec *aabb_rec_open_file(const char *path, const aabb_rec_hello *hello) {
    return aabb_rec_open_file_ex(path, hello, NULL);
}

aabb_rec *aabb_rec_connect(const char *host, int port, const aabb_rec_hello *hello) {
    return aabb_rec_connect_ex(host, port, hello, NULL);
}

/* A connected non-blocking socket to host:port, or -1 (errno set). */
static int aabb_rec_dial_(const char *host, int port, int timeout_ms) {
    struct addrinfo hints, *list = NULL, *a;
    char service[16];
    int fd = -1, err = ECONNREFUSED, r;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(service, sizeof service, "%d", port);
    r = getaddrinfo(host ? host : "127.0.0.1", service, &hints, &list);
    if (r != 0) {
        errno = EHOSTUNREACH;
        return -1;
    }
    for (a = list; a; a = a->ai_next) {
        int flags, one = 1;
        fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        flags = fcntl(fd, F_GETFL, 0);
        if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0) {
            err = errno;
            close(fd);
            fd = -1;
            continue;
        }
        if (connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            struct pollfd p;
            int soerr = 0;
            socklen_t len = sizeof soerr;
            if (errno != EINPROGRESS) {
                err = errno;
                close(fd);
                fd = -1;
                continue;
            }
            p.fd = fd;
            p.events = POLLOUT;
            p.revents = 0;
            do {
                r = poll(&p, 1, timeout_ms);
            } while (r < 0 && errno == EINTR);
            if (r <= 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) != 0 || soerr) {
                err = r == 0 ? ETIMEDOUT : (soerr ? soerr : errno);
                close(fd);
                fd = -1;
                continue;
            }
        }
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
#ifdef SO_NOSIGPIPE
        setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
#endif
        break;
    }
    freeaddrinfo(list);
    if (fd < 0) errno = err;
    return fd;
}

static aabb_rec *aabb_rec_connect_to_(const char *host, int port, const aabb_rec_hello *hello,
                                       const aabb_rec_options *options, const char *path) {
    aabb_rec *rec = aabb_rec_new_(hello, options);
    if (!rec) return NULL;
    if (port <= 0 || port > 65535) {
        aabb_rec_free_(rec);
        errno = EINVAL;
        return NULL;
    }
    if (path) {
        size_t n = strlen(path);
        rec->fallback_path = (char *)malloc(n + 1);
        if (!rec->fallback_path) {
            aabb_rec_free_(rec);
            errno = ENOMEM;
            return NULL;
        }
        memcpy(rec->fallback_path, path, n + 1);
        rec->retaining = 1;
        rec->retain_budget = rec->cap < ((size_t)16 << 20) ? rec->cap : ((size_t)16 << 20);
    }
    rec->fd = aabb_rec_dial_(host, port, rec->timeout_ms);
    if (rec->fd < 0) {
        int err = errno;
        aabb_rec_free_(rec);
        errno = err;
        return NULL;
    }
    snprintf(rec->target, sizeof rec->target, "the debugger at %s:%d",
             host ? host : "127.0.0.1", port);
    return aabb_rec_start_(rec, hello);
}

aabb_rec *aabb_rec_connect_ex(const char *host, int port, const aabb_rec_hello *hello,
                              const aabb_rec_options *options) {
    return aabb_rec_connect_to_(host, port, hello, options, NULL);
}

aabb_rec *aabb_rec_connect_or_file(const char *host, int port, const char *path,
                                   const aabb_rec_hello *hello,
                                   const aabb_rec_options *options) {
    aabb_rec *rec;
    if (!path) {
        errno = EINVAL;
        return NULL;
    }
    rec = aabb_rec_connect_to_(host, port, hello, options, path);
    if (rec || errno == EINVAL || errno == ENOMEM) return rec;
    return aabb_rec_open_file_ex(path, hello, options);
}

/* -- steps -------------------------------------------------------------------------------- */

static int aabb_rec_make_(const aabb_rec *rec, aabb_rec_box_ *b, uint32_t id, const float *min,
                          const float *max) {
    int k;
    if (!min || !max) return 0;
    memset(b, 0, sizeof *b);
    b->id = id;
    for (k = 0; k < rec->dims; k++) {
        b->min[k] = min[k];
        b->max[k] = max[k];
    }
    return 1;
}

static int aabb_rec_key_cmp_(const void *pa, const void *pb) {
    const aabb_rec_key_ *a = (const aabb_rec_key_ *)pa, *b = (const aabb_rec_key_ *)pb;
    if (a->id != b->id) return a->id < b->id ? -1 : 1;
    return a->idx < b->idx ? -1 : (a->idx > b->idx ? 1 : 0);
}

static int aabb_rec_box_cmp_(const void *pa, const void *pb) {
    const aabb_rec_box_ *a = (const aabb_rec_box_ *)pa, *b = (const aabb_rec_box_ *)pb;
    return a->id < b->id ? -1 : (a->id > b->id ? 1 : 0);
}

static int aabb_rec_is_static_(const aabb_rec *rec, uint32_t id) {
    size_t lo = 0, hi = rec->n_statics;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rec->statics[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < rec->n_statics && rec->statics[lo].id == id;
}

void aabb_rec_static_box(aabb_rec *rec, uint32_t id, const float *min, const float *max) {
    aabb_rec_box_ b;
    size_t i;
    const char *bad;
    if (!rec) return;
    if (!aabb_rec_make_(rec, &b, id, min, max)) {
        aabb_rec_reject_(rec, "static box without corners", id);
        return;
    }
    if (rec->started) {
        aabb_rec_reject_(rec, "static box added after the first step", id);
        return;
    }
    bad = aabb_rec_check_(&b, rec->dims);
    if (bad) {
        aabb_rec_reject_(rec, bad, id);
        return;
    }
    for (i = 0; i < rec->n_statics; i++) {
        if (rec->statics[i].id == id) {
            aabb_rec_reject_(rec, "static box added twice", id);
            return;
        }
    }
    if (!aabb_rec_grow_((void **)&rec->statics, &rec->cap_statics, rec->n_statics + 1,
                        sizeof(aabb_rec_box_))) {
        aabb_rec_reject_(rec, "out of memory", id);
        return;
    }
    rec->statics[rec->n_statics++] = b;
}

int aabb_rec_end_step(aabb_rec *rec);

void aabb_rec_begin_step(aabb_rec *rec) {
    if (!rec) return;
    if (rec->in_step) aabb_rec_end_step(rec);
    if (!rec->started) {
        rec->started = 1;
        if (rec->n_statics > 0) {
            size_t i, at;
            qsort(rec->statics, rec->n_statics, sizeof(aabb_rec_box_), aabb_rec_box_cmp_);
            rec->frame.len = 0;
            at = rec->frame.len;
            aabb_rec_put_u32_(&rec->frame, 0);
            aabb_rec_put_(&rec->frame, "\x02", 1);
            aabb_rec_put_u32_(&rec->frame, (uint32_t)rec->n_statics);
            for (i = 0; i < rec->n_statics; i++)
                aabb_rec_put_box_(&rec->frame, rec->dims, &rec->statics[i]);
            if (!rec->frame.failed && rec->frame.len - 4 <= AABB_REC_MAX_FRAME_) {
                aabb_rec_u32le_(rec->frame.p + at, (uint32_t)(rec->frame.len - 4));
                if (rec->fallback_path) {
                    aabb_rec_put_(&rec->statics_frame, rec->frame.p, rec->frame.len);
                    if (rec->statics_frame.failed) rec->statics_frame.len = 0;
                }
                aabb_rec_emit_(rec, rec->frame.p, rec->frame.len, 1, AABB_REC_HEAD_);
            } else {
                rec->boxes_rejected += rec->n_statics;
                snprintf(rec->last_rejection, sizeof rec->last_rejection,
                         "the static boxes do not fit in a frame");
            }
            rec->frame.failed = 0;
            rec->frame.len = 0;
        }
    }
    if (rec->fd >= 0 && !rec->dead) aabb_rec_pump_(rec);
    rec->in_step = 1;
    rec->step = rec->next_step++;
    rec->shuffled = 0;
    rec->n_cur = 0;
    rec->appeared.len = rec->moved.len = rec->gone.len = 0;
    rec->appeared.failed = rec->moved.failed = rec->gone.failed = 0;
    rec->n_appeared = rec->n_moved = rec->n_gone = 0;
    rec->has_fat = rec->has_pairs = rec->has_tree = rec->tree_partial = 0;
    rec->n_fat = rec->n_pairs = 0;
    rec->tree.len = rec->timings.len = 0;
    rec->tree.failed = rec->timings.failed = 0;
    rec->tree_root = AABB_REC_NONE;
    rec->n_tree = rec->n_timings = 0;
}

void aabb_rec_add_box(aabb_rec *rec, uint32_t id, const float *min, const float *max) {
    aabb_rec_box_ *b;
    const char *bad;
    size_t i;
    if (!rec) return;
    if (!rec->in_step) {
        aabb_rec_reject_(rec, "added outside a step", id);
        return;
    }
    if (rec->dead) return;
    if (!aabb_rec_grow_((void **)&rec->cur, &rec->cap_cur, rec->n_cur + 1,
                        sizeof(aabb_rec_box_))) {
        aabb_rec_reject_(rec, "out of memory", id);
        return;
    }
    i = rec->n_cur;
    b = &rec->cur[i];
    if (!aabb_rec_make_(rec, b, id, min, max)) {
        aabb_rec_reject_(rec, "without corners", id);
        return;
    }
    bad = aabb_rec_check_(b, rec->dims);
    if (bad) {
        aabb_rec_reject_(rec, bad, id);
        return;
    }
    if (!rec->shuffled) {
        if (i < rec->n_prev && rec->prev[i].id == id) {
            if (!aabb_rec_same_(&rec->prev[i], b)) {
                aabb_rec_put_box_(&rec->moved, rec->dims, b);
                rec->n_moved++;
            }
        } else {
            rec->shuffled = 1;
        }
    }
    rec->n_cur++;
}

/* -- the engine's broad phase ------------------------------------------------------------ */

static void aabb_rec_reject_part_(aabb_rec *rec, const char *what, uint32_t id) {
    rec->parts_rejected++;
    snprintf(rec->last_rejection, sizeof rec->last_rejection, "%s %lu", what,
             (unsigned long)id);
}

/* 1 when a part may be added now; counts it rejected when outside a step. */
static int aabb_rec_part_ok_(aabb_rec *rec, const char *what) {
    if (!rec->in_step) {
        aabb_rec_reject_part_(rec, what, 0);
        return 0;
    }
    return !rec->dead;
}

void aabb_rec_fat_box(aabb_rec *rec, uint32_t id, const float *min, const float *max) {
    aabb_rec_box_ b;
    if (!rec || !aabb_rec_part_ok_(rec, "fat box outside a step, id")) return;
    if (!aabb_rec_make_(rec, &b, id, min, max) || aabb_rec_check_(&b, rec->dims)) {
        aabb_rec_reject_part_(rec, "fat box not finite or min > max, id", id);
        return;
    }
    if (!aabb_rec_grow_((void **)&rec->fat, &rec->cap_fat, rec->n_fat + 1, sizeof b)) {
        aabb_rec_reject_part_(rec, "fat box: out of memory, id", id);
        return;
    }
    rec->fat[rec->n_fat++] = b;
    rec->has_fat = 1;
}

void aabb_rec_begin_pairs(aabb_rec *rec) {
    if (!rec || !aabb_rec_part_ok_(rec, "pairs outside a step")) return;
    rec->has_pairs = 1;
}

void aabb_rec_pair(aabb_rec *rec, uint32_t a, uint32_t b) {
    if (!rec || !aabb_rec_part_ok_(rec, "pair outside a step, id")) return;
    if (a == b) {
        aabb_rec_reject_part_(rec, "pair of one id", a);
        return;
    }
    if (!aabb_rec_grow_((void **)&rec->pairs, &rec->cap_pairs, 2 * rec->n_pairs + 2,
                        sizeof(uint32_t))) {
        aabb_rec_reject_part_(rec, "pair: out of memory, id", a);
        return;
    }
    rec->pairs[2 * rec->n_pairs] = a < b ? a : b;
    rec->pairs[2 * rec->n_pairs + 1] = a < b ? b : a;
    rec->n_pairs++;
    rec->has_pairs = 1;
}

void aabb_rec_tree_root(aabb_rec *rec, uint32_t root) {
    if (!rec || !aabb_rec_part_ok_(rec, "tree root outside a step")) return;
    rec->tree_root = root;
    rec->has_tree = 1;
}

void aabb_rec_tree_partial(aabb_rec *rec) {
    if (!rec || !aabb_rec_part_ok_(rec, "tree flags outside a step")) return;
    rec->tree_partial = 1;
    rec->has_tree = 1;
}

void aabb_rec_tree_node(aabb_rec *rec, const aabb_rec_node *node) {
    aabb_rec_box_ b;
    unsigned char flags;
    int k;
    if (!rec || !aabb_rec_part_ok_(rec, "tree node outside a step, id")) return;
    if (!node) {
        aabb_rec_reject_part_(rec, "tree node NULL, id", AABB_REC_NONE);
        return;
    }
    if (!aabb_rec_make_(rec, &b, node->id, node->min, node->max) ||
        aabb_rec_check_(&b, rec->dims) || node->id == AABB_REC_NONE) {
        aabb_rec_reject_part_(rec, "tree node with a bad box or id", node->id);
        return;
    }
    aabb_rec_put_u32_(&rec->tree, node->id);
    aabb_rec_put_u32_(&rec->tree, node->parent);
    aabb_rec_put_u32_(&rec->tree, node->child1);
    aabb_rec_put_u32_(&rec->tree, node->leaf ? AABB_REC_NONE : node->child2);
    aabb_rec_put_u32_(&rec->tree, node->height);
    flags = (unsigned char)((node->leaf ? 2 : 0) | (node->enlarged ? 1 : 0));
    aabb_rec_put_(&rec->tree, &flags, 1);
    for (k = 0; k < rec->dims; k++) aabb_rec_put_u32_(&rec->tree, aabb_rec_fbits_(b.min[k]));
    for (k = 0; k < rec->dims; k++) aabb_rec_put_u32_(&rec->tree, aabb_rec_fbits_(b.max[k]));
    rec->n_tree++;
    rec->has_tree = 1;
}

void aabb_rec_timing(aabb_rec *rec, const char *key, double value) {
    size_t n, i;
    unsigned char d[8], len;
    uint64_t bits;
    if (!rec || !aabb_rec_part_ok_(rec, "timing outside a step")) return;
    n = key ? strlen(key) : 0;
    if (n == 0 || n > 32) {
        aabb_rec_reject_part_(rec, "timing key not 1 to 32 bytes, length", (uint32_t)n);
        return;
    }
    for (i = 0; i < n; i++) {
        char c = key[i];
        if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_')) {
            aabb_rec_reject_part_(rec, "timing key not of a-z, 0-9 and _, length",
                                  (uint32_t)n);
            return;
        }
    }
    if (!(value - value == 0.0)) {
        aabb_rec_reject_part_(rec, "timing not finite, key length", (uint32_t)n);
        return;
    }
    for (i = 0; i < rec->n_timings; i++) {
        if (strcmp(rec->timing_keys[i], key) == 0) {
            aabb_rec_reject_part_(rec, "timing key twice, length", (uint32_t)n);
            return;
        }
    }
    if (rec->n_timings >= 64) {
        aabb_rec_reject_part_(rec, "over 64 timings, length", (uint32_t)n);
        return;
    }
    memcpy(rec->timing_keys[rec->n_timings], key, n + 1);
    rec->n_timings++;
    len = (unsigned char)n;
    aabb_rec_put_(&rec->timings, &len, 1);
    aabb_rec_put_(&rec->timings, key, n);
    memcpy(&bits, &value, 8);
    aabb_rec_u32le_(d, (uint32_t)bits);
    aabb_rec_u32le_(d + 4, (uint32_t)(bits >> 32));
    aabb_rec_put_(&rec->timings, d, 8);
}

static int aabb_rec_u32_cmp_(const void *pa, const void *pb) {
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    return a < b ? -1 : (a > b ? 1 : 0);
}

static int aabb_rec_pair_cmp_(const void *pa, const void *pb) {
    const uint32_t *a = (const uint32_t *)pa, *b = (const uint32_t *)pb;
    if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
    return a[1] < b[1] ? -1 : (a[1] > b[1] ? 1 : 0);
}

static int aabb_rec_fat_cmp_(const void *pa, const void *pb) {
    const aabb_rec_box_ *a = (const aabb_rec_box_ *)pa, *b = (const aabb_rec_box_ *)pb;
    if (a->id != b->id) return a->id < b->id ? -1 : 1;
    return memcmp(a, b, sizeof *a);
}

/* Whether id is a box of the step: rec->ids (n sorted) or a static box. */
static int aabb_rec_present_(const aabb_rec *rec, size_t n, uint32_t id) {
    return bsearch(&id, rec->ids, n, sizeof(uint32_t), aabb_rec_u32_cmp_) != NULL ||
           (rec->n_statics && aabb_rec_is_static_(rec, id));
}

/* Appends the section of tag k + 1 held in rec->sec_next[k] to the frame f: empty when it is
   the same as in the last step sent (and that step was the one before this). */
static void aabb_rec_section_(aabb_rec *rec, aabb_rec_buf_ *f, int k) {
    aabb_rec_buf_ *b = &rec->sec_next[k];
    unsigned char tag = (unsigned char)(k + 1);
    int same;
    if (b->failed) {
        f->failed = 1;
        return;
    }
    rec->sec_next_ok[k] = 1;
    same = !rec->keyframe_next && rec->sec_last_ok[k] && rec->sec_last[k].len == b->len &&
           memcmp(rec->sec_last[k].p, b->p, b->len) == 0;
    aabb_rec_put_(f, &tag, 1);
    aabb_rec_put_u32_(f, same ? 0u : (uint32_t)b->len);
    if (!same) aabb_rec_put_(f, b->p, b->len);
}

/* After a step: its sections become the reference of the next (sent), or none (dropped). */
static void aabb_rec_sections_done_(aabb_rec *rec, int sent) {
    int k;
    for (k = 0; k < 4; k++) {
        aabb_rec_buf_ t = rec->sec_last[k];
        rec->sec_last[k] = rec->sec_next[k];
        rec->sec_next[k] = t;
        rec->sec_next[k].len = 0;
        rec->sec_next[k].failed = 0;
        rec->sec_last_ok[k] = sent && rec->sec_next_ok[k];
        rec->sec_next_ok[k] = 0;
    }
}

/* Appends the open step's parts to the frame f (rec->cur holds the step's boxes): fat
   boxes and pairs checked against the step's ids (those that are not, and repeats, are left
   out and counted), sorted by id. */
static void aabb_rec_put_parts_(aabb_rec *rec, aabb_rec_buf_ *f) {
    size_t i, n = 0, kept;
    aabb_rec_buf_ *b;
    if (rec->has_fat || rec->has_pairs) {
        if (!aabb_rec_grow_((void **)&rec->ids, &rec->cap_ids, rec->n_cur + 1,
                            sizeof(uint32_t))) {
            rec->parts_rejected += rec->n_fat + rec->n_pairs;
            rec->has_fat = rec->has_pairs = 0;
        } else {
            for (i = 0; i < rec->n_cur; i++) rec->ids[i] = rec->cur[i].id;
            n = rec->n_cur;
            qsort(rec->ids, n, sizeof(uint32_t), aabb_rec_u32_cmp_);
        }
    }
    if (rec->has_fat) {
        qsort(rec->fat, rec->n_fat, sizeof(aabb_rec_box_), aabb_rec_fat_cmp_);
        for (i = 0, kept = 0; i < rec->n_fat; i++) {
            uint32_t id = rec->fat[i].id;
            if ((kept > 0 && rec->fat[kept - 1].id == id) || !aabb_rec_present_(rec, n, id)) {
                aabb_rec_reject_part_(rec, "fat box twice or not a box of the step, id", id);
                continue;
            }
            rec->fat[kept++] = rec->fat[i];
        }
        b = &rec->sec_next[0];
        aabb_rec_put_u32_(b, (uint32_t)kept);
        for (i = 0; i < kept; i++) aabb_rec_put_box_(b, rec->dims, &rec->fat[i]);
        aabb_rec_section_(rec, f, 0);
    }
    if (rec->has_pairs) {
        qsort(rec->pairs, rec->n_pairs, 2 * sizeof(uint32_t), aabb_rec_pair_cmp_);
        for (i = 0, kept = 0; i < rec->n_pairs; i++) {
            uint32_t a = rec->pairs[2 * i], c = rec->pairs[2 * i + 1];
            if ((kept > 0 && rec->pairs[2 * kept - 2] == a && rec->pairs[2 * kept - 1] == c) ||
                !aabb_rec_present_(rec, n, a) || !aabb_rec_present_(rec, n, c)) {
                aabb_rec_reject_part_(rec, "pair twice or not of boxes of the step, id", a);
                continue;
            }
            rec->pairs[2 * kept] = a;
            rec->pairs[2 * kept + 1] = c;
            kept++;
        }
        b = &rec->sec_next[1];
        aabb_rec_put_u32_(b, (uint32_t)kept);
        for (i = 0; i < 2 * kept; i++) aabb_rec_put_u32_(b, rec->pairs[i]);
        aabb_rec_section_(rec, f, 1);
    }
    if (rec->has_tree && !rec->tree.failed) {
        unsigned char flags = (unsigned char)(rec->tree_partial ? 1 : 0);
        b = &rec->sec_next[2];
        aabb_rec_put_(b, &flags, 1);
        aabb_rec_put_u32_(b, rec->tree_root);
        aabb_rec_put_u32_(b, rec->n_tree);
        aabb_rec_put_(b, rec->tree.p, rec->tree.len);
        aabb_rec_section_(rec, f, 2);
    }
    if (rec->n_timings > 0 && !rec->timings.failed) {
        unsigned char count = (unsigned char)rec->n_timings;
        b = &rec->sec_next[3];
        aabb_rec_put_(b, &count, 1);
        aabb_rec_put_(b, rec->timings.p, rec->timings.len);
        aabb_rec_section_(rec, f, 3);
    }
}

/* The diff of a step in another order than the last (or with new ids): a sorted copy of
   each step and a merge; leaves out ids added twice and moving boxes with a static id. */
static int aabb_rec_rediff_(aabb_rec *rec) {
    size_t i, j, n = rec->n_cur, m = rec->n_prev, kept;
    aabb_rec_key_ *kc, *kp;
    if (!aabb_rec_grow_((void **)&rec->keys_cur, &rec->cap_keys_cur, n + 1, sizeof *kc) ||
        !aabb_rec_grow_((void **)&rec->keys_prev, &rec->cap_keys_prev, m + 1, sizeof *kp) ||
        !aabb_rec_grow_((void **)&rec->keep, &rec->cap_keep, n + 1, 1))
        return 0;
    kc = rec->keys_cur;
    kp = rec->keys_prev;
    for (i = 0; i < n; i++) {
        kc[i].id = rec->cur[i].id;
        kc[i].idx = (uint32_t)i;
        rec->keep[i] = 1;
    }
    for (i = 0; i < m; i++) {
        kp[i].id = rec->prev[i].id;
        kp[i].idx = (uint32_t)i;
    }
    qsort(kc, n, sizeof *kc, aabb_rec_key_cmp_);
    qsort(kp, m, sizeof *kp, aabb_rec_key_cmp_);
    rec->appeared.len = rec->moved.len = rec->gone.len = 0;
    rec->n_appeared = rec->n_moved = rec->n_gone = 0;
    i = j = 0;
    while (i < n || j < m) {
        if (i < n && i > 0 && kc[i].id == kc[i - 1].id) {
            /* The same id again: the first added stays. */
            rec->keep[kc[i].idx] = 0;
            aabb_rec_reject_(rec, "added twice in one step", kc[i].id);
            i++;
        } else if (i < n && (j >= m || kc[i].id < kp[j].id)) {
            const aabb_rec_box_ *b = &rec->cur[kc[i].idx];
            if (rec->n_statics && aabb_rec_is_static_(rec, b->id)) {
                rec->keep[kc[i].idx] = 0;
                aabb_rec_reject_(rec, "has a static box's id", b->id);
            } else {
                aabb_rec_put_box_(&rec->appeared, rec->dims, b);
                rec->n_appeared++;
            }
            i++;
        } else if (i < n && kc[i].id == kp[j].id) {
            const aabb_rec_box_ *b = &rec->cur[kc[i].idx];
            if (!aabb_rec_same_(b, &rec->prev[kp[j].idx])) {
                aabb_rec_put_box_(&rec->moved, rec->dims, b);
                rec->n_moved++;
            }
            i++;
            j++;
        } else {
            aabb_rec_put_u32_(&rec->gone, kp[j].id);
            rec->n_gone++;
            j++;
        }
    }
    for (i = 0, kept = 0; i < n; i++)
        if (rec->keep[i]) rec->cur[kept++] = rec->cur[i];
    rec->n_cur = kept;
    return 1;
}

int aabb_rec_end_step(aabb_rec *rec) {
    aabb_rec_buf_ *f;
    aabb_rec_box_ *t;
    size_t tc, i;
    int sent;
    unsigned char head[9];
    if (!rec) return -1;
    if (!rec->in_step) return -1;
    rec->in_step = 0;
    rec->steps++;
    if (rec->dead) {
        rec->steps_dropped++;
        return 0;
    }
    if (!rec->shuffled && rec->n_cur < rec->n_prev) {
        /* Same order, shorter: the tail went. */
        for (i = rec->n_cur; i < rec->n_prev; i++) aabb_rec_put_u32_(&rec->gone, rec->prev[i].id);
        rec->n_gone = (uint32_t)(rec->n_prev - rec->n_cur);
    }
    if (rec->shuffled && !aabb_rec_rediff_(rec)) {
        /* Out of memory for the fallback: drop the step, send the next as a keyframe. */
        rec->keyframe_next = 1;
        rec->steps_dropped++;
        snprintf(rec->last_rejection, sizeof rec->last_rejection, "step %lu: out of memory",
                 (unsigned long)rec->step);
        rec->n_cur = 0;
        return 0;
    }
    f = &rec->frame;
    f->len = 0;
    f->failed = 0;
    aabb_rec_put_u32_(f, 0);
    head[0] = 0x03; /* STEP */
    aabb_rec_put_(f, head, 1);
    aabb_rec_put_u64_(f, rec->step);
    head[0] = rec->keyframe_next ? 1 : 0;
    aabb_rec_put_(f, head, 1);
    if (rec->keyframe_next) {
        aabb_rec_put_u32_(f, (uint32_t)rec->n_cur);
        for (i = 0; i < rec->n_cur; i++) aabb_rec_put_box_(f, rec->dims, &rec->cur[i]);
        aabb_rec_put_u64_(f, 0);
    } else {
        aabb_rec_put_u32_(f, rec->n_appeared);
        aabb_rec_put_(f, rec->appeared.p, rec->appeared.len);
        aabb_rec_put_u32_(f, rec->n_moved);
        aabb_rec_put_(f, rec->moved.p, rec->moved.len);
        aabb_rec_put_u32_(f, rec->n_gone);
        aabb_rec_put_(f, rec->gone.p, rec->gone.len);
    }
    aabb_rec_put_parts_(rec, f);
    if (f->failed || rec->appeared.failed || rec->moved.failed || rec->gone.failed ||
        f->len - 4 > AABB_REC_MAX_FRAME_) {
        sent = 0;
        snprintf(rec->last_rejection, sizeof rec->last_rejection,
                 "step %lu: out of memory or over the frame limit", (unsigned long)rec->step);
    } else {
        aabb_rec_u32le_(f->p, (uint32_t)(f->len - 4));
        sent = aabb_rec_emit_(rec, f->p, f->len, 0, AABB_REC_STEP_);
    }
    aabb_rec_sections_done_(rec, sent);
    if (sent) {
        rec->steps_sent++;
        rec->keyframe_next = 0;
    } else {
        rec->steps_dropped++;
        rec->keyframe_next = 1;
    }
    /* This step's boxes are the next one's reference. */
    t = rec->prev;
    rec->prev = rec->cur;
    rec->cur = t;
    tc = rec->cap_prev;
    rec->cap_prev = rec->cap_cur;
    rec->cap_cur = tc;
    rec->n_prev = rec->n_cur;
    rec->n_cur = 0;
    return sent;
}

/* -- stats and close ---------------------------------------------------------------------- */

int aabb_rec_poll(aabb_rec *rec) {
    if (!rec || rec->fd < 0) return 0;
    return aabb_rec_pump_(rec);
}

void aabb_rec_stats(const aabb_rec *rec, struct aabb_rec_stats *out) {
    if (!out) return;
    memset(out, 0, sizeof *out);
    if (!rec) return;
    out->steps = rec->steps;
    out->steps_sent = rec->steps_sent;
    out->steps_dropped = rec->steps_dropped;
    out->bytes_sent = rec->bytes_sent;
    out->boxes_rejected = rec->boxes_rejected;
    out->parts_rejected = rec->parts_rejected;
    out->connected = !rec->dead;
    memcpy(out->error, rec->error, sizeof out->error);
    memcpy(out->last_rejection, rec->last_rejection, sizeof out->last_rejection);
    out->steps_waiting = (uint64_t)(rec->n_pending - rec->head_pending);
    out->steps_refused = rec->steps_refused;
    out->to_file = rec->is_file;
    memcpy(out->fallback, rec->fallback, sizeof out->fallback);
}

/* Writes what waits until deadline; then cuts it, counting its steps dropped. */
static void aabb_rec_drain_(aabb_rec *rec, double deadline) {
    while (!rec->dead && rec->fd >= 0 && rec->out.len > rec->out_head) {
        double left = deadline - aabb_rec_now_();
        if (left <= 0.0) {
            uint64_t cut = (uint64_t)(rec->n_pending - rec->head_pending);
            rec->dead = 1;
            aabb_rec_lose_pending_(rec);
            snprintf(rec->error, sizeof rec->error,
                     "closing: %.100s took nothing more for %d ms; %lu steps not written "
                     "were cut", rec->target, rec->timeout_ms, (unsigned long)cut);
            break;
        }
        aabb_rec_wait_writable_(rec, (int)(left * 1000.0) + 1);
        aabb_rec_pump_(rec);
    }
}

void aabb_rec_close(aabb_rec *rec, struct aabb_rec_stats *out) {
    unsigned char bye[21];
    if (!rec) {
        aabb_rec_stats(NULL, out);
        return;
    }
    if (rec->in_step) aabb_rec_end_step(rec);
    aabb_rec_u32le_(bye, 17);
    bye[4] = 0x04; /* BYE */
    aabb_rec_u32le_(bye + 5, (uint32_t)rec->steps_sent);
    aabb_rec_u32le_(bye + 9, (uint32_t)(rec->steps_sent >> 32));
    aabb_rec_u32le_(bye + 13, (uint32_t)rec->steps_dropped);
    aabb_rec_u32le_(bye + 17, (uint32_t)(rec->steps_dropped >> 32));
    rec->ending = 1;
    aabb_rec_emit_(rec, bye, sizeof bye, 1, AABB_REC_BYE_);
    aabb_rec_drain_(rec, aabb_rec_now_() + (double)rec->timeout_ms / 1000.0);
    if (!rec->dead && rec->fd >= 0 && !rec->is_file && rec->fallback_path) {
        /* A fast engine can end its stream before a refusal arrives: wait a little for the
           debugger to close (its end of a stream it took) or to refuse. */
        double wait = rec->timeout_ms < 500 ? rec->timeout_ms / 1000.0 : 0.5;
        double until = aabb_rec_now_() + wait;
        while (!rec->dead && !rec->peer_closed && !rec->is_file && rec->fd >= 0) {
            struct pollfd p;
            double left = until - aabb_rec_now_();
            if (left <= 0.0) break;
            p.fd = rec->fd;
            p.events = POLLIN;
            p.revents = 0;
            if (poll(&p, 1, (int)(left * 1000.0) + 1) < 0 && errno != EINTR) break;
            aabb_rec_check_refusal_(rec);
        }
        if (rec->is_file) aabb_rec_drain_(rec, aabb_rec_now_() + (double)rec->timeout_ms / 1000.0);
    }
    if (rec->fd >= 0) {
        if (!rec->is_file) shutdown(rec->fd, SHUT_WR);
        if (close(rec->fd) != 0 && rec->is_file) aabb_rec_fail_(rec, "closing the stream file", errno);
        rec->fd = -1;
    }
    aabb_rec_stats(rec, out);
    aabb_rec_free_(rec);
}

#endif /* AABB_RECORDER_IMPLEMENTED */
#endif /* AABB_RECORDER_IMPLEMENTATION */
