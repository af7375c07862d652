/* tapeflow.kernels._fastpath: the eager hot path of small CPU ops in C (issue 16).
 *
 * A CPython extension on the stable ABI (Py_LIMITED_API 3.10: one cp310-abi3 wheel).  It does for
 * the commonest case exactly what core's Python hot paths (core/ops/_ew.py binary/unary,
 * math_ops.matmul) do: two CPU tensors of one real dtype, equal shapes or one side a single element
 * (or a 2-D matmul), no device scope, nothing tracing -> allocate the output, run the kernel, make
 * the Tensor, report it to the recorder.  Anything else, and any kernel status other than 0,
 * returns None and the caller takes its Python path (which produces the result or the op's error),
 * so the semantics stay the Python path's.
 *
 * What it relies on, checked once by init():
 *   - a Tensor's __slots__ live at fixed offsets of the instance (found by writing sentinels);
 *   - a NumPy array's data pointer and flags are the public PyArrayObject_fields layout (NumPy's
 *     ABI: data is the first field after the object header, flags the seventh);
 *   - the kernels' addresses come from the cffi library (ffi.cast("uintptr_t", ffi.addressof(...))).
 * Outputs are NumPy arrays from numpy.empty with a cffi handle from ffi.from_buffer, as cpu.py's
 * alloc makes them; buffers of CACHED_MIN bytes and more (the caching allocator's) go to the
 * Python path.  Not a csrc/ kernel file: build_ffi.py compiles it as its own extension.
 */
#ifdef TPF_LIMITED_API   /* set by build_ffi.py where the interpreter has a limited API */
#define Py_LIMITED_API 0x030A0000
#endif
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

typedef int (*binary_fn)(int, int, const void *, int, const void *, int, void *, int64_t);
typedef int (*unary_fn)(int, int, const void *, void *, int64_t, double);
typedef int (*matmul_fn)(int, int, int, int64_t, int64_t, int64_t, int64_t, const void *, int64_t,
                         const void *, int64_t, void *);

/* NumPy's PyArrayObject_fields, the leading part */
typedef struct {
    PyObject_HEAD
    char *data;
    int nd;
    intptr_t *dimensions;
    intptr_t *strides;
    PyObject *base;
    PyObject *descr;
    int flags;
} np_array;

#define NPY_C_CONTIGUOUS 0x0001
#define NPY_ALIGNED 0x0100
#define NDTYPES 32
#define GIL_FREE_MIN 8192   /* release the GIL around kernels of this many elements and more */

static struct {
    int ready;
    PyTypeObject *tensor;          /* tapeflow.core.tensor.Tensor */
    PyTypeObject *ndarray;
    allocfunc tensor_alloc;
    Py_ssize_t off_h, off_arr, off_shape, off_dtype, off_dev, off_size;
    PyObject *host;                /* the cpu:0 Device */
    PyObject *hooks;               /* dispatch.hooks */
    PyObject *scope;               /* devices._scope (a threading.local) */
    PyObject *empty, *from_buffer; /* numpy.empty, ffi.from_buffer */
    PyObject *dtypes[NDTYPES];     /* DType by code (NULL: not a fast dtype) */
    PyObject *np_dtypes[NDTYPES];  /* its numpy.dtype */
    int itemsize[NDTYPES];
    int bool_code;
    int64_t cached_min;
    long long mm_mask;             /* the dtype codes matmul runs here */
    binary_fn binary_flat;
    unary_fn unary;
    matmul_fn matmul;
    PyObject *mm_attrs[4];         /* the attrs dicts a matmul records, by transpose_a * 2 + transpose_b */
    PyObject *s_recorder, *s_tracing, *s_stack;
} S;

#define SLOT(o, off) (*(PyObject **)((char *)(o) + (off)))

/* the data pointer of a CPU tensor (NULL: not a contiguous, aligned NumPy array: the Python path) */
static inline char *data_of(PyObject *t) {
    PyObject *arr = SLOT(t, S.off_arr);
    if (arr == NULL || Py_TYPE(arr) != S.ndarray) return NULL;
    np_array *a = (np_array *)arr;
    if ((a->flags & (NPY_C_CONTIGUOUS | NPY_ALIGNED)) != (NPY_C_CONTIGUOUS | NPY_ALIGNED)) return NULL;
    return a->data;
}

/* 1 when nothing places or traces (no device scope, no tracer), 0 otherwise, -1 on error */
static int plain_eager(void) {
    PyObject *tr = PyObject_GetAttr(S.hooks, S.s_tracing);
    if (!tr) return -1;
    int tracing = PyObject_IsTrue(tr);
    Py_DECREF(tr);
    if (tracing) return tracing < 0 ? -1 : 0;
    PyObject *stack = PyObject_GetAttr(S.scope, S.s_stack);
    if (!stack) return -1;
    Py_ssize_t n = PyObject_Length(stack);
    Py_DECREF(stack);
    if (n < 0) return -1;
    return n == 0;
}

/* a new Tensor over a fresh output of shape/dtype code (*data: its buffer); NULL with an error set */
static PyObject *new_output(PyObject *shape, int code, int64_t size, char **data) {
    PyObject *host = PyObject_CallFunctionObjArgs(S.empty, shape, S.np_dtypes[code], NULL);
    if (!host) return NULL;
    PyObject *h = PyObject_CallFunctionObjArgs(S.from_buffer, host, NULL);
    if (!h) { Py_DECREF(host); return NULL; }
    PyObject *size_o = PyLong_FromLongLong(size);
    if (!size_o) { Py_DECREF(host); Py_DECREF(h); return NULL; }
    PyObject *out = S.tensor_alloc(S.tensor, 0);
    if (!out) { Py_DECREF(host); Py_DECREF(h); Py_DECREF(size_o); return NULL; }
    *data = ((np_array *)host)->data;
    Py_INCREF(shape); Py_INCREF(S.dtypes[code]); Py_INCREF(S.host);
    SLOT(out, S.off_h) = h;
    SLOT(out, S.off_arr) = host;
    SLOT(out, S.off_shape) = shape;
    SLOT(out, S.off_dtype) = S.dtypes[code];
    SLOT(out, S.off_dev) = S.host;
    SLOT(out, S.off_size) = size_o;
    return out;
}

/* report out to the recorder when one listens; returns out, or NULL (and drops out) on error */
static PyObject *report(PyObject *name, PyObject *inputs, PyObject *out, PyObject *attrs) {
    PyObject *rec = PyObject_GetAttr(S.hooks, S.s_recorder);
    if (!rec) { Py_DECREF(inputs); Py_DECREF(out); return NULL; }
    if (rec != Py_None) {
        PyObject *r = PyObject_CallFunctionObjArgs(rec, name, inputs, out, attrs, NULL);
        Py_DECREF(rec);
        Py_DECREF(inputs);
        if (!r) { Py_DECREF(out); return NULL; }
        Py_DECREF(r);
        return out;
    }
    Py_DECREF(rec);
    Py_DECREF(inputs);
    return out;
}

/* a tensor's (dtype code, size); 0 when it is not a plain CPU tensor of a fast dtype */
static int tensor_info(PyObject *t, int *code, int64_t *size) {
    if (Py_TYPE(t) != S.tensor) return 0;
    if (SLOT(t, S.off_dev) != S.host) return 0;
    PyObject *dt = SLOT(t, S.off_dtype), *sz = SLOT(t, S.off_size);
    if (!dt || !sz) return 0;
    for (int c = 0; c < NDTYPES; c++)
        if (S.dtypes[c] == dt) {
            *code = c;
            *size = PyLong_AsLongLong(sz);
            if (*size < 0) { PyErr_Clear(); return 0; }
            return 1;
        }
    return 0;
}

static int shape_len(PyObject *shape) {
    if (!shape || !PyTuple_Check(shape)) return -1;
    return (int)PyTuple_Size(shape);
}

/* binary(name, code, mask, bool_out, x, y) -> Tensor or None */
static PyObject *fp_binary(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 6) { PyErr_SetString(PyExc_TypeError, "binary takes 6 arguments"); return NULL; }
    if (!S.ready) Py_RETURN_NONE;
    PyObject *x = args[4], *y = args[5];
    int cx, cy;
    int64_t nx, ny;
    if (!tensor_info(x, &cx, &nx) || !tensor_info(y, &cy, &ny) || cx != cy) Py_RETURN_NONE;
    long long mask = PyLong_AsLongLong(args[2]);
    if (mask == -1 && PyErr_Occurred()) return NULL;
    if (!((mask >> cx) & 1)) Py_RETURN_NONE;
    int op = PyLong_AsLong(args[1]);
    int bool_out = PyObject_IsTrue(args[3]);
    if (bool_out < 0 || (op == -1 && PyErr_Occurred())) return NULL;
    PyObject *sx = SLOT(x, S.off_shape), *sy = SLOT(y, S.off_shape);
    int lx = shape_len(sx), ly = shape_len(sy);
    if (lx < 0 || ly < 0) Py_RETURN_NONE;
    PyObject *shape;
    int64_t size;
    int ax = 0, ay = 0;
    int eq = sx == sy ? 1 : PyObject_RichCompareBool(sx, sy, Py_EQ);
    if (eq < 0) return NULL;
    if (eq) { shape = sx; size = nx; }
    else if (ny == 1 && ly <= lx) { shape = sx; size = nx; ay = 1; }
    else if (nx == 1 && lx <= ly) { shape = sy; size = ny; ax = 1; }
    else Py_RETURN_NONE;
    int out_code = bool_out ? S.bool_code : cx;
    if (size * S.itemsize[out_code] >= S.cached_min) Py_RETURN_NONE;
    char *px = data_of(x), *py = data_of(y);
    if (!px || !py) Py_RETURN_NONE;
    int pe = plain_eager();
    if (pe <= 0) { if (pe < 0) return NULL; Py_RETURN_NONE; }
    char *po;
    PyObject *out = new_output(shape, out_code, size, &po);
    if (!out) return NULL;
    int st;
    if (size >= GIL_FREE_MIN) {
        Py_BEGIN_ALLOW_THREADS
        st = S.binary_flat(op, cx, px, ax, py, ay, po, size);
        Py_END_ALLOW_THREADS
    } else {
        st = S.binary_flat(op, cx, px, ax, py, ay, po, size);
    }
    if (st) { Py_DECREF(out); Py_RETURN_NONE; }   /* the Python path raises the op's error */
    PyObject *inputs = PyTuple_Pack(2, x, y);
    if (!inputs) { Py_DECREF(out); return NULL; }
    return report(args[0], inputs, out, Py_None);
}

/* unary(name, code, mask, bool_out, param, attrs, x) -> Tensor or None */
static PyObject *fp_unary(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 7) { PyErr_SetString(PyExc_TypeError, "unary takes 7 arguments"); return NULL; }
    if (!S.ready) Py_RETURN_NONE;
    PyObject *x = args[6];
    int cx;
    int64_t n;
    if (!tensor_info(x, &cx, &n)) Py_RETURN_NONE;
    long long mask = PyLong_AsLongLong(args[2]);
    if (mask == -1 && PyErr_Occurred()) return NULL;
    if (!((mask >> cx) & 1)) Py_RETURN_NONE;
    int op = PyLong_AsLong(args[1]);
    int bool_out = PyObject_IsTrue(args[3]);
    double param = PyFloat_AsDouble(args[4]);
    if (bool_out < 0 || PyErr_Occurred()) return NULL;
    PyObject *shape = SLOT(x, S.off_shape);
    if (shape_len(shape) < 0) Py_RETURN_NONE;
    int out_code = bool_out ? S.bool_code : cx;
    if (n * S.itemsize[out_code] >= S.cached_min) Py_RETURN_NONE;
    char *px = data_of(x);
    if (!px) Py_RETURN_NONE;
    int pe = plain_eager();
    if (pe <= 0) { if (pe < 0) return NULL; Py_RETURN_NONE; }
    char *po;
    PyObject *out = new_output(shape, out_code, n, &po);
    if (!out) return NULL;
    int st;
    if (n >= GIL_FREE_MIN) {
        Py_BEGIN_ALLOW_THREADS
        st = S.unary(op, cx, px, po, n, param);
        Py_END_ALLOW_THREADS
    } else {
        st = S.unary(op, cx, px, po, n, param);
    }
    if (st) { Py_DECREF(out); Py_RETURN_NONE; }
    PyObject *inputs = PyTuple_Pack(1, x);
    if (!inputs) { Py_DECREF(out); return NULL; }
    return report(args[0], inputs, out, args[5]);
}

/* matmul(a, b, transpose_a, transpose_b) -> Tensor or None: 2-D float32/float64 CPU tensors */
static PyObject *fp_matmul(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs != 4) { PyErr_SetString(PyExc_TypeError, "matmul takes 4 arguments"); return NULL; }
    if (!S.ready) Py_RETURN_NONE;
    PyObject *a = args[0], *b = args[1];
    int ca, cb;
    int64_t na, nb;
    if (!tensor_info(a, &ca, &na) || !tensor_info(b, &cb, &nb) || ca != cb) Py_RETURN_NONE;
    if (!((S.mm_mask >> ca) & 1)) Py_RETURN_NONE;   /* float32, float64 */
    int ta = PyObject_IsTrue(args[2]), tb = PyObject_IsTrue(args[3]);
    if (ta < 0 || tb < 0) return NULL;
    PyObject *sa = SLOT(a, S.off_shape), *sb = SLOT(b, S.off_shape);
    if (shape_len(sa) != 2 || shape_len(sb) != 2) Py_RETURN_NONE;
    long long a0 = PyLong_AsLongLong(PyTuple_GetItem(sa, 0)), a1 = PyLong_AsLongLong(PyTuple_GetItem(sa, 1));
    long long b0 = PyLong_AsLongLong(PyTuple_GetItem(sb, 0)), b1 = PyLong_AsLongLong(PyTuple_GetItem(sb, 1));
    if (PyErr_Occurred()) { PyErr_Clear(); Py_RETURN_NONE; }
    int64_t m = ta ? a1 : a0, k = ta ? a0 : a1, k2 = tb ? b1 : b0, n = tb ? b0 : b1;
    if (k != k2 || m < 0 || n < 0 || k < 0) Py_RETURN_NONE;
    if (m * n * S.itemsize[ca] >= S.cached_min) Py_RETURN_NONE;
    char *pa = data_of(a), *pb = data_of(b);
    if (!pa || !pb) Py_RETURN_NONE;
    int pe = plain_eager();
    if (pe <= 0) { if (pe < 0) return NULL; Py_RETURN_NONE; }
    PyObject *shape = Py_BuildValue("(LL)", (long long)m, (long long)n);
    if (!shape) return NULL;
    char *po;
    PyObject *out = new_output(shape, ca, m * n, &po);
    Py_DECREF(shape);
    if (!out) return NULL;
    int st;
    if (m * n * k >= 65536) {
        Py_BEGIN_ALLOW_THREADS
        st = S.matmul(ca, ta, tb, 1, m, n, k, pa, m * k, pb, k * n, po);
        Py_END_ALLOW_THREADS
    } else {
        st = S.matmul(ca, ta, tb, 1, m, n, k, pa, m * k, pb, k * n, po);
    }
    if (st) { Py_DECREF(out); Py_RETURN_NONE; }
    PyObject *inputs = PyTuple_Pack(2, a, b);
    if (!inputs) { Py_DECREF(out); return NULL; }
    static PyObject *name = NULL;
    if (!name && !(name = PyUnicode_InternFromString("matmul"))) { Py_DECREF(inputs); Py_DECREF(out); return NULL; }
    return report(name, inputs, out, S.mm_attrs[ta * 2 + tb]);
}

/* the byte offset of a Tensor slot: write a sentinel through the attribute, find it in the instance */
static Py_ssize_t find_slot(PyObject *inst, Py_ssize_t basicsize, const char *attr) {
    PyObject *sentinel = PyList_New(0);
    if (!sentinel) return -1;
    if (PyObject_SetAttrString(inst, attr, sentinel) < 0) { Py_DECREF(sentinel); return -1; }
    Py_ssize_t found = -1;
    for (Py_ssize_t off = sizeof(PyObject); off + (Py_ssize_t)sizeof(PyObject *) <= basicsize;
         off += sizeof(PyObject *))
        if (SLOT(inst, off) == sentinel) { found = off; break; }
    int rc = PyObject_DelAttrString(inst, attr);
    Py_DECREF(sentinel);
    if (rc < 0) return -1;
    if (found < 0) PyErr_Format(PyExc_RuntimeError, "tapeflow fast path: slot %s not found", attr);
    return found;
}

/* init(Tensor, ndarray, host_device, hooks, scope, numpy.empty, ffi.from_buffer, dtypes, bool_code,
 *      cached_min, binary_flat_addr, unary_addr, matmul_addr, mm_attrs, mm_mask)
 * dtypes: a tuple of (code, DType, numpy.dtype) for the dtypes the fast path runs; mm_attrs: the 4
 * attrs dicts a matmul records (transpose_a * 2 + transpose_b); mm_mask: bit c set for the dtype codes
 * matmul runs here (float32, float64). */
static PyObject *fp_init(PyObject *self, PyObject *args) {
    PyObject *tensor, *ndarray, *host, *hooks, *scope, *empty, *from_buffer, *dtypes, *mm_attrs;
    int bool_code;
    long long cached_min, mm_mask;
    unsigned long long pb, pu, pm;
    if (!PyArg_ParseTuple(args, "OOOOOOOOiLKKKOL", &tensor, &ndarray, &host, &hooks, &scope, &empty,
                          &from_buffer, &dtypes, &bool_code, &cached_min, &pb, &pu, &pm, &mm_attrs, &mm_mask))
        return NULL;
    if (!PyType_Check(tensor) || !PyType_Check(ndarray) || !PyTuple_Check(dtypes) || !PyTuple_Check(mm_attrs)
        || PyTuple_Size(mm_attrs) != 4 || bool_code < 0 || bool_code >= NDTYPES || !pb || !pu || !pm) {
        PyErr_SetString(PyExc_TypeError, "tapeflow fast path: bad init arguments");
        return NULL;
    }
    S.ready = 0;
    PyObject *bs = PyObject_GetAttrString(tensor, "__basicsize__");
    if (!bs) return NULL;
    Py_ssize_t basicsize = PyLong_AsSsize_t(bs);
    Py_DECREF(bs);
    if (basicsize < 0) return NULL;
    allocfunc alloc = (allocfunc)PyType_GetSlot((PyTypeObject *)tensor, Py_tp_alloc);
    if (!alloc) { PyErr_SetString(PyExc_RuntimeError, "tapeflow fast path: Tensor has no tp_alloc"); return NULL; }
    PyObject *inst = alloc((PyTypeObject *)tensor, 0);
    if (!inst) return NULL;
    Py_ssize_t offs[6];
    const char *names[6] = {"_h", "_arr", "_shape", "_dtype", "_dev", "_size"};
    for (int i = 0; i < 6; i++)
        if ((offs[i] = find_slot(inst, basicsize, names[i])) < 0) { Py_DECREF(inst); return NULL; }
    Py_DECREF(inst);
    for (int c = 0; c < NDTYPES; c++) { Py_CLEAR(S.dtypes[c]); Py_CLEAR(S.np_dtypes[c]); S.itemsize[c] = 0; }
    for (Py_ssize_t i = 0; i < PyTuple_Size(dtypes); i++) {
        int code;
        PyObject *dt, *npdt;
        if (!PyArg_ParseTuple(PyTuple_GetItem(dtypes, i), "iOO", &code, &dt, &npdt)) return NULL;
        if (code < 0 || code >= NDTYPES) { PyErr_SetString(PyExc_ValueError, "dtype code out of range"); return NULL; }
        PyObject *isz = PyObject_GetAttrString(npdt, "itemsize");
        if (!isz) return NULL;
        S.itemsize[code] = (int)PyLong_AsLong(isz);
        Py_DECREF(isz);
        Py_INCREF(dt); Py_INCREF(npdt);
        S.dtypes[code] = dt;
        S.np_dtypes[code] = npdt;
    }
    if (!S.dtypes[bool_code]) { PyErr_SetString(PyExc_ValueError, "bool dtype missing"); return NULL; }
#define KEEP(field, v) do { PyObject *old_ = (PyObject *)S.field; Py_INCREF(v); S.field = (void *)(v); Py_XDECREF(old_); } while (0)
    KEEP(tensor, (PyTypeObject *)tensor);
    KEEP(ndarray, (PyTypeObject *)ndarray);
    KEEP(host, host);
    KEEP(hooks, hooks);
    KEEP(scope, scope);
    KEEP(empty, empty);
    KEEP(from_buffer, from_buffer);
    for (int i = 0; i < 4; i++) KEEP(mm_attrs[i], PyTuple_GetItem(mm_attrs, i));
#undef KEEP
    S.tensor_alloc = alloc;
    S.off_h = offs[0]; S.off_arr = offs[1]; S.off_shape = offs[2];
    S.off_dtype = offs[3]; S.off_dev = offs[4]; S.off_size = offs[5];
    S.bool_code = bool_code;
    S.mm_mask = mm_mask;
    S.cached_min = cached_min;
    S.binary_flat = (binary_fn)(uintptr_t)pb;
    S.unary = (unary_fn)(uintptr_t)pu;
    S.matmul = (matmul_fn)(uintptr_t)pm;
    if (!S.s_recorder && !(S.s_recorder = PyUnicode_InternFromString("recorder"))) return NULL;
    if (!S.s_tracing && !(S.s_tracing = PyUnicode_InternFromString("tracing"))) return NULL;
    if (!S.s_stack && !(S.s_stack = PyUnicode_InternFromString("stack"))) return NULL;
    S.ready = 1;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"init", (PyCFunction)fp_init, METH_VARARGS, "Set the fast path up (core calls it once the CPU backend loads)."},
    {"binary", (PyCFunction)(void (*)(void))fp_binary, METH_FASTCALL,
     "binary(name, code, mask, bool_out, x, y): the output Tensor, or None for the Python path."},
    {"unary", (PyCFunction)(void (*)(void))fp_unary, METH_FASTCALL,
     "unary(name, code, mask, bool_out, param, attrs, x): the output Tensor, or None for the Python path."},
    {"matmul", (PyCFunction)(void (*)(void))fp_matmul, METH_FASTCALL,
     "matmul(a, b, transpose_a, transpose_b): the output Tensor, or None for the Python path."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "tapeflow.kernels._fastpath",
    "The eager hot path of small CPU ops in C (core/ops/_ew.py falls back to Python for the rest).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__fastpath(void) { return PyModule_Create(&module); }
