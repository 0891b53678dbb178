/* consumer.c: a program built against the CMake target aabb_recorder::aabb_recorder (see
 * CMakeLists.txt beside it): writes 10 steps of 3 boxes to the stream file it is given,
 * checks what the recorder says it did against the file, and exits 1 when they differ. */
#define AABB_RECORDER_IMPLEMENTATION
#include "aabb_recorder.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv) {
    aabb_rec_hello hello = {"cmake consumer " AABB_REC_VERSION, "m", 2, 1.0f / 60.0f};
    struct aabb_rec_stats st;
    char magic[8];
    long size;
    FILE *f;
    aabb_rec *rec;
    int step;
    uint32_t id;
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE\n", argv[0]);
        return 2;
    }
    rec = aabb_rec_open_file(argv[1], &hello);
    if (!rec) {
        fprintf(stderr, "cannot write %s: %s\n", argv[1], aabb_rec_strerror(errno));
        return 1;
    }
    for (step = 0; step < 10; step++) {
        aabb_rec_begin_step(rec);
        for (id = 1; id <= 3; id++) {
            float min[2], max[2];
            min[0] = (float)id * 2.0f + (float)step * 0.1f;
            min[1] = 0.0f;
            max[0] = min[0] + 1.0f;
            max[1] = 1.0f;
            aabb_rec_add_box(rec, id, min, max);
        }
        aabb_rec_end_step(rec);
    }
    aabb_rec_close(rec, &st);

    f = fopen(argv[1], "rb");
    if (!f || fread(magic, 1, 8, f) != 8 || memcmp(magic, "AABBSTRM", 8) != 0) {
        fprintf(stderr, "%s does not start with the stream's magic\n", argv[1]);
        return 1;
    }
    fseek(f, 0, SEEK_END);
    size = ftell(f);
    fclose(f);
    if (size != (long)st.bytes_sent) {
        fprintf(stderr, "the file has %ld bytes, the recorder says it sent %lu\n", size,
                (unsigned long)st.bytes_sent);
        return 1;
    }
    printf("consumer: %lu steps sent, %lu dropped, %lu rejected, %ld bytes in the file\n",
           (unsigned long)st.steps_sent, (unsigned long)st.steps_dropped,
           (unsigned long)st.boxes_rejected, size);
    return st.steps_sent == 10 && st.steps_dropped == 0 ? 0 : 1;
}
