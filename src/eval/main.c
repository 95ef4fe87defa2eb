/* main.c — entry point of `bellamy-eval`; everything is in eval_cli.c (so the tests can call it). */
#include "eval.h"

int main(int argc, char **argv) { return bl_eval_main(argc, argv); }
