"""Loading libortc_runtime.so and declaring the C functions of ortc_c.h the bindings call.

The library is loaded on first use, so that the compiler functions work on a machine without it.
"""

import ctypes
import os

from ._errors import OrtcError, code_name
from ._layout import installed_libdir

# ORTC_C_API_VERSION of the header these declarations were written from: a library with another
# version may have changed a signature, and calling it through these declarations would crash.
API_VERSION = 2
SONAME = "libortc_runtime.so.0"


class TensorView(ctypes.Structure):
    """OrtcTensorView: a read-only view of caller memory."""

    _fields_ = [
        ("dtype", ctypes.c_int32),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("rank", ctypes.c_size_t),
        ("data", ctypes.c_void_p),
    ]


# Opaque handles are passed as void pointers; NULL comes back as None.
_P = ctypes.c_void_p
_SIZE = ctypes.c_size_t
_STR = ctypes.c_char_p
_SHAPE = ctypes.POINTER(ctypes.c_int64)

# name: (restype, argtypes)
_PROTOTYPES = {
    "ortc_version": (_STR, []),
    "ortc_format_version": (_STR, []),
    "ortc_status_code": (ctypes.c_int, [_P]),
    "ortc_status_message": (_STR, [_P]),
    "ortc_status_release": (None, [_P]),
    "ortc_session_options_create": (_P, [ctypes.POINTER(_P)]),
    "ortc_session_options_release": (None, [_P]),
    "ortc_session_options_set_intra_op_threads": (_P, [_P, ctypes.c_int]),
    "ortc_session_options_set_policy": (_P, [_P, ctypes.c_int]),
    "ortc_session_options_set_device_json": (_P, [_P, _STR]),
    "ortc_session_options_set_provider_option": (_P, [_P, _STR, _STR, _STR]),
    "ortc_session_create_with_options": (_P, [_STR, _P, ctypes.POINTER(_P)]),
    "ortc_session_release": (None, [_P]),
    "ortc_session_input_count": (_SIZE, [_P]),
    "ortc_session_input_name": (_STR, [_P, _SIZE]),
    "ortc_session_input_dtype": (ctypes.c_int32, [_P, _SIZE]),
    "ortc_session_input_rank": (_SIZE, [_P, _SIZE]),
    "ortc_session_input_shape": (_SHAPE, [_P, _SIZE]),
    "ortc_session_output_count": (_SIZE, [_P]),
    "ortc_session_output_name": (_STR, [_P, _SIZE]),
    "ortc_session_output_dtype": (ctypes.c_int32, [_P, _SIZE]),
    "ortc_session_output_rank": (_SIZE, [_P, _SIZE]),
    "ortc_session_output_shape": (_SHAPE, [_P, _SIZE]),
    "ortc_session_run_outputs": (_P, [_P, ctypes.POINTER(_STR), ctypes.POINTER(TensorView), _SIZE,
                                      ctypes.POINTER(_STR), _SIZE, ctypes.POINTER(_P)]),
    "ortc_tensor_dtype": (ctypes.c_int32, [_P]),
    "ortc_tensor_rank": (_SIZE, [_P]),
    "ortc_tensor_shape": (_SHAPE, [_P]),
    "ortc_tensor_data": (_P, [_P]),
    "ortc_tensor_byte_size": (_SIZE, [_P]),
    "ortc_tensor_release": (None, [_P]),
}

_lib = None


def _candidates():
    """The paths to try, in order: $ORTC_LIBRARY alone, or the installed copy and the loader."""
    explicit = os.environ.get("ORTC_LIBRARY")
    if explicit:
        # A library named on purpose that does not load is an error, not a cue to use another.
        return [explicit]
    found = []
    libdir = installed_libdir()
    if libdir is not None and os.path.exists(os.path.join(libdir, SONAME)):
        found.append(os.path.join(libdir, SONAME))
    found.append(SONAME)  # the system loader: LD_LIBRARY_PATH, ld.so.cache
    return found


def _bound_openmp_spinning():
    """Sets the OpenMP spin count ortc's executables use (GOMP_SPINCOUNT=1000), unless the user
    set one or libgomp is already loaded (it reads the variable once, when it starts).

    With libgomp's default, idle workers spin for milliseconds, and when other processes keep
    the cores busy a parallel region waits for a whole spin each time its worker shares a core
    with the thread spinning for it (tools/cli/openmp_wait_default.cpp has the figures).
    """
    if "OMP_WAIT_POLICY" in os.environ or "GOMP_SPINCOUNT" in os.environ:
        return
    try:
        with open("/proc/self/maps") as maps:
            if "libgomp" in maps.read():
                return
    except OSError:
        return
    os.environ["GOMP_SPINCOUNT"] = "1000"


def _load():
    _bound_openmp_spinning()
    tried = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path)
        except OSError as e:
            tried.append(str(e))
    raise OrtcError("NO_SUCHFILE", "cannot load the ortc runtime library (%s); set ORTC_LIBRARY "
                    "to the path of libortc_runtime.so.0" % "; ".join(tried))


def library():
    """The loaded runtime library with its functions declared (loaded once)."""
    global _lib
    if _lib is None:
        lib = _load()
        # The version first: the other declarations only hold for the version they come from.
        lib.ortc_api_version.restype = ctypes.c_uint32
        lib.ortc_api_version.argtypes = []
        found = lib.ortc_api_version()
        if found != API_VERSION:
            raise OrtcError("NOT_IMPLEMENTED", "the ortc runtime library has C API version %d; "
                            "these bindings are written for version %d" % (found, API_VERSION))
        for name, (restype, argtypes) in _PROTOTYPES.items():
            try:
                function = getattr(lib, name)
            except AttributeError:
                # Additions keep the version: an older library of this version may lack one.
                raise OrtcError("NOT_IMPLEMENTED", "the ortc runtime library has no %s; it is "
                                "older than these bindings" % name) from None
            function.restype = restype
            function.argtypes = argtypes
        _lib = lib
    return _lib


def check(status):
    """Releases a returned OrtcStatus*, raising OrtcError if it was an error (not NULL)."""
    if not status:
        return
    lib = library()
    code = code_name(lib.ortc_status_code(status))
    message = (lib.ortc_status_message(status) or b"").decode("utf-8", "replace")
    lib.ortc_status_release(status)
    # The runtime's message starts with the code's name ("INVALID_ARGUMENT: ..."); OrtcError
    # carries the code apart and prints it once.
    prefix = code + ": "
    raise OrtcError(code, message[len(prefix):] if message.startswith(prefix) else message)
