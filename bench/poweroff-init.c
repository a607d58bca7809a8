/* The floor of a cell (bench/cell-overhead.sh): an init that powers the machine off at once.
 * Booted with the appliance's kernel and machine, it measures what QEMU and the kernel cost
 * before zbench does anything. */
#include <sys/reboot.h>
#include <unistd.h>

int main(void)
{
	static const char msg[] = "floor: init reached\n";

	if (write(2, msg, sizeof(msg) - 1) < 0) {
		/* nothing to do: the console may not exist */
	}
	sync();
	reboot(RB_POWER_OFF);
	return 0;
}
