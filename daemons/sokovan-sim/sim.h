/* sokovan-sim: shared declarations of the program's files.
 * SPDX-License-Identifier: Apache-2.0 */
#ifndef SOKOVAN_SIM_PROG_H
#define SOKOVAN_SIM_PROG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sokovan.h"
#include "sokovan/sched.h"
#include "sokovan/sim.h"

int sim_openb_main(int argc, char **argv);
int sim_trace_main(int argc, char **argv);
int sim_openb_gen_main(int argc, char **argv);
/* "cpu=X,share=X,multi=X,spec=X" (any subset) into o; -1 when bad. */
int sim_vary_parse(skv_sim_openb_vary_options *o, const char *spec);

/* "42", "42-51" or "1,5,9" -> a new array (free()). 0 or -1 on error. */
int sim_parse_seeds(uint64_t **out, size_t *n, const char *text);
double sim_now(void);
void sim_json_str(const char *s);

#endif
