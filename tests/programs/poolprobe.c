/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * poolprobe MODE [ARGS]: fixtures for the slot pool tests
 * (tests/integration/test_pool.py).  Every mode prints "key: value" lines.
 *
 *   ns                 the namespace inodes (ns-ipc, ns-net, ns-uts), the
 *                      allowed CPUs and the hostname
 *   hold SECONDS       ns, then sleep SECONDS (to overlap with other runs)
 *   times SECONDS      start/end CLOCK_MONOTONIC around a sleep of SECONDS
 *   leave              ns, then leave behind what a reused slot must not
 *                      pass on: SysV shm (8 MiB, touched), a semaphore set, a
 *                      message queue holding a message, a POSIX message queue
 *                      (if it can be created), a listening abstract unix
 *                      socket, an abstract unix datagram socket that holds
 *                      itself in flight (SCM_RIGHTS to itself), a daemonized
 *                      grandchild that ignores SIGTERM/SIGHUP; and it tries
 *                      to change the hostname
 *   look               ns, then look for all of that ("absent" or "found")
 *                      and list the other processes of this uid (live ones
 *                      and zombies apart)
 *   ref MIB SECONDS    touch MIB MiB of anonymous memory, then burn SECONDS
 *                      of CPU time
 *   cache FILE MIB     write MIB MiB to FILE (left in the page cache)
 *   shm MIB            create a SysV shm segment of MIB MiB, touch it and
 *                      leave it
 *   cpuchild SECONDS   fork a child that burns SECONDS of CPU time, tells us,
 *                      and keeps spinning; exit as soon as it told us
 *   daemon SECONDS     fork a daemon (setsid, ignores SIGTERM/SIGHUP,
 *                      sleeps), print its pid, then sleep SECONDS
 *   ipc N              for each SysV kind (shm, sem, msg): create one
 *                      object and remove it, create N more, print every id
 *                      in order ("shm-ids: 0 1 2"), remove them
 *   netsend            UDP datagrams to 127.0.0.1, 0.0.0.0, ::1 and ::, TCP
 *                      connects to 127.0.0.1 and ::1 (lo is down: they
 *                      fail, and bump counters); prints what each did
 *   netread            the net namespace's counter files, verbatim:
 *                      /proc/net/snmp, netstat, dev and snmp6 (if there)
 *   kib FILE KIB       write KIB KiB to FILE and leave it
 *   lock FILE          flock FILE exclusively and leave the lock in flight:
 *                      the fd and a socket of a socketpair sent over the
 *                      other, which is sent over the first (a cycle only
 *                      unix GC frees); prints "lock: in flight"
 *   trylock FILE       "trylock: free" or "trylock: held" (flock, LOCK_NB)
 *   memcg              this process's memory cgroup: its memory.stat
 *                      shmem (tmpfs pages charged to it) and its usage
 *   swarm N KIB S      fork N children that each touch KIB KiB of anonymous
 *                      memory and sleep S seconds; wait for all of them and
 *                      print how many exited and how many were killed
 *
 * Built statically: no dynamic loader, so the memory numbers stay small and
 * stable, and it runs in an empty chroot.
 */
#include <dirent.h>
#include <stddef.h>
#include <fcntl.h>
#include <mqueue.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/msg.h>
#include <sys/resource.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"

#define SHM_KEY 0x52475031
#define SEM_KEY 0x52475032
#define MSG_KEY 0x52475033
#define MQ_NAME "/rgtest-pool"
#define SOCK_LISTEN "rgtest-pool-listen"
#define SOCK_SELF "rgtest-pool-self"

static const char *errname(int err)
{
	const char *s = strerrorname_np(err);

	return s ? s : "unknown-errno";
}

static void print_cpus(void)
{
	char line[512];
	FILE *f = fopen("/proc/self/status", "r");

	if (!f) {
		printf("cpus: error %s\n", errname(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "Cpus_allowed_list:", 18) == 0) {
			char *v = line + 18;

			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = '\0';
			printf("cpus: %s\n", v);
		}
	}
	fclose(f);
}

static void print_ns(void)
{
	static const char *const types[] = { "ipc", "net", "uts" };
	char path[64], buf[128], host[256];
	size_t i;

	for (i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		ssize_t n;
		char *lb;

		snprintf(path, sizeof(path), "/proc/self/ns/%s", types[i]);
		n = readlink(path, buf, sizeof(buf) - 1);
		if (n < 0) {
			printf("ns-%s: error %s\n", types[i], errname(errno));
			continue;
		}
		buf[n] = '\0';
		/* "ipc:[4026531839]" -> 4026531839 */
		lb = strchr(buf, '[');
		if (lb) {
			lb++;
			lb[strcspn(lb, "]")] = '\0';
		}
		printf("ns-%s: %s\n", types[i], lb ? lb : buf);
	}
	print_cpus();
	if (gethostname(host, sizeof(host)) < 0)
		printf("hostname: error %s\n", errname(errno));
	else
		printf("hostname: %s\n", host);
}

static void report(const char *key, int ok, int err)
{
	if (ok)
		printf("%s: OK\n", key);
	else
		printf("%s: %s\n", key, errname(err));
}

static void spin_cpu(double secs)
{
	volatile unsigned long sink = 0;
	double wall_start = clock_seconds(CLOCK_MONOTONIC);
	unsigned long i;

	while (clock_seconds(CLOCK_PROCESS_CPUTIME_ID) < secs) {
		for (i = 0; i < 10000; i++)
			sink += i;
		if (clock_seconds(CLOCK_MONOTONIC) - wall_start > 4 * secs + 10)
			break;
	}
}

static socklen_t abstract_addr(struct sockaddr_un *sa, const char *name)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	/* sun_path[0] == '\0': the abstract namespace */
	memcpy(sa->sun_path + 1, name, strlen(name));
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 +
			   strlen(name));
}

/* Bind an abstract unix socket; return the fd or -1 (errno set). */
static int bind_abstract(int type, const char *name)
{
	struct sockaddr_un sa;
	socklen_t len = abstract_addr(&sa, name);
	int fd = socket(AF_UNIX, type, 0);

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, len) < 0) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

/* Send fd to its own address with SCM_RIGHTS: a cycle only unix GC frees. */
static int send_self(int fd, const char *name)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct sockaddr_un sa;
	socklen_t len = abstract_addr(&sa, name);
	char byte = 'x';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_name = &sa,
		.msg_namelen = len,
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		.msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cm;

	memset(&u, 0, sizeof(u));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(fd, &msg, 0) == 1 ? 0 : -1;
}

/* n fds over sock (connected) with SCM_RIGHTS. */
static int send_fds(int sock, const int *fds, size_t n)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * 2)];
		struct cmsghdr align;
	} u;
	char byte = 'x';
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = u.buf,
		.msg_controllen = CMSG_SPACE(sizeof(int) * n),
	};
	struct cmsghdr *cm;

	memset(&u, 0, sizeof(u));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int) * n);
	memcpy(CMSG_DATA(cm), fds, sizeof(int) * n);
	return sendmsg(sock, &msg, 0) == 1 ? 0 : -1;
}

static int do_lock(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), sv[2];

	if (fd < 0 || flock(fd, LOCK_EX) < 0 ||
	    socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0 ||
	    send_fds(sv[0], (int[]){ sv[1], fd }, 2) < 0 ||
	    send_fds(sv[1], (int[]){ sv[0] }, 1) < 0) {
		printf("lock: error %s\n", errname(errno));
		return 1;
	}
	printf("lock: in flight\n");
	return 0;
}

static int do_trylock(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		printf("trylock: error %s\n", errname(errno));
		return 1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		printf("trylock: free\n");
	else
		printf("trylock: %s\n",
		       errno == EWOULDBLOCK ? "held" : errname(errno));
	return 0;
}

/*
 * Fork a daemon: setsid, ignore SIGTERM/SIGHUP, stdio on /dev/null, sleep
 * secs.  Returns its pid (known once it is set up) or -1.
 */
static pid_t start_daemon(double secs)
{
	int sync_pipe[2];
	pid_t pid, daemon_pid = -1;

	if (pipe(sync_pipe) < 0)
		return -1;
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		pid_t gc;
		int null;

		close(sync_pipe[0]);
		setsid();
		gc = fork();
		if (gc != 0)
			_exit(gc < 0);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGINT, SIG_IGN);
		null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
			if (null > 2)
				close(null);
		}
		gc = getpid();
		if (write(sync_pipe[1], &gc, sizeof(gc)) != sizeof(gc))
			_exit(1);
		close(sync_pipe[1]);
		sleep_seconds(secs);
		_exit(0);
	}
	close(sync_pipe[1]);
	waitpid(pid, NULL, 0);
	if (read(sync_pipe[0], &daemon_pid, sizeof(daemon_pid)) !=
	    sizeof(daemon_pid))
		daemon_pid = -1;
	close(sync_pipe[0]);
	return daemon_pid;
}

static int count_lines(const char *path)
{
	char line[1024];
	FILE *f = fopen(path, "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strchr(line, '\n'))
			n++;
	fclose(f);
	return n;
}

static int do_leave(void)
{
	struct sembuf op = { .sem_num = 0, .sem_op = 1, .sem_flg = 0 };
	struct {
		long mtype;
		char mtext[32];
	} m = { .mtype = 1, .mtext = "rgtest-pool message" };
	struct mq_attr attr = { .mq_maxmsg = 1, .mq_msgsize = 16 };
	struct rlimit rl;
	size_t shm_len = 8UL << 20;
	int id, fd, ok;
	char *p;
	mqd_t mq;
	pid_t d;

	print_ns();
	/* First, so that it holds none of the objects below open. */
	d = start_daemon(120);
	if (d > 0)
		printf("leave-daemon: %d\n", (int)d);
	else
		printf("leave-daemon: failed\n");
	ok = sethostname("rgtest-evil", 11) == 0;
	report("sethostname", ok, errno);

	id = shmget(SHM_KEY, shm_len, IPC_CREAT | 0666);
	if (id < 0) {
		printf("leave-shm: %s\n", errname(errno));
	} else {
		p = shmat(id, NULL, 0);
		if (p == (void *)-1) {
			printf("leave-shm: shmat %s\n", errname(errno));
		} else {
			memset(p, 0x5a, shm_len);
			shmdt(p);
			printf("leave-shm: OK\n");
		}
	}

	id = semget(SEM_KEY, 3, IPC_CREAT | 0666);
	if (id >= 0 && semop(id, &op, 1) == 0)
		printf("leave-sem: OK\n");
	else
		printf("leave-sem: %s\n", errname(errno));

	id = msgget(MSG_KEY, IPC_CREAT | 0666);
	if (id >= 0 && msgsnd(id, &m, sizeof(m.mtext), IPC_NOWAIT) == 0)
		printf("leave-msg: OK\n");
	else
		printf("leave-msg: %s\n", errname(errno));

	if (getrlimit(RLIMIT_MSGQUEUE, &rl) == 0)
		printf("rlimit-msgqueue: %llu\n",
		       (unsigned long long)rl.rlim_cur);
	mq = mq_open(MQ_NAME, O_CREAT | O_RDWR, 0666, &attr);
	if (mq == (mqd_t)-1) {
		printf("leave-mq: %s\n", errname(errno));
	} else {
		if (mq_send(mq, "rgtest", 6, 0) == 0)
			printf("leave-mq: OK\n");
		else
			printf("leave-mq: send %s\n", errname(errno));
	}

	fd = bind_abstract(SOCK_STREAM, SOCK_LISTEN);
	if (fd >= 0 && listen(fd, 4) == 0)
		printf("leave-sock-listen: OK\n");
	else
		printf("leave-sock-listen: %s\n", errname(errno));

	fd = bind_abstract(SOCK_DGRAM, SOCK_SELF);
	if (fd >= 0 && send_self(fd, SOCK_SELF) == 0)
		printf("leave-sock-inflight: OK\n");
	else
		printf("leave-sock-inflight: %s\n", errname(errno));

	printf("leave: done\n");
	return 0;
}

static void look_key(const char *key, int id)
{
	if (id >= 0)
		printf("%s: found\n", key);
	else if (errno == ENOENT)
		printf("%s: absent\n", key);
	else
		printf("%s: %s\n", key, errname(errno));
}

static void look_sock(const char *key, int type, const char *name)
{
	int fd = bind_abstract(type, name);

	report(key, fd >= 0, errno);
	if (fd >= 0)
		close(fd);
}

/* The state letter of /proc/PID/stat ('?' if unreadable). */
static char proc_state(const char *pid)
{
	char path[300], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return '?';
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return '?';
	buf[n] = '\0';
	/* "pid (comm) S ...": comm may contain anything, use the last ')' */
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] ? p[2] : '?';
}

/*
 * The other processes of this uid: live ones (other-procs) and zombies not
 * yet reaped by their parent (zombie-procs), "none" if there are none.
 */
static void look_procs(void)
{
	char live[4096] = "", zombies[4096] = "";
	DIR *d = opendir("/proc");
	struct dirent *de;
	uid_t me = getuid();
	char self[32] = "";

	if (!d) {
		printf("other-procs: error %s\n", errname(errno));
		return;
	}
	/* our pid as this /proc numbers it (a slot's keeper gives us our
	 * own PID namespace, the /proc of the host does not) */
	if (readlink("/proc/self", self, sizeof(self) - 1) < 0)
		self[0] = '\0';
	while ((de = readdir(d))) {
		char path[300], *list;
		struct stat st;
		long pid;

		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		pid = strtol(de->d_name, NULL, 10);
		if (pid == getpid() || !strcmp(de->d_name, self))
			continue;
		snprintf(path, sizeof(path), "/proc/%s", de->d_name);
		if (stat(path, &st) < 0 || st.st_uid != me)
			continue;
		list = proc_state(de->d_name) == 'Z' ? zombies : live;
		if (strlen(list) + strlen(de->d_name) + 2 < sizeof(live))
			snprintf(list + strlen(list),
				 sizeof(live) - strlen(list), " %s",
				 de->d_name);
	}
	closedir(d);
	printf("other-procs:%s\n", live[0] ? live : " none");
	printf("zombie-procs:%s\n", zombies[0] ? zombies : " none");
}

static int do_look(void)
{
	mqd_t mq;

	print_ns();
	look_key("shm-key", shmget(SHM_KEY, 0, 0));
	look_key("sem-key", semget(SEM_KEY, 0, 0));
	look_key("msg-key", msgget(MSG_KEY, 0));
	/* the header line does not count */
	printf("sysvipc-shm: %d\n", count_lines("/proc/sysvipc/shm") - 1);
	printf("sysvipc-sem: %d\n", count_lines("/proc/sysvipc/sem") - 1);
	printf("sysvipc-msg: %d\n", count_lines("/proc/sysvipc/msg") - 1);
	mq = mq_open(MQ_NAME, O_RDONLY);
	if (mq != (mqd_t)-1)
		printf("mq: found\n");
	else if (errno == ENOENT)
		printf("mq: absent\n");
	else
		printf("mq: %s\n", errname(errno));
	look_sock("bind-sock-listen", SOCK_STREAM, SOCK_LISTEN);
	look_sock("bind-sock-inflight", SOCK_DGRAM, SOCK_SELF);
	look_procs();
	printf("look: done\n");
	return 0;
}

static int do_ref(long mib, double secs)
{
	long page = sysconf(_SC_PAGESIZE), i;
	size_t len = (size_t)mib << 20;
	char *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		printf("ref: mmap %s\n", errname(errno));
		return 1;
	}
	for (i = 0; i < (long)len; i += page)
		p[i] = (char)i;
	spin_cpu(secs);
	printf("ref: %ld MiB %.3f s\n", mib,
	       clock_seconds(CLOCK_PROCESS_CPUTIME_ID));
	return 0;
}

static int do_cache(const char *path, long mib)
{
	static char buf[1 << 16];
	long i;
	int fd;

	memset(buf, 'c', sizeof(buf));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		printf("cache: open %s\n", errname(errno));
		return 1;
	}
	for (i = 0; i < mib * 16; i++) {
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			printf("cache: write %s\n", errname(errno));
			return 1;
		}
	}
	close(fd);
	printf("cache: wrote %ld MiB\n", mib);
	return 0;
}

static int do_shm(long mib)
{
	size_t len = (size_t)mib << 20;
	int id = shmget(SHM_KEY, len, IPC_CREAT | 0666);
	char *p;

	if (id < 0) {
		printf("shm: %s\n", errname(errno));
		return 1;
	}
	p = shmat(id, NULL, 0);
	if (p == (void *)-1) {
		printf("shm: shmat %s\n", errname(errno));
		return 1;
	}
	memset(p, 0x5a, len);
	shmdt(p);
	printf("shm: left %ld MiB\n", mib);
	return 0;
}

static int do_cpuchild(double secs)
{
	int sync_pipe[2];
	pid_t pid;
	char c;

	if (pipe(sync_pipe) < 0)
		return 1;
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		printf("cpuchild: fork %s\n", errname(errno));
		return 1;
	}
	if (pid == 0) {
		close(sync_pipe[0]);
		spin_cpu(secs);
		if (write(sync_pipe[1], "x", 1) != 1)
			_exit(1);
		close(sync_pipe[1]);
		/* keep burning CPU after the main process is gone */
		spin_cpu(secs + 60);
		_exit(0);
	}
	close(sync_pipe[1]);
	if (read(sync_pipe[0], &c, 1) != 1) {
		printf("cpuchild: child failed\n");
		return 1;
	}
	printf("cpuchild: %d burned %.3f s\n", (int)pid, secs);
	return 0;
}

static int do_daemon(double secs)
{
	pid_t d = start_daemon(120);

	if (d <= 0) {
		printf("daemon: failed\n");
		return 1;
	}
	printf("daemon: %d\n", (int)d);
	fflush(stdout);
	sleep_seconds(secs);
	printf("daemon-main: done\n");
	return 0;
}

typedef int (*ipc_make_fn)(void);
typedef int (*ipc_remove_fn)(int id);

static int make_shm(void)
{
	return shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
}

static int make_sem(void)
{
	return semget(IPC_PRIVATE, 1, IPC_CREAT | 0600);
}

static int make_msg(void)
{
	return msgget(IPC_PRIVATE, IPC_CREAT | 0600);
}

static int remove_shm(int id)
{
	return shmctl(id, IPC_RMID, NULL);
}

static int remove_sem(int id)
{
	return semctl(id, 0, IPC_RMID);
}

static int remove_msg(int id)
{
	return msgctl(id, IPC_RMID, NULL);
}

/*
 * The ids a kind's objects get: what a run can learn about the
 * namespace's allocation cursor, so about earlier runs in it.
 */
static int ipc_kind(const char *kind, ipc_make_fn make, ipc_remove_fn rm,
		    long n)
{
	int ids[65], i, first = make();

	if (n < 0 || n > 64)
		return 2;
	printf("%s-ids:", kind);
	if (first < 0) {
		printf(" %s\n", errname(errno));
		return 1;
	}
	printf(" %d", first);
	rm(first);
	for (i = 0; i < n; i++) {
		ids[i] = make();
		if (ids[i] < 0)
			printf(" %s", errname(errno));
		else
			printf(" %d", ids[i]);
	}
	printf("\n");
	for (i = 0; i < n; i++)
		if (ids[i] >= 0)
			rm(ids[i]);
	return 0;
}

static int do_ipc(long n)
{
	int rc = ipc_kind("shm", make_shm, remove_shm, n);

	rc |= ipc_kind("sem", make_sem, remove_sem, n);
	rc |= ipc_kind("msg", make_msg, remove_msg, n);
	return rc;
}

/* Send a few datagrams to addr: the result of the socket and the sends. */
static void udp_to(const char *key, int family, const void *sa, socklen_t len)
{
	int fd = socket(family, SOCK_DGRAM, 0), i, ok = 0, err = 0;

	if (fd < 0) {
		printf("%s: socket %s\n", key, errname(errno));
		return;
	}
	for (i = 0; i < 5; i++) {
		if (sendto(fd, "x", 1, 0, sa, len) == 1)
			ok++;
		else
			err = errno;
	}
	close(fd);
	printf("%s: sent %d, %s\n", key, ok, err ? errname(err) : "no error");
}

static void tcp_to(const char *key, int family, const void *sa, socklen_t len)
{
	int fd = socket(family, SOCK_STREAM, 0);

	if (fd < 0) {
		printf("%s: socket %s\n", key, errname(errno));
		return;
	}
	report(key, connect(fd, sa, len) == 0, errno);
	close(fd);
}

static int do_netsend(void)
{
	struct sockaddr_in v4 = { .sin_family = AF_INET, .sin_port = htons(9) };
	struct sockaddr_in6 v6 = { .sin6_family = AF_INET6,
				   .sin6_port = htons(9) };

	v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	udp_to("udp-127.0.0.1", AF_INET, &v4, sizeof(v4));
	tcp_to("tcp-127.0.0.1", AF_INET, &v4, sizeof(v4));
	v4.sin_addr.s_addr = htonl(INADDR_ANY);
	udp_to("udp-0.0.0.0", AF_INET, &v4, sizeof(v4));
	v6.sin6_addr = in6addr_loopback;
	udp_to("udp-::1", AF_INET6, &v6, sizeof(v6));
	tcp_to("tcp-::1", AF_INET6, &v6, sizeof(v6));
	v6.sin6_addr = in6addr_any;
	udp_to("udp-::", AF_INET6, &v6, sizeof(v6));
	printf("netsend: done\n");
	return 0;
}

static void print_file(const char *path)
{
	char buf[4096];
	size_t n;
	FILE *f = fopen(path, "r");

	if (!f) {
		printf("== %s: %s\n", path, errname(errno));
		return;
	}
	printf("== %s\n", path);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, stdout);
	fclose(f);
}

static int do_netread(void)
{
	print_file("/proc/net/snmp");
	print_file("/proc/net/netstat");
	print_file("/proc/net/dev");
	if (access("/proc/net/snmp6", F_OK) == 0)
		print_file("/proc/net/snmp6");
	return 0;
}

static int do_kib(const char *path, long kib)
{
	static char buf[1024];
	long i;
	int fd;

	memset(buf, 'k', sizeof(buf));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0) {
		printf("kib: open %s\n", errname(errno));
		return 1;
	}
	for (i = 0; i < kib; i++) {
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			printf("kib: write %s\n", errname(errno));
			return 1;
		}
	}
	close(fd);
	printf("kib: wrote %ld KiB\n", kib);
	return 0;
}

/* The memory cgroup's directory: v1 "N:memory:/path", v2 "0::/path". */
static int memcg_dir(char *dir, size_t len)
{
	char line[512];
	FILE *f = fopen("/proc/self/cgroup", "r");
	int found = 0;

	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f)) {
		char *ctrl = strchr(line, ':'), *path;

		if (!ctrl)
			continue;
		path = strchr(++ctrl, ':');
		if (!path)
			continue;
		*path++ = '\0';
		path[strcspn(path, "\n")] = '\0';
		if (!strcmp(ctrl, "memory"))
			found = snprintf(dir, len, "/sys/fs/cgroup/memory%s",
					 path) > 0;
		else if (!*ctrl && line[0] == '0' &&
			 access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0)
			found = snprintf(dir, len, "/sys/fs/cgroup%s", path) >
				0;
	}
	fclose(f);
	return found ? 0 : -1;
}

static void print_key(const char *dir, const char *file, const char *key,
		      const char *name)
{
	char path[600], line[256];
	size_t klen = strlen(key);
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	f = fopen(path, "r");
	if (!f) {
		printf("%s: %s\n", name, errname(errno));
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		if (!klen || (!strncmp(line, key, klen) && line[klen] == ' ')) {
			printf("%s: %s", name, line + (klen ? klen + 1 : 0));
			fclose(f);
			return;
		}
	}
	fclose(f);
	printf("%s: absent\n", name);
}

static int do_memcg(void)
{
	char dir[512];

	if (memcg_dir(dir, sizeof(dir)) < 0) {
		printf("memcg: unknown\n");
		return 1;
	}
	print_key(dir, "memory.stat", "shmem", "memcg-shmem");
	if (access("/sys/fs/cgroup/cgroup.controllers", F_OK) == 0)
		print_key(dir, "memory.current", "", "memcg-usage");
	else
		print_key(dir, "memory.usage_in_bytes", "", "memcg-usage");
	return 0;
}

/* Many small processes: each one far smaller than a keeper. */
static int do_swarm(long n, long kib, double secs)
{
	long exited = 0, killed = 0;
	int status;

	for (long i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			char *p = malloc((size_t)kib << 10);

			if (p)
				memset(p, 1, (size_t)kib << 10);
			sleep_seconds(secs);
			_exit(p ? 0 : 1);
		}
		if (pid < 0)
			break;
	}
	while (wait(&status) > 0) {
		if (WIFSIGNALED(status))
			killed++;
		else
			exited++;
	}
	printf("swarm-exited: %ld\nswarm-killed: %ld\n", exited, killed);
	return 0;
}

static int do_times(double secs)
{
	printf("start: %.6f\n", clock_seconds(CLOCK_MONOTONIC));
	fflush(stdout);
	sleep_seconds(secs);
	printf("end: %.6f\n", clock_seconds(CLOCK_MONOTONIC));
	return 0;
}

int main(int argc, char **argv)
{
	static const char usage[] =
		"ns | hold S | times S | leave | look | ref MIB S | "
		"cache FILE MIB | shm MIB | cpuchild S | daemon S | ipc N | "
		"netsend | netread | kib FILE KIB | memcg | swarm N KIB S | "
		"lock FILE | trylock FILE";
	const char *mode;

	if (argc < 2)
		die_usage(argv[0], usage);
	mode = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (!strcmp(mode, "ns") && argc == 2) {
		print_ns();
		return 0;
	}
	if (!strcmp(mode, "hold") && argc == 3) {
		print_ns();
		sleep_seconds(parse_seconds(argv[2]));
		return 0;
	}
	if (!strcmp(mode, "times") && argc == 3)
		return do_times(parse_seconds(argv[2]));
	if (!strcmp(mode, "leave") && argc == 2)
		return do_leave();
	if (!strcmp(mode, "look") && argc == 2)
		return do_look();
	if (!strcmp(mode, "ref") && argc == 4)
		return do_ref(parse_long(argv[2]), parse_seconds(argv[3]));
	if (!strcmp(mode, "cache") && argc == 4)
		return do_cache(argv[2], parse_long(argv[3]));
	if (!strcmp(mode, "shm") && argc == 3)
		return do_shm(parse_long(argv[2]));
	if (!strcmp(mode, "cpuchild") && argc == 3)
		return do_cpuchild(parse_seconds(argv[2]));
	if (!strcmp(mode, "daemon") && argc == 3)
		return do_daemon(parse_seconds(argv[2]));
	if (!strcmp(mode, "ipc") && argc == 3)
		return do_ipc(parse_long(argv[2]));
	if (!strcmp(mode, "netsend") && argc == 2)
		return do_netsend();
	if (!strcmp(mode, "netread") && argc == 2)
		return do_netread();
	if (!strcmp(mode, "kib") && argc == 4)
		return do_kib(argv[2], parse_long(argv[3]));
	if (!strcmp(mode, "lock") && argc == 3)
		return do_lock(argv[2]);
	if (!strcmp(mode, "trylock") && argc == 3)
		return do_trylock(argv[2]);
	if (!strcmp(mode, "memcg") && argc == 2)
		return do_memcg();
	if (!strcmp(mode, "swarm") && argc == 5)
		return do_swarm(parse_long(argv[2]), parse_long(argv[3]),
				parse_seconds(argv[4]));
	die_usage(argv[0], usage);
	return 2;
}
