/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * From a runguard.Config (Python, immutable, normalized by config.py) to a
 * struct rg_config, one setter per attribute. Every run builds its own, so
 * no C object is shared between threads and one Config serves many runs.
 */
#include "binding.h"

/* What a field's setter failed with. */
enum { SET_OK = 0, SET_LIBRARY = -1, SET_PYTHON = -2 };

typedef int (*str_setter)(struct rg_config *, const char *, struct rg_error *);
typedef int (*u64_setter)(struct rg_config *, uint64_t, struct rg_error *);
typedef int (*limit_setter)(struct rg_config *, double, double,
			    struct rg_error *);
typedef void (*bool_setter)(struct rg_config *, bool);

enum field_kind { PATH, U64, LIMIT, BOOL, SPECIAL };

struct field {
	const char *name;
	enum field_kind kind;
	union {
		str_setter str;
		u64_setter u64;
		limit_setter limit;
		bool_setter flag;
		int (*special)(struct rg_config *, PyObject *,
			       struct rg_error *);
	} set;
};

int rgpy_optional_path(PyObject *obj, void *out)
{
	PyObject **bytes = out;

	if (obj == Py_None) {
		*bytes = NULL;
		return 1;
	}
	return PyUnicode_FSConverter(obj, bytes);
}

static int set_path(const struct field *f, struct rg_config *cfg,
		    PyObject *value, struct rg_error *err)
{
	PyObject *bytes;
	int rc;

	if (!PyUnicode_FSConverter(value, &bytes))
		return SET_PYTHON;
	rc = f->set.str(cfg, PyBytes_AS_STRING(bytes), err);
	Py_DECREF(bytes);
	return rc < 0 ? SET_LIBRARY : SET_OK;
}

static int set_u64(const struct field *f, struct rg_config *cfg,
		   PyObject *value, struct rg_error *err)
{
	unsigned long long n = PyLong_AsUnsignedLongLong(value);

	if (n == (unsigned long long)-1 && PyErr_Occurred())
		return SET_PYTHON;
	return f->set.u64(cfg, n, err) < 0 ? SET_LIBRARY : SET_OK;
}

static int set_limit(const struct field *f, struct rg_config *cfg,
		     PyObject *value, struct rg_error *err)
{
	double soft, hard;

	if (!PyArg_ParseTuple(value, "dd", &soft, &hard))
		return SET_PYTHON;
	return f->set.limit(cfg, soft, hard, err) < 0 ? SET_LIBRARY : SET_OK;
}

static int set_bool(const struct field *f, struct rg_config *cfg,
		    PyObject *value, struct rg_error *err)
{
	int truth = PyObject_IsTrue(value);

	(void)err;
	if (truth < 0)
		return SET_PYTHON;
	f->set.flag(cfg, truth);
	return SET_OK;
}

static int set_id(PyObject *value, unsigned int *id)
{
	unsigned long n = PyLong_AsUnsignedLong(value);

	if (n == (unsigned long)-1 && PyErr_Occurred())
		return SET_PYTHON;
	if (n > UINT_MAX) {
		PyErr_SetString(PyExc_OverflowError, "id out of range");
		return SET_PYTHON;
	}
	*id = (unsigned int)n;
	return SET_OK;
}

static int set_user(struct rg_config *cfg, PyObject *value,
		    struct rg_error *err)
{
	unsigned int uid;

	if (set_id(value, &uid) < 0)
		return SET_PYTHON;
	return rg_config_set_user(cfg, uid, err) < 0 ? SET_LIBRARY : SET_OK;
}

static int set_group(struct rg_config *cfg, PyObject *value,
		     struct rg_error *err)
{
	unsigned int gid;

	if (set_id(value, &gid) < 0)
		return SET_PYTHON;
	return rg_config_set_group(cfg, gid, err) < 0 ? SET_LIBRARY : SET_OK;
}

/* A stream: str/bytes is a path, anything else a fd or has fileno(). */
static int set_stream(struct rg_config *cfg, PyObject *value, int stream,
		      struct rg_error *err)
{
	PyObject *bytes;
	int fd, rc;

	if (PyUnicode_Check(value) || PyBytes_Check(value)) {
		if (!PyUnicode_FSConverter(value, &bytes))
			return SET_PYTHON;
		if (stream < 0)
			rc = rg_config_set_input_file(cfg,
						      PyBytes_AS_STRING(bytes),
						      err);
		else
			rc = rg_config_set_output_file(cfg, stream,
						       PyBytes_AS_STRING(bytes),
						       err);
		Py_DECREF(bytes);
		return rc < 0 ? SET_LIBRARY : SET_OK;
	}
	fd = PyObject_AsFileDescriptor(value);
	if (fd < 0)
		return SET_PYTHON;
	if (stream < 0)
		rc = rg_config_set_input_fd(cfg, fd, err);
	else
		rc = rg_config_set_output_fd(cfg, stream, fd, err);
	return rc < 0 ? SET_LIBRARY : SET_OK;
}

static int set_stdin(struct rg_config *cfg, PyObject *value,
		     struct rg_error *err)
{
	return set_stream(cfg, value, -1, err);
}

static int set_stdout(struct rg_config *cfg, PyObject *value,
		      struct rg_error *err)
{
	return set_stream(cfg, value, RG_STDOUT, err);
}

static int set_stderr(struct rg_config *cfg, PyObject *value,
		      struct rg_error *err)
{
	return set_stream(cfg, value, RG_STDERR, err);
}

static int set_environment(struct rg_config *cfg, PyObject *value,
			   struct rg_error *err)
{
	PyObject *seq = PySequence_Fast(value, "environment: not a sequence");
	Py_ssize_t i, n;
	int rc = SET_OK;

	if (!seq)
		return SET_PYTHON;
	n = PySequence_Fast_GET_SIZE(seq);
	for (i = 0; i < n && rc == SET_OK; i++) {
		PyObject *bytes;

		if (!PyUnicode_FSConverter(PySequence_Fast_GET_ITEM(seq, i),
					   &bytes)) {
			rc = SET_PYTHON;
			break;
		}
		if (rg_config_add_environment(cfg, PyBytes_AS_STRING(bytes),
					      err) < 0)
			rc = SET_LIBRARY;
		Py_DECREF(bytes);
	}
	Py_DECREF(seq);
	return rc;
}

static int set_stream_limit(struct rg_config *cfg, PyObject *value,
			    struct rg_error *err)
{
	unsigned long long n = PyLong_AsUnsignedLongLong(value);

	(void)err;
	if (n == (unsigned long long)-1 && PyErr_Occurred())
		return SET_PYTHON;
	rg_config_set_stream_limit(cfg, n);
	return SET_OK;
}

static int set_kill_grace(struct rg_config *cfg, PyObject *value,
			  struct rg_error *err)
{
	double seconds = PyFloat_AsDouble(value);

	if (seconds == -1.0 && PyErr_Occurred())
		return SET_PYTHON;
	return rg_config_set_kill_grace(cfg, seconds, err) < 0 ? SET_LIBRARY :
								 SET_OK;
}

static int set_notify_pid(struct rg_config *cfg, PyObject *value,
			  struct rg_error *err)
{
	long pid = PyLong_AsLong(value);

	(void)err;
	if (pid == -1 && PyErr_Occurred())
		return SET_PYTHON;
	if (pid <= 0 || pid > INT_MAX) {
		PyErr_SetString(PyExc_ValueError,
				"timeout_notify_pid must be a pid > 0");
		return SET_PYTHON;
	}
	rg_config_set_timeout_notify_pid(cfg, (pid_t)pid);
	return SET_OK;
}

static int set_v2_peak(struct rg_config *cfg, PyObject *value,
		       struct rg_error *err)
{
	const char *how = PyUnicode_Check(value) ? PyUnicode_AsUTF8(value) :
						   NULL;

	if (how && strcmp(how, "sampled") == 0)
		return rg_config_set_pool_v2_memory_peak(cfg,
							 RG_POOL_V2_PEAK_SAMPLED,
							 err) < 0 ?
			       SET_LIBRARY :
			       SET_OK;
	if (how && strcmp(how, "exact") == 0)
		return rg_config_set_pool_v2_memory_peak(cfg,
							 RG_POOL_V2_PEAK_EXACT,
							 err) < 0 ?
			       SET_LIBRARY :
			       SET_OK;
	if (!PyErr_Occurred())
		PyErr_SetString(rgpy.config_error,
				"must be \"sampled\" or \"exact\"");
	return SET_PYTHON;
}

/* In rg_config order; None (absent) keeps the library's default. */
static const struct field fields[] = {
	{ "root_prefix", PATH, { .str = rg_config_set_root_prefix } },
	{ "root", PATH, { .str = rg_config_set_root } },
	{ "workdir", PATH, { .str = rg_config_set_workdir } },
	{ "user", SPECIAL, { .special = set_user } },
	{ "group", SPECIAL, { .special = set_group } },
	{ "wall_limit", LIMIT, { .limit = rg_config_set_wall_limit } },
	{ "cpu_limit", LIMIT, { .limit = rg_config_set_cpu_limit } },
	{ "memory_limit", U64, { .u64 = rg_config_set_memory_limit } },
	{ "file_limit", U64, { .u64 = rg_config_set_file_limit } },
	{ "process_limit", U64, { .u64 = rg_config_set_process_limit } },
	{ "cpuset", PATH, { .str = rg_config_set_cpuset } },
	{ "core_dumps", BOOL, { .flag = rg_config_set_core_dumps } },
	{ "stdin", SPECIAL, { .special = set_stdin } },
	{ "stdout", SPECIAL, { .special = set_stdout } },
	{ "stderr", SPECIAL, { .special = set_stderr } },
	{ "stream_limit", SPECIAL, { .special = set_stream_limit } },
	{ "keep_environment", BOOL, { .flag = rg_config_set_keep_environment } },
	{ "environment", SPECIAL, { .special = set_environment } },
	{ "syscall_filter", BOOL, { .flag = rg_config_set_syscall_filter } },
	{ "kill_grace", SPECIAL, { .special = set_kill_grace } },
	{ "cgroup_parent", PATH, { .str = rg_config_set_cgroup_parent } },
	{ "timeout_notify_pid", SPECIAL, { .special = set_notify_pid } },
	{ "pool_keeper", BOOL, { .flag = rg_config_set_pool_keeper } },
	{ "pool_v2_memory_peak", SPECIAL, { .special = set_v2_peak } },
};

static int set_field(const struct field *f, struct rg_config *cfg,
		     PyObject *value, struct rg_error *err)
{
	switch (f->kind) {
	case PATH:
		return set_path(f, cfg, value, err);
	case U64:
		return set_u64(f, cfg, value, err);
	case LIMIT:
		return set_limit(f, cfg, value, err);
	case BOOL:
		return set_bool(f, cfg, value, err);
	default:
		return f->set.special(cfg, value, err);
	}
}

/* Prefix a Python exception of field name with it (TypeError etc.). */
static void name_python_error(const char *name)
{
	PyObject *type, *value, *tb;

	PyErr_Fetch(&type, &value, &tb);
	PyErr_NormalizeException(&type, &value, &tb);
	PyErr_Format(type, "%s: %S", name, value);
	Py_XDECREF(type);
	Py_XDECREF(value);
	Py_XDECREF(tb);
}

/* argv from the command tuple; the file is executable or argv[0]. */
static int set_command(struct rg_config *cfg, PyObject *config,
		       struct rg_error *err)
{
	PyObject *command = PyObject_GetAttrString(config, "command");
	PyObject *exe = NULL, *exe_bytes = NULL, *seq = NULL, **bytes = NULL;
	char **argv = NULL;
	Py_ssize_t n = 0, i, done = 0;
	int rc = SET_PYTHON;

	if (!command)
		return SET_PYTHON;
	seq = PySequence_Fast(command, "command: not a sequence");
	exe = PyObject_GetAttrString(config, "executable");
	if (!seq || !exe || !rgpy_optional_path(exe, &exe_bytes))
		goto out;
	n = PySequence_Fast_GET_SIZE(seq);
	argv = PyMem_Calloc((size_t)n + 1, sizeof(*argv));
	bytes = PyMem_Calloc((size_t)n + 1, sizeof(*bytes));
	if (!argv || !bytes) {
		PyErr_NoMemory();
		goto out;
	}
	for (done = 0; done < n; done++) {
		if (!PyUnicode_FSConverter(PySequence_Fast_GET_ITEM(seq, done),
					   &bytes[done]))
			goto out;
		argv[done] = PyBytes_AS_STRING(bytes[done]);
	}
	rc = rg_config_set_command(cfg,
				   exe_bytes ? PyBytes_AS_STRING(exe_bytes) :
					       (n ? argv[0] : NULL),
				   argv, err) < 0 ?
		     SET_LIBRARY :
		     SET_OK;
out:
	for (i = 0; bytes && i < done; i++)
		Py_DECREF(bytes[i]);
	PyMem_Free(bytes);
	PyMem_Free(argv);
	Py_XDECREF(exe_bytes);
	Py_XDECREF(exe);
	Py_XDECREF(seq);
	Py_DECREF(command);
	return rc;
}

/*
 * The run's messages to config.log, up to config.log_level. The Config
 * keeps the callable alive as long as a run of it is under way.
 */
static int set_log(struct rg_config *cfg, PyObject *config)
{
	PyObject *fn = PyObject_GetAttrString(config, "log");
	PyObject *level_obj = PyObject_GetAttrString(config, "log_level");
	int level = -1;

	if (fn && level_obj)
		level = rgpy_log_level(level_obj);
	if (level >= 0 && fn != Py_None)
		rg_config_set_log(cfg, rgpy_log_to_callable, fn,
				  (enum rg_log_level)level);
	Py_XDECREF(fn);
	Py_XDECREF(level_obj);
	return level < 0 ? SET_PYTHON : SET_OK;
}

static int apply_fields(struct rg_config *cfg, PyObject *config,
			struct rg_error *err)
{
	int rc = set_command(cfg, config, err);

	if (rc == SET_PYTHON)
		name_python_error("command");
	for (size_t i = 0; rc == SET_OK && i < Py_ARRAY_LENGTH(fields); i++) {
		PyObject *value = PyObject_GetAttrString(config,
							 fields[i].name);

		if (!value)
			return SET_PYTHON;
		if (value != Py_None)
			rc = set_field(&fields[i], cfg, value, err);
		Py_DECREF(value);
		if (rc == SET_PYTHON)
			name_python_error(fields[i].name);
	}
	if (rc == SET_OK && (rc = set_log(cfg, config)) == SET_PYTHON)
		name_python_error("log");
	return rc;
}

/* runguard.config imports this module: Config is looked up at first use */
static int check_type(PyObject *config)
{
	PyObject *m;
	int ok;

	if (!rgpy.config) {
		m = PyImport_ImportModule("runguard.config");
		if (!m)
			return -1;
		rgpy.config = PyObject_GetAttrString(m, "Config");
		Py_DECREF(m);
		if (!rgpy.config)
			return -1;
	}
	ok = PyObject_IsInstance(config, rgpy.config);
	if (ok == 0)
		PyErr_Format(PyExc_TypeError,
			     "expected a runguard.Config, not %.100s",
			     Py_TYPE(config)->tp_name);
	return ok > 0 ? 0 : -1;
}

struct rg_config *rgpy_config_build(PyObject *config)
{
	struct rg_error err = { 0 };
	struct rg_config *cfg;
	int rc;

	if (check_type(config) < 0)
		return NULL;
	cfg = rg_config_new(&err);
	if (!cfg) {
		rgpy_raise(rgpy.error, &err, NULL);
		return NULL;
	}
	rc = apply_fields(cfg, config, &err);
	if (rc == SET_OK)
		return cfg;
	if (rc == SET_LIBRARY)
		rgpy_raise(rgpy.config_error, &err, NULL);
	rg_config_free(cfg);
	return NULL;
}

PyObject *rgpy_check_config(PyObject *module, PyObject *config)
{
	struct rg_config *cfg = rgpy_config_build(config);

	(void)module;
	if (!cfg)
		return NULL;
	rg_config_free(cfg);
	Py_RETURN_NONE;
}
