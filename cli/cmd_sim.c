// SPDX-License-Identifier: MIT
/*
 * capvisor sim SCENARIO.json [--out RESULT.json] [--trace TRACE.json]
 *
 * Exit status: 0 done, 1 I/O error while writing, 2 usage or invalid
 * scenario (the message names the field).
 */
#include "sim/sim.h"
#include "cli/commands.h"
#include "util/paths.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
	fprintf(f, "usage: capvisor sim SCENARIO.json [--out RESULT.json] [--trace TRACE.json]\n"
		   "  Runs the scheduling engine on a scenario in virtual time and prints the\n"
		   "  result as JSON (to stdout without --out). --trace writes a Chrome/Perfetto\n"
		   "  trace (one track per pCPU). Format: docs/sim-scenarios.md.\n\n"
		   "options:\n"
		   "  --out FILE     write the result to FILE instead of stdout\n"
		   "  --trace FILE   write a Chrome/Perfetto trace to FILE\n"
		   "  --help, -h     show this help\n"
		   "  --version      print the version\n\n"
		   "exit status: 0 done, 1 I/O error while writing, 2 usage, bad path or\n"
		   "invalid scenario\n");
}

static int parse_args(int argc, char **argv, const char **scenario, const char **out,
		      const char **trace)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage(stdout);
			return 1;
		}
		if (!strcmp(argv[i], "--version"))
			return cmd_print_version() + 1;
		if (!strcmp(argv[i], "--out") || !strcmp(argv[i], "--trace")) {
			if (i + 1 >= argc) {
				fprintf(stderr, "capvisor sim: %s needs a file name\n", argv[i]);
				return -1;
			}
			*(!strcmp(argv[i], "--out") ? out : trace) = argv[i + 1];
			i++;
		} else if (argv[i][0] == '-' && argv[i][1]) {
			fprintf(stderr, "capvisor sim: unknown option '%s'\n", argv[i]);
			return -1;
		} else if (*scenario) {
			fprintf(stderr, "capvisor sim: more than one scenario given ('%s')\n",
				argv[i]);
			return -1;
		} else {
			*scenario = argv[i];
		}
	}
	if (!*scenario) {
		usage(stderr);
		return -1;
	}
	return 0;
}

static int write_result(const struct sim *sim, FILE *f)
{
	int ret = sim_write_result(sim, f);

	if (f != stdout && fclose(f))
		ret = -1;
	if (ret) {
		fprintf(stderr, "capvisor sim: writing the result failed\n");
		return 1;
	}
	return 0;
}

/* --out and --trace are opened before the run, so a bad path costs no simulation. */
static int open_outputs(const char *out, const char *trace, FILE **out_f, FILE **trace_f)
{
	char err[512];

	*out_f = stdout;
	*trace_f = NULL;
	if (out && !(*out_f = path_fopen_output_keep("--out", out, err, sizeof(err))))
		goto fail;
	if (trace && !(*trace_f = path_fopen_output_keep("--trace", trace, err, sizeof(err)))) {
		if (*out_f != stdout)
			fclose(*out_f);
		goto fail;
	}
	/* Both accepted: only now is either emptied. */
	if ((out && ftruncate(fileno(*out_f), 0)) || (trace && ftruncate(fileno(*trace_f), 0))) {
		snprintf(err, sizeof(err), "cannot truncate the output: %s", strerror(errno));
		if (*out_f != stdout)
			fclose(*out_f);
		if (*trace_f)
			fclose(*trace_f);
		goto fail;
	}
	return 0;
fail:
	fprintf(stderr, "capvisor sim: %s\n", err);
	return -1;
}

int cmd_sim(int argc, char **argv)
{
	const char *scenario = NULL, *out = NULL, *trace = NULL;
	struct sim_scenario sc;
	FILE *out_f, *trace_f;
	struct sim sim;
	char err[SIM_ERR_LEN];
	int ret;

	ret = parse_args(argc, argv, &scenario, &out, &trace);
	if (ret)
		return ret > 0 ? 0 : 2;
	if (sim_scenario_load(scenario, &sc, err, sizeof(err))) {
		fprintf(stderr, "capvisor sim: %s\n", err);
		return 2;
	}
	if (open_outputs(out, trace, &out_f, &trace_f)) {
		sim_scenario_free(&sc);
		return 2;
	}
	if (sim_setup(&sim, &sc, trace_f, err, sizeof(err))) {
		fprintf(stderr, "capvisor sim: %s\n", err);
		if (sim.trace)
			trace_close(sim.trace, 0);
		else if (trace_f)
			fclose(trace_f);
		if (out_f != stdout)
			fclose(out_f);
		sim_teardown(&sim);
		sim_scenario_free(&sc);
		return 2;
	}
	sim_run(&sim);
	ret = 0;
	if (sim.trace && trace_close(sim.trace, sc.duration_ns)) {
		fprintf(stderr, "capvisor sim: --trace %s: write failed\n", trace);
		ret = 1;
	}
	sim.trace = NULL;
	if (!ret)
		ret = write_result(&sim, out_f);
	else if (out_f != stdout)
		fclose(out_f);
	sim_teardown(&sim);
	sim_scenario_free(&sc);
	return ret;
}
