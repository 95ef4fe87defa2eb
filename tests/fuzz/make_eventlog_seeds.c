/* make_eventlog_seeds.c — writes the seed corpus of fuzz_eventlog (tests/fuzz/corpus_eventlog/): small
 * event logs made by tests/eventlog_gen.c, plain and encoded by each codec, the first byte picking the
 * codec as fuzz_eventlog reads it (0 zstd, 1 lz4, 2 snappy, 3 lz4 .inprogress, 4 a rolling log's zstd
 * part). Usage: make_eventlog_seeds SOURCE_ROOT. Not run by the tests. */
#include "eventlog_gen.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void seed(const char *root, const char *name, unsigned char pick, const elg_buf *body) {
    char path[4096];
    snprintf(path, sizeof path, "%s/tests/fuzz/corpus_eventlog/%s", root, name);
    elg_buf b = {0};
    if (pick != 0xFF) elg_add(&b, &pick, 1);
    elg_add(&b, body->p, body->n);
    elg_write_raw(path, b.p, b.n);
    elg_free(&b);
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: make_eventlog_seeds SOURCE_ROOT\n");
        return 2;
    }
    elg_buf log = {0}, old = {0}, z = {0}, l4 = {0}, sn = {0}, cut = {0};
    elg_small_log(&log);
    /* Spark 1.x's shape: block managers only, properties as [key, value] pairs, a failed job */
    elg_logstart(&old, "1.5.1");
    elg_printf(&old, "{\"Event\":\"SparkListenerEnvironmentUpdate\",\"Spark Properties\":[[\"spark.master\","
                     "\"spark://m:7077\"],[\"spark.executor.memory\",\"512m\"]],\"System Properties\":"
                     "[[\"sun.java.command\",\"org.apache.spark.deploy.SparkSubmit --class M a.jar x\"]]}\n");
    elg_appstart(&old, "old", "app-20160101-0001", NULL, 100);
    elg_bm_add(&old, "<driver>", "d", 101);
    elg_bm_add(&old, "0", "w1", 102);
    elg_bm_add(&old, "1", "w2", 103);
    elg_bm_del(&old, "0", 104);
    elg_job_end(&old, 0, "Job aborted\nat x");
    elg_printf(&old, "{\"Event\":\"SparkListenerSomethingNew\",\"x\":1}\n");
    elg_append(&old, 200);
    elg_zstd(log.p, log.n, 1, &z);
    elg_lz4(log.p, log.n, 256, &l4);
    elg_snappy(log.p, log.n, 512, &sn);
    elg_add(&cut, l4.p, l4.n / 2);
    seed(argv[1], "plain.log", 0xFF, &log);
    seed(argv[1], "spark1.log", 0xFF, &old);
    seed(argv[1], "zstd.seed", 0, &z);
    seed(argv[1], "lz4.seed", 1, &l4);
    seed(argv[1], "snappy.seed", 2, &sn);
    seed(argv[1], "lz4-inprogress.seed", 3, &cut);
    seed(argv[1], "rolling.seed", 4, &z);
    elg_free(&log);
    elg_free(&old);
    elg_free(&z);
    elg_free(&l4);
    elg_free(&sn);
    elg_free(&cut);
    return 0;
}
