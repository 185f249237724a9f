/*
 * python/soadyn/_fast.c — the extension soadyn._fast: the hot single-state calls (forward and
 * inverse dynamics) written against CPython's and numpy's C API, so that a call costs the C work
 * plus a few thousand instructions. Through cffi the same call spent most of its time making
 * buffers of the arrays; here the arrays are read in place.
 *
 * Each function takes the model and workspace pointers as integers (Model._mp, Model._dp) and the
 * arrays of one state. It returns:
 *   - the result array, when every argument is what the fast path takes (1-D C-contiguous float64
 *     arrays of the right sizes, f_ext (nbodies, 6), out of the output's shape or None), the model
 *     has no closure constraint or the caller asked for the tree (tree true), and every quaternion
 *     of q is unit to QUATERNION_TOLERANCE;
 *   - the C status (an int) when the C call failed: the caller reads the workspace's message;
 *   - None otherwise: the caller takes its general path, which checks and explains everything.
 * Nothing here raises for bad arguments: the general path owns the messages.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

#include <soadyn/soadyn.h>

/* The largest | |quat| - 1 | accepted in q: soadyn uses a quaternion as given (M of a quaternion of
 * norm 2 is off by a factor of order 4), so a q must carry unit quaternions, as `soadyn simulate
 * --q0` demands. */
#define SDPY_QUATERNION_TOLERANCE 1e-9

/* arr as a C-contiguous float64 array of n doubles, else NULL. */
static double *vector_of(PyObject *arr, npy_intp n0, npy_intp n1)
{
    if (!PyArray_CheckExact(arr)) return NULL;
    PyArrayObject *a = (PyArrayObject *)arr;
    if (PyArray_TYPE(a) != NPY_DOUBLE || !PyArray_IS_C_CONTIGUOUS(a)) return NULL;
    if (n1 < 0) {
        if (PyArray_NDIM(a) != 1 || PyArray_DIM(a, 0) != n0) return NULL;
    } else if (PyArray_NDIM(a) != 2 || PyArray_DIM(a, 0) != n0 || PyArray_DIM(a, 1) != n1) {
        return NULL;
    }
    return (double *)PyArray_DATA(a);
}

typedef sd_status (*dynamics_fn)(const sd_model *, sd_data *, const double *, const double *, const double *,
                                 const double *, double *);

/* (mp, dp, q, u, x, f_ext, out, tree) -> result, status or None (see the top of the file). */
static PyObject *dynamics_call(PyObject *const *args, Py_ssize_t nargs, dynamics_fn fn)
{
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "soadyn._fast: 8 arguments expected");
        return NULL;
    }
    const sd_model *m = PyLong_AsVoidPtr(args[0]);
    sd_data *d = PyLong_AsVoidPtr(args[1]);
    if (!m || !d) return PyErr_Occurred() ? NULL : Py_NewRef(Py_None);
    const int tree = PyObject_IsTrue(args[7]);
    if (tree < 0) return NULL;
    if (!tree && sd_model_nconstraints(m) > 0) Py_RETURN_NONE;
    const npy_intp nq = sd_model_nq(m), nv = sd_model_nv(m);
    const double *q = vector_of(args[2], nq, -1), *u = vector_of(args[3], nv, -1), *x = vector_of(args[4], nv, -1);
    const double *f = NULL;
    if (!q || !u || !x) Py_RETURN_NONE;
    if (args[5] != Py_None && !(f = vector_of(args[5], sd_model_nbodies(m), 6))) Py_RETURN_NONE;
    if (sd_configuration_quaternion_error(m, q) > SDPY_QUATERNION_TOLERANCE) Py_RETURN_NONE;
    PyObject *out = args[6];
    double *y;
    if (out == Py_None) {
        out = PyArray_SimpleNew(1, (npy_intp *)&nv, NPY_DOUBLE);
        if (!out) return NULL;
        y = (double *)PyArray_DATA((PyArrayObject *)out);
    } else {
        if (!(y = vector_of(out, nv, -1)) || !PyArray_ISWRITEABLE((PyArrayObject *)out)) Py_RETURN_NONE;
        Py_INCREF(out);
    }
    const sd_status st = fn(m, d, q, u, x, f, y);
    if (st != SD_OK) {
        Py_DECREF(out);
        return PyLong_FromLong((long)st);
    }
    return out;
}

static PyObject *fast_forward_dynamics(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    return dynamics_call(args, nargs, sd_forward_dynamics);
}

static PyObject *fast_inverse_dynamics(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    return dynamics_call(args, nargs, sd_inverse_dynamics);
}

static PyMethodDef fast_methods[] = {
    {"forward_dynamics", (PyCFunction)(void (*)(void))fast_forward_dynamics, METH_FASTCALL,
     "forward_dynamics(mp, dp, q, u, tau, f_ext, out, tree): qdd, a C status, or None (general path)"},
    {"inverse_dynamics", (PyCFunction)(void (*)(void))fast_inverse_dynamics, METH_FASTCALL,
     "inverse_dynamics(mp, dp, q, u, qdd, f_ext, out, tree): tau, a C status, or None (general path)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef fast_module = {
    PyModuleDef_HEAD_INIT, "soadyn._fast",
    "The hot single-state calls of soadyn (forward and inverse dynamics) in C; used by soadyn.Model.", -1,
    fast_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__fast(void)
{
    import_array();
    PyObject *mod = PyModule_Create(&fast_module);
    if (mod && PyModule_AddObject(mod, "QUATERNION_TOLERANCE", PyFloat_FromDouble(SDPY_QUATERNION_TOLERANCE)) < 0) {
        Py_DECREF(mod);
        return NULL;
    }
    return mod;
}
