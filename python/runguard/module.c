/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The runguard._runguard module: its functions, and the objects of
 * runguard._types it raises and returns. */
#include "binding.h"

struct rgpy_types rgpy;

PyObject *rgpy_raise(PyObject *cls, const struct rg_error *err,
		     PyObject *result)
{
	char buf[sizeof(err->message) + 128];
	PyObject *args, *kwargs = NULL, *exc;

	rg_error_format(err, buf, sizeof(buf));
	if (err->errnum)
		args = Py_BuildValue("(is)", err->errnum, buf);
	else
		args = Py_BuildValue("(s)", buf);
	if (args && result)
		kwargs = Py_BuildValue("{sO}", "result", result);
	if (!args || (result && !kwargs)) {
		Py_XDECREF(args);
		return NULL;
	}
	exc = PyObject_Call(cls, args, kwargs);
	Py_DECREF(args);
	Py_XDECREF(kwargs);
	if (exc) {
		PyErr_SetObject(cls, exc);
		Py_DECREF(exc);
	}
	return NULL;
}

static PyObject *version(PyObject *module, PyObject *unused)
{
	(void)module;
	(void)unused;
	return PyUnicode_FromString(rg_version());
}

static PyMethodDef module_methods[] = {
	{ "run", rgpy_run_func, METH_O,
	  "run($module, config, /)\n--\n\n"
	  "Run config once (rg_run), the GIL released while it runs. "
	  "Returns the Result of a completed run (Outcome.COMPLETED, "
	  "whatever its exit status) and of a failed execve() "
	  "(Outcome.EXEC_FAILED). Raises Error when nothing ran, SetupError "
	  "or CleanupError (with .result) for the other outcomes, Cancelled "
	  "when cancel_all() or Pool.cancel() ended it. In the main thread "
	  "a KeyboardInterrupt cancels the run, waits for its clean-up and "
	  "propagates." },
	{ "cancel_all", rgpy_cancel_all, METH_NOARGS,
	  "cancel_all($module, /)\n--\n\n"
	  "Cancel every run of this process under way (any thread, any "
	  "pool): each is killed, cleaned up, and raises Cancelled." },
	{ "check_config", rgpy_check_config, METH_O,
	  "check_config($module, config, /)\n--\n\n"
	  "Apply config to a new librunguard configuration and drop it: "
	  "raises what a run would for its values (Config() calls it)." },
	{ "set_log", (PyCFunction)(void (*)(void))rgpy_set_log,
	  METH_VARARGS | METH_KEYWORDS,
	  "set_log($module, callback, level=2)\n--\n\n"
	  "Where the pool administration calls (pool_create, pool_destroy, "
	  "pool_prewarm, Pool(keepers=True)) report each step: "
	  "callback(level, message) for messages up to level, from the "
	  "calling thread (level 2 is LogLevel.NOTICE). None: nowhere (the "
	  "default). Process-wide: set it "
	  "before such calls, not while one is under way." },
	{ "version", version, METH_NOARGS,
	  "version($module, /)\n--\n\nThe version of librunguard in use." },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT,
	.m_name = "runguard._runguard",
	.m_doc = "librunguard's C API for Python; use the package runguard.",
	.m_size = -1,
	.m_methods = module_methods,
};

/* Attribute name of module into *out (a new reference kept for good). */
static int import_attr(const char *module, const char *name, PyObject **out)
{
	PyObject *m = PyImport_ImportModule(module);

	if (!m)
		return -1;
	*out = PyObject_GetAttrString(m, name);
	Py_DECREF(m);
	return *out ? 0 : -1;
}

static int import_types(void)
{
	const char *t = "runguard._types";

	return import_attr(t, "Outcome", &rgpy.outcome) < 0 ||
			       import_attr(t, "Limit", &rgpy.limit) < 0 ||
			       import_attr(t, "SlotState", &rgpy.slot_state) <
				       0 ||
			       import_attr(t, "LogLevel", &rgpy.log_level) < 0 ||
			       import_attr(t, "Error", &rgpy.error) < 0 ||
			       import_attr(t, "ConfigError",
					   &rgpy.config_error) < 0 ||
			       import_attr(t, "SetupError",
					   &rgpy.setup_error) < 0 ||
			       import_attr(t, "CleanupError",
					   &rgpy.cleanup_error) < 0 ||
			       import_attr(t, "Cancelled", &rgpy.cancelled) <
				       0 ||
			       import_attr("threading", "main_thread",
					   &rgpy.main_thread) < 0 ?
		       -1 :
		       0;
}

/* the extension's entry point (visibility default, -fvisibility=hidden) */
PyMODINIT_FUNC PyInit__runguard(void);

PyMODINIT_FUNC PyInit__runguard(void)
{
	PyObject *m;

	if (import_types() < 0)
		return NULL;
	m = PyModule_Create(&module_def);
	if (!m)
		return NULL;
	if (PyModule_AddFunctions(m, rgpy_admin_methods) < 0 ||
	    rgpy_result_init_type(m) < 0 || rgpy_pool_init_type(m) < 0 ||
	    rgpy_admin_init(m) < 0 ||
	    PyModule_AddIntConstant(m, "POOL_SIZE_MAX", RG_POOL_SIZE_MAX) < 0 ||
	    PyModule_AddStringConstant(m, "POOL_DIR_DEFAULT",
				       RG_POOL_DIR_DEFAULT) < 0) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
