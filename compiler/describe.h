/* describe: a compiled program for people (text) and for programs (--json, the whole plan as
 * one JSON document). Works on a Plan, so it serves .npubin files and in-memory compiles. */
#ifndef NPU_DESCRIBE_H
#define NPU_DESCRIBE_H

#include <stdio.h>
#include "compiler/plan.h"

void describe_text(FILE *f, const Plan *p);
void describe_json(FILE *f, const Plan *p);

#endif
