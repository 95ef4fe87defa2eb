/* sched.h — the DBMLSched scheduler core (placeholder until issue 7 fills it). */
#ifndef BELLAMY_SCHED_H
#define BELLAMY_SCHED_H
#include "bellamy.h"
#endif
