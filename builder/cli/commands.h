/* The subcommands of `zbench`, one per file builder/cli/cmd_*.c. Each takes the arguments after its
 * own name (argv[0] is the subcommand), prints its own output, and returns the process exit
 * status. Errors travel as struct zb_error up to the command, which prints them once. */
#ifndef ZB_COMMANDS_H
#define ZB_COMMANDS_H

#include <stddef.h>

int cmd_run(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_slurm(int argc, char **argv);
int cmd_image(int argc, char **argv);
int cmd_matrix(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_bisect(int argc, char **argv);
int cmd_history(int argc, char **argv);

/* Each command's option table (builder/cli/options.h). */
struct cli_command;
extern const struct cli_command cmd_run_command;
extern const struct cli_command cmd_merge_command;
extern const struct cli_command cmd_report_command;
extern const struct cli_command cmd_export_command;
extern const struct cli_command cmd_replay_command;
extern const struct cli_command cmd_doctor_command;
extern const struct cli_command cmd_slurm_command;
extern const struct cli_command cmd_bisect_command;
extern const struct cli_command cmd_compare_command;
extern const struct cli_command cmd_history_command;
extern const struct cli_command cmd_image_command;
extern const struct cli_command cmd_matrix_command;

/* One subcommand: its name, its entry point, the one line `zbench --help` shows, and its option
 * table (usage, man page and completion: gen_docs reads it). */
struct zb_command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
	const struct cli_command *options;
};

/* Every subcommand, in the order `zbench --help` lists them (builder/cli/commands.c). */
extern const struct zb_command zb_commands[];
extern const size_t zb_n_commands;

#endif
