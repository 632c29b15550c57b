"""Content digests of a kcs dataset: the canonical form of docs/dataset.md
("The canonical form of a digest"), computed with h5py and numpy, so that
Python readers check what `kcs run` sealed, like kcs's own readers do.

    check(f)   -> True (every digest matches), False (none recorded: a
                  dataset from before digests, unverified); raises
                  ValueError naming the object whose digest differs
    digest(f, "/results") -> the 16-hex-digit digest of one raw object

XXH3-64 comes from the system's libxxhash (a dependency of kcs itself).
"""
import ctypes
import ctypes.util
import struct

import h5py
import numpy as np

METHOD = "kcs-canonical-1 xxh3-64"
RAW = ("/results", "/samples", "/cases", "/provenance", "/study", "/contracts")

_lib = None


def _xxh():
    global _lib
    if _lib is None:
        name = ctypes.util.find_library("xxhash") or "libxxhash.so.0"
        lib = ctypes.CDLL(name)
        lib.XXH3_createState.restype = ctypes.c_void_p
        lib.XXH3_64bits_reset.argtypes = [ctypes.c_void_p]
        lib.XXH3_64bits_update.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
        lib.XXH3_64bits_digest.argtypes = [ctypes.c_void_p]
        lib.XXH3_64bits_digest.restype = ctypes.c_uint64
        lib.XXH3_freeState.argtypes = [ctypes.c_void_p]
        _lib = lib
    return _lib


class _Hash:
    def __init__(self):
        self.lib = _xxh()
        self.st = self.lib.XXH3_createState()
        self.lib.XXH3_64bits_reset(self.st)

    def put(self, b):
        if b:
            self.lib.XXH3_64bits_update(self.st, bytes(b), len(b))

    def u64(self, v):
        self.put(struct.pack("<Q", v))

    def value(self):
        v = self.lib.XXH3_64bits_digest(self.st)
        self.lib.XXH3_freeState(self.st)
        return v


def _desc(t):
    c, size = t.get_class(), t.get_size()
    if c == h5py.h5t.INTEGER:
        return ("u" if t.get_sign() == h5py.h5t.SGN_NONE else "i") + str(size)
    if c == h5py.h5t.FLOAT:
        return "f%d" % size
    if c == h5py.h5t.STRING:
        return "vstr" if t.is_variable_str() else "S%d" % size
    if c == h5py.h5t.COMPOUND:
        return "{" + ",".join("%s:%s" % (t.get_member_name(i).decode(), _desc(t.get_member_type(i)))
                              for i in range(t.get_nmembers())) + "}"
    if c == h5py.h5t.ARRAY:
        return "a[" + ",".join(str(d) for d in t.get_array_dims()) + "]" + _desc(t.get_super())
    if c == h5py.h5t.ENUM:
        return "e" + _desc(t.get_super())
    if c == h5py.h5t.VLEN:
        return "v" + _desc(t.get_super())
    letter = {h5py.h5t.BITFIELD: "b", h5py.h5t.OPAQUE: "o", h5py.h5t.REFERENCE: "r",
              h5py.h5t.TIME: "t"}.get(c)
    if letter is None:
        raise ValueError("a datatype kcs cannot describe")
    return "%s%d" % (letter, size)


def _plain(h, arr):
    """the values of a non-compound array, in row-major order"""
    if arr.dtype.kind == "O":  # variable-length strings
        for v in arr.ravel():
            b = v.encode() if isinstance(v, str) else (bytes(v) if v is not None else b"")
            h.u64(len(b))
            h.put(b)
    elif arr.dtype.kind == "S":
        h.put(np.ascontiguousarray(arr).tobytes())
    else:
        h.put(np.ascontiguousarray(arr.astype(arr.dtype.newbyteorder("<"))).tobytes())


def _values(h, arr):
    if arr.dtype.names:
        for name in arr.dtype.names:
            col = _Hash()
            _plain(col, arr[name])
            h.u64(col.value())
    else:
        _plain(h, arr)


def _header(h, kind, name, tid, space):
    cls = space.get_simple_extent_type()
    dims = "" if cls != h5py.h5s.SIMPLE else ",".join(str(d) for d in space.shape)
    text = "%s %s%s" % (kind, name + " " if name is not None else "", _desc(tid))
    text += " %s[%s]\n" % ("null" if cls == h5py.h5s.NULL else "", dims)
    h.put(text.encode())
    return cls


def _attrs(h, obj, skip_digests=False):
    names = sorted((n.encode() if isinstance(n, str) else n for n in obj.attrs.keys()))
    for bname in names:
        if skip_digests and bname.startswith(b"digest_"):
            continue
        aid = h5py.h5a.open(obj.id, bname)
        cls = _header(h, "attr", bname.decode(), aid.get_type(), aid.get_space())
        if cls == h5py.h5s.NULL:
            continue
        arr = np.empty(aid.shape, dtype=aid.dtype)
        aid.read(arr)
        _values(h, arr)


def _object(h, obj):
    if isinstance(obj, h5py.Group):
        h.put(b"group\n")
        _attrs(h, obj)
        for bname in sorted(n.encode() for n in obj.keys()):
            name = bname.decode()
            h.put(b"link " + bname + b"\n")
            link = obj.get(name, getlink=True)
            if isinstance(link, h5py.HardLink):
                _object(h, obj[name])
            else:  # soft or external: the link value, not followed
                info = obj.id.links.get_val(bname)
                val = info if isinstance(info, bytes) else b"\0".join(info) + b"\0"
                h.put(b"soft " if isinstance(link, h5py.SoftLink) else b"external ")
                h.u64(len(val))
                h.put(val)
    elif isinstance(obj, h5py.Dataset):
        cls = _header(h, "dataset", None, obj.id.get_type(), obj.id.get_space())
        _attrs(h, obj)
        h.put(b"data\n")
        if cls != h5py.h5s.NULL and obj.size:
            _values(h, np.asarray(obj[()]))
    elif isinstance(obj, h5py.Datatype):
        h.put(("datatype " + _desc(obj.id)).encode())
    else:
        raise ValueError("not a group, dataset or datatype")


def digest(f, obj):
    """the digest of raw object obj ("/results", ...), or of the root's
    attributes other than digest_* (obj "/")"""
    h = _Hash()
    if obj == "/":
        h.put(b"root\n")
        _attrs(h, f, skip_digests=True)
    else:
        _object(h, f[obj])
    return "%016x" % h.value()


def _text(v):
    return v.decode() if isinstance(v, bytes) else str(v)


def check(f):
    """True when every recorded digest matches, False when the file has none
    (unverified); ValueError naming the object otherwise"""
    names = ["digest_" + o[1:] for o in RAW] + ["digest_root", "digest_method"]
    present = [n for n in names if n in f.attrs]
    if not present:
        return False
    missing = [n for n in names if n not in f.attrs]
    if missing:
        raise ValueError("%s: /: attribute %s is missing while other digests are there: the file "
                         "was altered after kcs sealed it" % (f.filename, missing[0]))
    if _text(f.attrs["digest_method"]) != METHOD:
        raise ValueError("%s: /: digest_method %r is not %r" % (f.filename, _text(f.attrs["digest_method"]), METHOD))
    for obj, name in list(zip(RAW, names)) + [("/", "digest_root")]:
        want = _text(f.attrs[name])
        there = obj == "/" or obj in f
        if want == "absent":
            if there:
                raise ValueError("%s: %s: present, but the digests say it was not written" % (f.filename, obj))
            continue
        if not there:
            raise ValueError("%s: %s: missing, but it was written" % (f.filename, obj))
        got = digest(f, obj)
        if got != want:
            raise ValueError("%s: %s: content digest %s differs from the recorded %s: the raw data "
                             "was changed after kcs wrote it" % (f.filename, obj, got, want))
    return True
