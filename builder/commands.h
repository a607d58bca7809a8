/* The subcommands of `zbench`, one per file builder/cmd_*.c. Each takes the arguments after its
 * own name (argv[0] is the subcommand), prints its own output, and returns the process exit
 * status. Errors travel as struct zb_error up to the command, which prints them once. */
#ifndef ZB_COMMANDS_H
#define ZB_COMMANDS_H

int cmd_run(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_image(int argc, char **argv);
int cmd_matrix(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_compare(int argc, char **argv);

/* Print "zbench: <msg>" to stderr; the only place the host prints errors. */
void die_message(const char *msg);

#endif
