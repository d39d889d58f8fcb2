/*
 * The first process of a sandboxed command's PID namespace.
 *
 * agent-host starts every sandboxed command as PID 1 of a PID namespace of its own, so
 * that no process the command starts can outlive it: when PID 1 exits, the kernel kills
 * everything else in the namespace, whatever it did to escape (`setsid`, `env -i`, a
 * double fork). A command run as PID 1 itself would change meaning (PID 1 ignores the
 * signals it has no handler for, `kill $$` included, and inherits every orphan), so this
 * program is PID 1 instead: it starts the command, reaps whatever is orphaned to it and
 * exits as soon as the command has.
 *
 * It is compiled by build.rs, embedded in agent-host and executed from a sealed memfd,
 * already inside the sandbox (after the mounts, Landlock and seccomp): it holds nothing
 * the command does not.
 *
 * Usage: agent-host-init REPORT_FD LIFELINE_FD START_FD PROGRAM ARGV0 [ARGS...]
 *  - REPORT_FD: a pipe to agent-host, written three 4-byte words: 0 as soon as this runs
 *    (its exec done, so agent-host may write its /proc files); then 0 once PROGRAM runs,
 *    or the errno of its failed execve; then the command's wait status, just before exiting.
 *  - LIFELINE_FD: the read end of this command's own pipe, whose write end only agent-host
 *    holds. When agent-host is gone (killed, crashed) or done with the command, it hangs
 *    up and this exits, ending the command.
 *  - START_FD: a pipe from agent-host, which writes one byte once the command may start
 *    (after it has written this process's user namespace maps, which only a process
 *    outside the namespace can).
 * All three are close-on-exec from the start, so the command never inherits them; and once
 * the maps are written this process makes itself non-dumpable, so the command (the same
 * user, without capabilities over it) can neither reach them through /proc/1/fd or
 * pidfd_getfd nor trace this process. The environment is the command's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

/* Exit codes of this program's own failures (the command's are passed through). */
#define USAGE 125
#define NOT_RUN 127

static int parse_fd(const char *text) {
    int value = 0;
    if (*text == '\0') return -1;
    for (; *text; text++) {
        if (*text < '0' || *text > '9' || value > 100000) return -1;
        value = value * 10 + (*text - '0');
    }
    return value;
}

static void report(int fd, int32_t value) {
    const char *bytes = (const char *)&value;
    size_t done = 0;
    while (done < sizeof value) {
        ssize_t n = write(fd, bytes + done, sizeof value - done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;
        done += (size_t)n;
    }
}

/* In the forked child: the command, or `/bin/sh PROGRAM ARGS...` for a script without an
 * interpreter line (as execvp does). Writes its errno to `failed` when neither runs. */
static void run_command(const char *program, char **argv, char **envp, int failed) {
    execve(program, argv, envp);
    if (errno == ENOEXEC) {
        int count = 0;
        while (argv[count]) count++;
        /* count + 2: "/bin/sh", PROGRAM, ARGS... (argv without its first), NULL. */
        char *shell[count + 2];
        shell[0] = "/bin/sh";
        shell[1] = (char *)program;
        for (int i = 1; i < count; i++) shell[i + 1] = argv[i];
        shell[count + 1] = NULL;
        execve("/bin/sh", shell, envp);
    }
    int32_t error = errno ? errno : EINVAL;
    report(failed, error);
    _exit(NOT_RUN);
}

int main(int argc, char **argv, char **envp) {
    if (argc < 6) return USAGE;
    int report_fd = parse_fd(argv[1]);
    int lifeline = parse_fd(argv[2]);
    int start = parse_fd(argv[3]);
    if (report_fd < 0 || lifeline < 0 || start < 0) return USAGE;
    if (fcntl(report_fd, F_SETFD, FD_CLOEXEC) != 0 || fcntl(lifeline, F_SETFD, FD_CLOEXEC) != 0 ||
        fcntl(start, F_SETFD, FD_CLOEXEC) != 0)
        return USAGE;
    report(report_fd, 0);
    char go = 0;
    ssize_t got;
    do got = read(start, &go, 1);
    while (got < 0 && errno == EINTR);
    /* End of file instead of the byte: agent-host gave up on this command. */
    if (got != 1) return USAGE;
    close(start);
    /* Until now agent-host needed this process's /proc files (the maps); from now on the
     * command must not reach them: its descriptors, its memory. */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) {
        report(report_fd, errno);
        return USAGE;
    }

    /* Every signal stays blocked here, pending for good: agent-host signals the command's
     * process group, which the command is in too, and kills this with SIGKILL, which no
     * mask stops. SIGCHLD is read through a signalfd. */
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &all, NULL);
    int sigchld = -1;
    {
        sigset_t child_signal;
        sigemptyset(&child_signal);
        sigaddset(&child_signal, SIGCHLD);
        sigchld = signalfd(-1, &child_signal, SFD_CLOEXEC | SFD_NONBLOCK);
    }
    int exec_result[2];
    if (sigchld < 0 || pipe2(exec_result, O_CLOEXEC) != 0) {
        report(report_fd, errno ? errno : EINVAL);
        return USAGE;
    }

    pid_t command = fork();
    if (command < 0) {
        report(report_fd, errno);
        return USAGE;
    }
    if (command == 0) {
        close(exec_result[0]);
        sigprocmask(SIG_SETMASK, &none, NULL);
        run_command(argv[4], argv + 5, envp, exec_result[1]);
    }

    /* The pipe closes without a word when the command's execve succeeded. */
    close(exec_result[1]);
    int32_t exec_error = 0;
    ssize_t n;
    do n = read(exec_result[0], &exec_error, sizeof exec_error);
    while (n < 0 && errno == EINTR);
    if (n != (ssize_t)sizeof exec_error) exec_error = 0;
    close(exec_result[0]);
    report(report_fd, exec_error);
    if (exec_error != 0) return NOT_RUN;

    for (;;) {
        int status;
        pid_t pid;
        while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
            if (pid == command) {
                report(report_fd, status);
                /* Exiting ends every other process of the namespace. */
                return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
            }
        }
        struct pollfd watched[2] = {
            {.fd = sigchld, .events = POLLIN},
            {.fd = lifeline, .events = POLLIN},
        };
        if (poll(watched, 2, -1) < 0) {
            if (errno == EINTR) continue;
            return USAGE;
        }
        /* Nobody writes to the lifeline; its end of file is agent-host hanging up. */
        if (watched[1].revents & (POLLHUP | POLLERR | POLLNVAL)) return 128 + SIGKILL;
        if (watched[1].revents & POLLIN) {
            char ignored[64];
            if (read(lifeline, ignored, sizeof ignored) == 0) return 128 + SIGKILL;
        }
        struct signalfd_siginfo info;
        while (read(sigchld, &info, sizeof info) > 0) {
        }
    }
}
