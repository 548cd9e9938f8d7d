/*
 * test_tsgrep_mpi.c - tsgrep-mpi under `mpirun --oversubscribe -np 1, 2
 * and 4` against tsgrep on generated data (tests/mpi/gen_tree.sh: a tree
 * of small files, big files with long lines, empty and binary files, a
 * file that cannot be opened, a sparse file past 4 GiB): stdout byte for
 * byte, tsgrep's messages and the exit status, for a matrix of options
 * (tests/mpi/tsgrep_mpi.sh); and the same job through Slurm's srun on a
 * one-node cluster the test starts and stops (tests/mpi/slurm.sh).
 *
 * MPI and Slurm are required: without mpirun, srun or a built tsgrep-mpi the test fails
 * (scripts/install-deps.sh installs Open MPI; CI runs it).  Sanitizer
 * builds run Open MPI's own leaks and races unreported (LSan off,
 * tests/mpi/tsan.supp), never tsgrep's: the suppressions name Open MPI's
 * libraries only.
 * A sanitized tsgrep reads the sparse file's 4 GiB of zeros for minutes:
 * as test_tsgrep_cli does, sanitizer builds leave that file out (the
 * offsets past 4 GiB are checked by the plain build, in CI too).
 * Environment: BUILD (tests/run-tests.sh) locates the programs.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testsupport.h"

static char data[64];
static const char *build;

static int run(const char *cmd)
{
	return test_system("test_tsgrep_mpi", cmd);
}

static int setup(void **state)
{
	char cmd[512], tsgrep[512];

	(void)state;
	build = getenv("BUILD");
	if (!build)
		build = "build/default";
	snprintf(tsgrep, sizeof(tsgrep), "%s/bin/tsgrep", build);
	strcpy(data, "/tmp/tsgrep-mpi-data.XXXXXX");
	if (!mkdtemp(data))
		return -1;
	snprintf(cmd, sizeof(cmd), "sh tests/mpi/gen_tree.sh %s%s", data,
		 test_binary_is_sanitized(tsgrep) ? " no4g" : "");
	return run(cmd) ? -1 : 0;
}

static int teardown(void **state)
{
	char cmd[512];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", data);
	return run(cmd) ? -1 : 0;
}

static void compare(int np)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "sh tests/mpi/tsgrep_mpi.sh %s %d %s", build,
		 np, data);
	assert_int_equal(run(cmd), 0);
}

static void test_np1(void **state)
{
	(void)state;
	compare(1);
}

static void test_np2(void **state)
{
	(void)state;
	compare(2);
}

static void test_np4(void **state)
{
	(void)state;
	compare(4);
}

static void test_srun(void **state)
{
	char cmd[1024];

	(void)state;
	snprintf(cmd, sizeof(cmd), "sh tests/mpi/slurm.sh %s %s", build, data);
	assert_int_equal(run(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_np1),
		cmocka_unit_test(test_np2),
		cmocka_unit_test(test_np4),
		cmocka_unit_test(test_srun),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
