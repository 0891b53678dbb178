/* example_bounce.c: bouncing boxes streamed live to the aabb-debugger through
 * aabb_recorder.h, or written to a stream file when no debugger listens.
 *
 *     cc -std=c99 -O2 -o bounce example_bounce.c
 *     ./bounce [FILE] [--port N] [--steps N] [--boxes N] [--file-only] [--fast]
 *
 * 2,000 boxes in a 200 x 100 room fall, bounce off the walls and the floor, and every tenth
 * of them is away for 50 steps in turn (boxes that go and come back); every 100th step adds
 * them in reverse order. The motion is deterministic (a fixed pseudo-random start, plain
 * float arithmetic), so a test can compute the same boxes. It connects to
 * 127.0.0.1:PORT (--port, else AABB_DEBUGGER_PORT, else 7616) and runs at 60 steps a second;
 * when nothing listens it writes FILE (default bounce.aabbstream) as fast as it can, and
 * says so. --file-only skips the debugger; --fast does not wait between steps.
 */
#define AABB_RECORDER_IMPLEMENTATION
#include "aabb_recorder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define ROOM_W 200.0f
#define ROOM_H 100.0f
#define GRAVITY 0.01f

typedef struct body {
    float x, y, vx, vy, hw, hh;
} body;

static uint32_t seed = 12345u;

/* A float in [0, 1) from 24 random bits (exact in a float). */
static float rnd01(void) {
    seed = seed * 1664525u + 1013904223u;
    return (float)(seed >> 8) / 16777216.0f;
}

static void init_bodies(body *b, int n) {
    int i;
    for (i = 0; i < n; i++) {
        b[i].hw = 0.2f + 0.8f * rnd01();
        b[i].hh = 0.2f + 0.8f * rnd01();
        b[i].x = b[i].hw + (ROOM_W - 2.0f * b[i].hw) * rnd01();
        b[i].y = b[i].hh + (ROOM_H - 2.0f * b[i].hh) * rnd01();
        b[i].vx = (rnd01() - 0.5f) * 2.0f;
        b[i].vy = (rnd01() - 0.5f) * 2.0f;
    }
}

/* One step of motion: gravity, then a bounce off each wall that was crossed. */
static void move_bodies(body *b, int n) {
    int i;
    for (i = 0; i < n; i++) {
        float lo, hi;
        b[i].vy = b[i].vy - GRAVITY;
        b[i].x = b[i].x + b[i].vx;
        b[i].y = b[i].y + b[i].vy;
        lo = b[i].hw;
        hi = ROOM_W - b[i].hw;
        if (b[i].x < lo) {
            b[i].x = lo + (lo - b[i].x);
            b[i].vx = -b[i].vx;
        } else if (b[i].x > hi) {
            b[i].x = hi - (b[i].x - hi);
            b[i].vx = -b[i].vx;
        }
        lo = b[i].hh;
        hi = ROOM_H - b[i].hh;
        if (b[i].y < lo) {
            b[i].y = lo + (lo - b[i].y);
            b[i].vy = -b[i].vy;
        } else if (b[i].y > hi) {
            b[i].y = hi - (b[i].y - hi);
            b[i].vy = -b[i].vy;
        }
    }
}

static void add_body(aabb_rec *rec, const body *b, int i) {
    float min[2], max[2];
    min[0] = b[i].x - b[i].hw;
    min[1] = b[i].y - b[i].hh;
    max[0] = b[i].x + b[i].hw;
    max[1] = b[i].y + b[i].hh;
    aabb_rec_add_box(rec, (uint32_t)i * 3u + 1u, min, max);
}

static int away(int step, int i) {
    return (step / 50 + i) % 10 == 0;
}

int main(int argc, char **argv) {
    const char *path = "bounce.aabbstream";
    const char *env = getenv("AABB_DEBUGGER_PORT");
    int port = env ? atoi(env) : AABB_REC_DEFAULT_PORT;
    int steps = 600, n = 2000, file_only = 0, fast = 0, live = 0, step, i, a;
    aabb_rec_hello hello;
    aabb_rec *rec = NULL;
    body *bodies;
    struct aabb_rec_stats st;
    static const float walls[4][4] = {
        {0.0f, -1.0f, ROOM_W, 0.0f},        /* floor */
        {0.0f, ROOM_H, ROOM_W, ROOM_H + 1.0f}, /* ceiling */
        {-1.0f, 0.0f, 0.0f, ROOM_H},        /* left */
        {ROOM_W, 0.0f, ROOM_W + 1.0f, ROOM_H}, /* right */
    };

    for (a = 1; a < argc; a++) {
        if (strcmp(argv[a], "--port") == 0 && a + 1 < argc) port = atoi(argv[++a]);
        else if (strcmp(argv[a], "--steps") == 0 && a + 1 < argc) steps = atoi(argv[++a]);
        else if (strcmp(argv[a], "--boxes") == 0 && a + 1 < argc) n = atoi(argv[++a]);
        else if (strcmp(argv[a], "--file-only") == 0) file_only = 1;
        else if (strcmp(argv[a], "--fast") == 0) fast = 1;
        else if (argv[a][0] != '-') path = argv[a];
        else {
            fprintf(stderr, "usage: %s [FILE] [--port N] [--steps N] [--boxes N] "
                            "[--file-only] [--fast]\n", argv[0]);
            return 2;
        }
    }
    if (n < 1 || steps < 0) {
        fprintf(stderr, "--boxes must be at least 1 and --steps at least 0\n");
        return 2;
    }

    hello.engine = "example_bounce (C, aabb_recorder.h)";
    hello.units = "m";
    hello.dimensions = 2;
    hello.dt = 1.0f / 60.0f;
    if (!file_only) {
        rec = aabb_rec_connect("127.0.0.1", port, &hello);
        if (rec) {
            live = 1;
            printf("streaming to the debugger at 127.0.0.1:%d\n", port);
        } else {
            printf("no debugger listens on 127.0.0.1:%d (%s); writing %s\n", port,
                   strerror(errno), path);
        }
    }
    if (!rec) {
        rec = aabb_rec_open_file(path, &hello);
        if (!rec) {
            fprintf(stderr, "cannot write %s: %s\n", path, aabb_rec_strerror(errno));
            return 1;
        }
        if (file_only) printf("writing %s\n", path);
    }
    for (i = 0; i < 4; i++)
        aabb_rec_static_box(rec, 100000u + (uint32_t)i, walls[i], walls[i] + 2);

    bodies = (body *)malloc(sizeof(body) * (size_t)n);
    if (!bodies) {
        fprintf(stderr, "out of memory\n");
        aabb_rec_close(rec, NULL);
        return 1;
    }
    init_bodies(bodies, n);
    for (step = 0; step < steps; step++) {
        aabb_rec_begin_step(rec);
        if (step % 100 == 99) {
            for (i = n - 1; i >= 0; i--)
                if (!away(step, i)) add_body(rec, bodies, i);
        } else {
            for (i = 0; i < n; i++)
                if (!away(step, i)) add_body(rec, bodies, i);
        }
        aabb_rec_end_step(rec);
        move_bodies(bodies, n);
        if (live && !fast) {
            struct timespec t;
            t.tv_sec = 0;
            t.tv_nsec = 1000000000L / 60;
            nanosleep(&t, NULL);
        }
    }
    free(bodies);
    aabb_rec_close(rec, &st);
    printf("%d steps: %lu sent, %lu dropped, %lu bytes%s%s\n", steps,
           (unsigned long)st.steps_sent, (unsigned long)st.steps_dropped,
           (unsigned long)st.bytes_sent, st.error[0] ? "; " : "", st.error);
    return 0;
}
