/* forkexec: the corpus's fork+exec program. It forks; the child execs
   /bin/echo (which memspy does not trace: a forked child stops writing the
   stream and programs it execs run untraced), the parent waits for it and
   prints how it ended. Exercises fork, execve in the child, waitpid and
   output written by two processes to one stdout, in a fixed order.
   usage: forkexec [n]   (forks n children one after the other; default 1) */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1;
	for (int i = 0; i < n; i++) {
		char arg[32];
		snprintf(arg, sizeof arg, "child %d", i);
		fflush(stdout); /* nothing buffered may be written twice */
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			execl("/bin/echo", "echo", arg, (char *)NULL);
			perror("execl /bin/echo");
			_exit(127);
		}
		int status;
		if (waitpid(pid, &status, 0) != pid) {
			perror("waitpid");
			return 1;
		}
		if (WIFEXITED(status))
			printf("child %d exited with status %d\n", i, WEXITSTATUS(status));
		else
			printf("child %d ended by signal %d\n", i, WTERMSIG(status));
	}
	return 0;
}
