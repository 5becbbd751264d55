// _tessel: the Python binding of include/tessel/tessel.h (pybind11). The
// Pythonic layer is python/tessel/__init__.py; this file converts arrays,
// options and errors, and releases the GIL while tessel works.
//
// Rules kept here:
//   - the GIL is released around every call that compiles, prepares, runs,
//     benchmarks or tunes; no Python object is touched without it (numpy
//     arrays lent to tessel are kept alive by a reference whose release
//     takes the GIL; Python callbacks take the GIL and never throw into C++);
//   - C-contiguous, aligned numpy inputs are lent (Array::Share), others
//     copied once; outputs are returned without a copy (the array owns
//     tessel's elements through a capsule);
//   - every tessel::Error becomes one Python exception of one line, with a
//     `code` attribute (tessel.ErrorCode).
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <tessel/tessel.h>

#include <atomic>
#include <cerrno>
#include <filesystem>
#include <optional>
#include <set>
#include <sstream>

namespace py = pybind11;

namespace {

// ---------------------------------------------------------------- errors

// tessel.Error and its subclasses, made at import (never freed).
struct ErrorClasses {
  PyObject* base = nullptr;            // tessel.Error(RuntimeError)
  PyObject* type_mismatch = nullptr;   // (Error, TypeError)
  PyObject* shape_mismatch = nullptr;  // (Error, ValueError)
  PyObject* invalid_argument = nullptr;
  PyObject* not_found = nullptr;       // (Error, ValueError): a name, a device
  PyObject* file_not_found = nullptr;  // (Error, FileNotFoundError)
  PyObject* unsupported = nullptr;
  PyObject* corrupt_file = nullptr;
  PyObject* resource_exhausted = nullptr;
  PyObject* internal = nullptr;
};
ErrorClasses g_errors;

// A tessel::Error of kNotFound for a path that does not exist:
// FileNotFoundError rather than ValueError.
struct MissingFile {
  std::string message;
};

// How many inputs the binding copied (non-contiguous, unaligned, byte-swapped
// or not arrays): tests observe zero-copy lending through it.
std::atomic<int64_t> g_input_copies{0};

PyObject* ClassFor(tessel::ErrorCode code) {
  switch (code) {
    case tessel::ErrorCode::kTypeMismatch:
      return g_errors.type_mismatch;
    case tessel::ErrorCode::kShapeMismatch:
      return g_errors.shape_mismatch;
    case tessel::ErrorCode::kInvalidArgument:
      return g_errors.invalid_argument;
    case tessel::ErrorCode::kNotFound:
      return g_errors.not_found;
    case tessel::ErrorCode::kUnsupported:
      return g_errors.unsupported;
    case tessel::ErrorCode::kCorruptFile:
      return g_errors.corrupt_file;
    case tessel::ErrorCode::kResourceExhausted:
      return g_errors.resource_exhausted;
    case tessel::ErrorCode::kInternal:
      return g_errors.internal;
  }
  return g_errors.base;
}

// Only the first line: the contract is one line, and a Python traceback
// adds the rest.
std::string OneLine(const char* what) {
  std::string s = what ? what : "";
  if (const size_t nl = s.find('\n'); nl != std::string::npos) s.resize(nl);
  return s;
}

// Raises `cls(message)` with .code set (and .errno for a missing file).
void SetError(PyObject* cls, const std::string& message, tessel::ErrorCode code, bool enoent) {
  try {
    py::object inst = py::reinterpret_borrow<py::object>(cls)(message);
    inst.attr("code") = py::cast(code);
    if (enoent) inst.attr("errno") = ENOENT;
    PyErr_SetObject(cls, inst.ptr());
  } catch (...) {
    PyErr_Clear();
    PyErr_SetString(cls, message.c_str());
  }
}

void TranslateErrors(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const MissingFile& e) {
    SetError(g_errors.file_not_found, e.message, tessel::ErrorCode::kNotFound, true);
  } catch (const tessel::Error& e) {
    SetError(ClassFor(e.code()), OneLine(e.what()), e.code(), false);
  }
}

// Runs `f` (which takes `path`), turning kNotFound into MissingFile when the
// path is absent.
template <typename F>
auto WithPath(const std::string& path, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const tessel::Error& e) {
    std::error_code ec;
    if (e.code() == tessel::ErrorCode::kNotFound && !std::filesystem::exists(path, ec)) {
      throw MissingFile{OneLine(e.what())};
    }
    throw;
  }
}

// Raises a Python exception of a class of ours, from the binding's own checks.
[[noreturn]] void Raise(PyObject* cls, const std::string& message, tessel::ErrorCode code) {
  SetError(cls, message, code, false);
  throw py::error_already_set();
}

// ---------------------------------------------------------------- callbacks

// A Python callable held without touching its reference count off the GIL:
// copies of the std::function share one reference, released with the GIL.
std::function<void(const std::string&)> WrapCallback(py::object callable) {
  if (callable.is_none()) return nullptr;
  if (!PyCallable_Check(callable.ptr())) {
    throw py::type_error("expected a callable taking one str, got " +
                         std::string(py::str(py::type::of(callable).attr("__name__"))));
  }
  PyObject* raw = callable.release().ptr();
  std::shared_ptr<PyObject> held(raw, [](PyObject* o) {
    if (!Py_IsInitialized()) return;
    py::gil_scoped_acquire gil;
    Py_DECREF(o);
  });
  return [held](const std::string& line) {
    if (!Py_IsInitialized()) return;
    py::gil_scoped_acquire gil;
    try {
      py::handle(held.get())(line);
    } catch (py::error_already_set& e) {
      // Never into tessel's C++: reported as unraisable, like a failing
      // __del__.
      e.discard_as_unraisable("tessel callback");
    } catch (...) {
    }
  };
}

// ---------------------------------------------------------------- arrays

py::dtype DtypeOf(tessel::ElementType t) {
  switch (t) {
    case tessel::ElementType::kFloat32:
      return py::dtype("float32");
    case tessel::ElementType::kFloat16:
      return py::dtype("float16");
    case tessel::ElementType::kBFloat16:
      return py::dtype("uint16");  // the bits: numpy has no bfloat16
    case tessel::ElementType::kFloat64:
      return py::dtype("float64");
    case tessel::ElementType::kInt8:
      return py::dtype("int8");
    case tessel::ElementType::kInt16:
      return py::dtype("int16");
    case tessel::ElementType::kInt32:
      return py::dtype("int32");
    case tessel::ElementType::kInt64:
      return py::dtype("int64");
    case tessel::ElementType::kUInt8:
      return py::dtype("uint8");
    case tessel::ElementType::kUInt16:
      return py::dtype("uint16");
    case tessel::ElementType::kUInt32:
      return py::dtype("uint32");
    case tessel::ElementType::kUInt64:
      return py::dtype("uint64");
    case tessel::ElementType::kBool:
      return py::dtype("bool");
  }
  throw py::value_error("unknown tessel element type");
}

std::string ShapeText(const std::vector<int64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  if (shape.size() == 1) s += ",";
  return s + ")";
}

std::vector<int64_t> ShapeOf(const py::array& a) {
  return std::vector<int64_t>(a.shape(), a.shape() + a.ndim());
}

std::string DtypeName(const py::array& a) { return py::str(a.dtype()); }

// The numpy view of a tessel array: no copy; a capsule owns a copy of the
// Array (which shares its elements) as long as numpy needs it.
py::array ToNumpy(const tessel::Array& array) {
  auto* kept = new tessel::Array(array);
  py::capsule owner(kept, [](void* p) { delete static_cast<tessel::Array*>(p); });
  // Strides given: pybind11 before 2.12 computes them from numpy 1's layout.
  const std::vector<int64_t>& shape = array.shape();
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t stride = static_cast<py::ssize_t>(tessel::ElementSize(array.type()));
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= static_cast<py::ssize_t>(shape[i]);
  }
  return py::array(DtypeOf(array.type()), shape, strides, kept->raw_data(), owner);
}

// A reference to a Python object, released with the GIL wherever the last
// copy of the tessel::Array holding it dies.
std::shared_ptr<void> KeepAlive(py::handle h) {
  h.inc_ref();
  return std::shared_ptr<void>(h.ptr(), [](void* p) {
    if (!Py_IsInitialized()) return;
    py::gil_scoped_acquire gil;
    Py_DECREF(static_cast<PyObject*>(p));
  });
}

// Kind and size through Python attributes: pybind11 before 2.12 reads them
// from numpy 1's struct layout, wrong under numpy 2.
bool SameDtype(const py::dtype& a, const py::dtype& b) {
  return a.attr("kind").cast<std::string>() == b.attr("kind").cast<std::string>() &&
         a.attr("itemsize").cast<int64_t>() == b.attr("itemsize").cast<int64_t>();
}

const tessel::TensorInfo* FindInfo(const std::vector<tessel::TensorInfo>& infos,
                                   const std::string& name) {
  for (const auto& i : infos)
    if (i.name == name) return &i;
  return nullptr;
}

std::string NamesText(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", '" : "'") + names[i] + "'";
  return s;
}

std::string ExpectedNames(const std::vector<tessel::TensorInfo>& infos) {
  std::vector<std::string> n;
  for (const auto& i : infos) n.push_back(i.name);
  return NamesText(n);
}

// The keys of a dict of arrays by name, each a str; TypeError otherwise.
std::vector<std::pair<std::string, py::handle>> Items(const py::handle& obj, const char* what) {
  if (!PyDict_Check(obj.ptr())) {
    throw py::type_error(std::string(what) + " must be a dict of numpy arrays by name, got " +
                         std::string(py::str(py::type::of(obj).attr("__name__"))));
  }
  std::vector<std::pair<std::string, py::handle>> items;
  for (auto kv : py::reinterpret_borrow<py::dict>(obj)) {
    if (!PyUnicode_Check(kv.first.ptr())) {
      throw py::type_error(std::string(what) + " keys must be str names, got " +
                           std::string(py::str(py::type::of(kv.first).attr("__name__"))));
    }
    items.emplace_back(kv.first.cast<std::string>(), kv.second);
  }
  return items;
}

// Checks names both ways: ValueError naming the unknown and missing ones.
void CheckNames(const std::vector<std::pair<std::string, py::handle>>& items,
                const std::vector<tessel::TensorInfo>& infos, const char* what, bool all_required) {
  std::vector<std::string> unknown, missing;
  std::set<std::string> given;
  for (const auto& [name, _] : items) {
    given.insert(name);
    if (!FindInfo(infos, name)) unknown.push_back(name);
  }
  if (all_required)
    for (const auto& i : infos)
      if (!given.count(i.name)) missing.push_back(i.name);
  if (unknown.empty() && missing.empty()) return;
  std::string msg;
  if (!unknown.empty()) msg += "unknown " + std::string(what) + " " + NamesText(unknown);
  if (!missing.empty())
    msg += (msg.empty() ? "missing " : "; missing ") + std::string(what) + " " + NamesText(missing);
  msg += " (the model's " + std::string(what) + "s: " + ExpectedNames(infos) + ")";
  Raise(g_errors.invalid_argument, msg, tessel::ErrorCode::kInvalidArgument);
}

void CheckShape(const char* what, const std::string& name, const std::vector<int64_t>& given,
                const std::vector<int64_t>& expected) {
  bool ok = given.size() == expected.size();
  for (size_t i = 0; ok && i < given.size(); ++i) ok = expected[i] < 0 || expected[i] == given[i];
  if (!ok) {
    Raise(g_errors.shape_mismatch,
          std::string(what) + " '" + name + "': shape " + ShapeText(given) + " given, " +
              ShapeText(expected) + " expected",
          tessel::ErrorCode::kShapeMismatch);
  }
}

void CheckDtype(const char* what, const std::string& name, const py::array& a,
                const tessel::TensorInfo& info) {
  if (!SameDtype(a.dtype(), DtypeOf(info.type))) {
    Raise(g_errors.type_mismatch,
          std::string(what) + " '" + name + "': dtype " + DtypeName(a) + " given, " +
              tessel::ElementTypeName(info.type) + " expected",
          tessel::ErrorCode::kTypeMismatch);
  }
}

// The feeds as tessel arrays. ndarrays must have the input's dtype; other
// objects (lists, scalars) are converted to it. C-contiguous aligned arrays
// in native byte order are lent, others copied once.
tessel::NamedArrays Feeds(const py::handle& feeds, const std::vector<tessel::TensorInfo>& infos) {
  auto items = Items(feeds, "feeds");
  CheckNames(items, infos, "input", true);
  tessel::NamedArrays out;
  for (const auto& [name, obj] : items) {
    const tessel::TensorInfo& info = *FindInfo(infos, name);
    const py::dtype want = DtypeOf(info.type);
    py::array a;
    if (py::isinstance<py::array>(obj)) {
      a = py::reinterpret_borrow<py::array>(obj);
      CheckDtype("input", name, a, info);
    } else {
      // numpy's own conversion error (a ValueError or TypeError) stands.
      a = py::array(py::module_::import("numpy").attr("asarray")(obj, want));
    }
    const int want_flags = int(py::array::c_style) | int(py::detail::npy_api::NPY_ARRAY_ALIGNED_);
    const bool native = a.dtype().attr("isnative").cast<bool>();
    if ((a.flags() & want_flags) != want_flags || !native) {
      a = py::array(py::module_::import("numpy").attr("ascontiguousarray")(a, want));
      ++g_input_copies;
    }
    CheckShape("input", name, ShapeOf(a), info.shape);
    out.emplace(name, tessel::Array::Share(info.type, ShapeOf(a), const_cast<void*>(a.data()),
                                           KeepAlive(a)));
  }
  return out;
}

// The caller's output arrays, written in place: of the output's dtype and
// shape, C-contiguous, aligned and writeable (else TypeError / ValueError).
tessel::NamedArrays Destinations(const std::vector<std::pair<std::string, py::handle>>& items,
                                 const std::vector<tessel::TensorInfo>& infos) {
  CheckNames(items, infos, "output", false);
  tessel::NamedArrays out;
  for (const auto& [name, obj] : items) {
    if (!py::isinstance<py::array>(obj)) {
      throw py::type_error("output '" + name + "' must be a numpy array, got " +
                           std::string(py::str(py::type::of(obj).attr("__name__"))));
    }
    auto a = py::reinterpret_borrow<py::array>(obj);
    const tessel::TensorInfo& info = *FindInfo(infos, name);
    CheckDtype("output", name, a, info);
    CheckShape("output", name, ShapeOf(a), info.shape);
    const int want_flags = int(py::array::c_style) | int(py::detail::npy_api::NPY_ARRAY_ALIGNED_) |
                           int(py::detail::npy_api::NPY_ARRAY_WRITEABLE_);
    if ((a.flags() & want_flags) != want_flags || !a.dtype().attr("isnative").cast<bool>()) {
      Raise(g_errors.invalid_argument,
            "output '" + name +
                "': tessel writes in place into a C-contiguous, aligned, writeable array in "
                "native byte order (np.empty(shape, dtype) is one)",
            tessel::ErrorCode::kInvalidArgument);
    }
    out.emplace(name, tessel::Array::Share(info.type, ShapeOf(a), a.mutable_data(), KeepAlive(a)));
  }
  return out;
}

// ---------------------------------------------------------------- sessions

py::object Run(tessel::Session& session, const py::handle& feeds, const py::handle& outputs) {
  tessel::NamedArrays inputs = Feeds(feeds, session.inputs());
  if (outputs.is_none()) {
    tessel::NamedArrays result;
    {
      py::gil_scoped_release release;
      result = session.Run(inputs);
    }
    py::dict d;
    for (const auto& [name, array] : result) d[py::str(name)] = ToNumpy(array);
    return d;
  }
  auto items = Items(outputs, "outputs");
  tessel::NamedArrays dest = Destinations(items, session.outputs());
  {
    py::gil_scoped_release release;
    session.Run(inputs, dest);
  }
  py::dict d;
  for (const auto& [name, obj] : items) d[py::str(name)] = obj;
  return d;
}

}  // namespace

PYBIND11_MODULE(_tessel, m) {
  m.doc() = "tessel's C++ API (include/tessel/tessel.h); use the tessel package";
  m.attr("__version__") = tessel::Version();

  py::enum_<tessel::ErrorCode>(m, "ErrorCode")
      .value("INVALID_ARGUMENT", tessel::ErrorCode::kInvalidArgument)
      .value("TYPE_MISMATCH", tessel::ErrorCode::kTypeMismatch)
      .value("SHAPE_MISMATCH", tessel::ErrorCode::kShapeMismatch)
      .value("UNSUPPORTED", tessel::ErrorCode::kUnsupported)
      .value("NOT_FOUND", tessel::ErrorCode::kNotFound)
      .value("CORRUPT_FILE", tessel::ErrorCode::kCorruptFile)
      .value("RESOURCE_EXHAUSTED", tessel::ErrorCode::kResourceExhausted)
      .value("INTERNAL", tessel::ErrorCode::kInternal)
      .def_property_readonly("description",
                             [](tessel::ErrorCode c) { return tessel::ErrorCodeName(c); });

  auto make = [&](const char* name, py::handle bases, const char* doc) {
    PyObject* cls = PyErr_NewExceptionWithDoc((std::string("tessel.") + name).c_str(), doc,
                                              bases.ptr(), nullptr);
    if (!cls) throw py::error_already_set();
    m.add_object(name, py::handle(cls));  // steals nothing: add_object increfs
    return cls;
  };
  g_errors.base = make("Error", PyExc_RuntimeError,
                       "A tessel failure; .code (tessel.ErrorCode) says which kind.");
  auto with = [](PyObject* a, PyObject* b) { return py::make_tuple(py::handle(a), py::handle(b)); };
  g_errors.type_mismatch = make("TypeMismatchError", with(g_errors.base, PyExc_TypeError),
                                "An array's dtype is not the one expected.");
  g_errors.shape_mismatch = make("ShapeMismatchError", with(g_errors.base, PyExc_ValueError),
                                 "An array's shape is not the one expected.");
  g_errors.invalid_argument = make("InvalidArgumentError", with(g_errors.base, PyExc_ValueError),
                                   "An argument is wrong: an option, a name, a value.");
  g_errors.not_found = make("NotFoundError", with(g_errors.base, PyExc_ValueError),
                            "An input, output or device that does not exist.");
  g_errors.file_not_found = make("MissingFileError", with(g_errors.base, PyExc_FileNotFoundError),
                                 "A file that does not exist.");
  g_errors.unsupported =
      make("UnsupportedError", g_errors.base, "Valid, but tessel (or this target) cannot do it.");
  g_errors.corrupt_file =
      make("CorruptFileError", g_errors.base, "A truncated or damaged model or cache file.");
  g_errors.resource_exhausted =
      make("ResourceExhaustedError", g_errors.base, "A memory pool or limit too small.");
  g_errors.internal =
      make("InternalError", g_errors.base, "The environment failed (I/O, a driver), or a bug.");
  py::register_exception_translator(&TranslateErrors);

  // ------------------------------------------------------------ options
  py::class_<tessel::CpuOptions>(m, "CpuOptions")
      .def(py::init<>())
      .def_readwrite("isa", &tessel::CpuOptions::isa)
      .def_readwrite("threads", &tessel::CpuOptions::threads)
      .def_readwrite("winograd", &tessel::CpuOptions::winograd);
  py::class_<tessel::OpenClOptions>(m, "OpenClOptions")
      .def(py::init<>())
      .def_readwrite("device", &tessel::OpenClOptions::device)
      .def_readwrite("tuning_cache", &tessel::OpenClOptions::tuning_cache)
      .def_readwrite("tune_online", &tessel::OpenClOptions::tune_online)
      .def_readwrite("queue_window", &tessel::OpenClOptions::queue_window);
  py::class_<tessel::ReferenceOptions>(m, "ReferenceOptions").def(py::init<>());

  py::class_<tessel::PoolOptions>(m, "Pool")
      .def(py::init([](std::string name, int64_t size_limit_bytes, bool read_only) {
             return tessel::PoolOptions{std::move(name), size_limit_bytes, read_only};
           }),
           py::arg("name"), py::arg("size_limit_bytes") = 0, py::arg("read_only") = false)
      .def_readwrite("name", &tessel::PoolOptions::name)
      .def_readwrite("size_limit_bytes", &tessel::PoolOptions::size_limit_bytes)
      .def_readwrite("read_only", &tessel::PoolOptions::read_only)
      .def("__repr__", [](const tessel::PoolOptions& p) {
        return "Pool(name='" + p.name +
               "', size_limit_bytes=" + std::to_string(p.size_limit_bytes) +
               ", read_only=" + (p.read_only ? "True" : "False") + ")";
      });

  py::class_<tessel::CompileOptions>(m, "CompileOptions")
      .def(py::init<>())
      .def_readwrite("input_shapes", &tessel::CompileOptions::input_shapes)
      .def_readwrite("fusion", &tessel::CompileOptions::fusion)
      .def_readwrite("planner", &tessel::CompileOptions::planner)
      .def_readwrite("pools", &tessel::CompileOptions::pools)
      .def_readwrite("planner_time_limit_seconds",
                     &tessel::CompileOptions::planner_time_limit_seconds)
      .def_readwrite("max_memory_bytes", &tessel::CompileOptions::max_memory_bytes)
      .def("set_progress", [](tessel::CompileOptions& o, py::object cb) {
        o.progress = WrapCallback(std::move(cb));
      });

  py::class_<tessel::SessionOptions>(m, "SessionOptions")
      .def(py::init<>())
      .def_readwrite("profile", &tessel::SessionOptions::profile)
      .def_readwrite("threads", &tessel::SessionOptions::threads)
      .def_readwrite("cache_dir", &tessel::SessionOptions::cache_dir)
      .def("set_note",
           [](tessel::SessionOptions& o, py::object cb) { o.note = WrapCallback(std::move(cb)); });

  py::class_<tessel::TuneOptions>(m, "TuneOptions")
      .def(py::init<>())
      .def_readwrite("strategy", &tessel::TuneOptions::strategy)
      .def_readwrite("budget_seconds", &tessel::TuneOptions::budget_seconds)
      .def_readwrite("rounds", &tessel::TuneOptions::rounds)
      .def_readwrite("repeat", &tessel::TuneOptions::repeat);

  // ------------------------------------------------------------ results
  py::class_<tessel::TensorInfo>(m, "TensorInfo")
      .def_readonly("name", &tessel::TensorInfo::name)
      .def_property_readonly("dtype", [](const tessel::TensorInfo& t) { return DtypeOf(t.type); })
      .def_property_readonly(
          "type", [](const tessel::TensorInfo& t) { return tessel::ElementTypeName(t.type); })
      .def_property_readonly("shape",
                             [](const tessel::TensorInfo& t) {
                               py::tuple s(t.shape.size());
                               for (size_t i = 0; i < t.shape.size(); ++i) s[i] = t.shape[i];
                               return s;
                             })
      .def("__repr__", [](const tessel::TensorInfo& t) {
        return "TensorInfo(name='" + t.name + "', dtype=" + tessel::ElementTypeName(t.type) +
               ", shape=" + ShapeText(t.shape) + ")";
      });

  py::class_<tessel::MemoryPlan::Pool>(m, "PlanPool")
      .def_readonly("name", &tessel::MemoryPlan::Pool::name)
      .def_readonly("size_bytes", &tessel::MemoryPlan::Pool::size_bytes)
      .def_readonly("read_only", &tessel::MemoryPlan::Pool::read_only)
      .def("__repr__", [](const tessel::MemoryPlan::Pool& p) {
        return "PlanPool(name='" + p.name + "', size_bytes=" + std::to_string(p.size_bytes) +
               (p.read_only ? ", read_only=True)" : ")");
      });
  py::class_<tessel::MemoryPlan::Buffer>(m, "PlanBuffer")
      .def_readonly("name", &tessel::MemoryPlan::Buffer::name)
      .def_readonly("kind", &tessel::MemoryPlan::Buffer::kind)
      .def_readonly("pool", &tessel::MemoryPlan::Buffer::pool)
      .def_readonly("offset_bytes", &tessel::MemoryPlan::Buffer::offset_bytes)
      .def_readonly("size_bytes", &tessel::MemoryPlan::Buffer::size_bytes)
      .def_readonly("first_step", &tessel::MemoryPlan::Buffer::first_step)
      .def_readonly("last_step", &tessel::MemoryPlan::Buffer::last_step)
      .def("__repr__", [](const tessel::MemoryPlan::Buffer& b) {
        return "PlanBuffer(name='" + b.name + "', kind='" + b.kind + "', pool='" + b.pool +
               "', offset_bytes=" + std::to_string(b.offset_bytes) +
               ", size_bytes=" + std::to_string(b.size_bytes) +
               ", steps=" + std::to_string(b.first_step) + ".." + std::to_string(b.last_step) + ")";
      });
  py::class_<tessel::MemoryPlan>(m, "MemoryPlan")
      .def_readonly("algorithm", &tessel::MemoryPlan::algorithm)
      .def_readonly("pools", &tessel::MemoryPlan::pools)
      .def_readonly("buffers", &tessel::MemoryPlan::buffers)
      .def_readonly("workspace_bytes", &tessel::MemoryPlan::workspace_bytes)
      .def_readonly("lower_bound_bytes", &tessel::MemoryPlan::lower_bound_bytes)
      .def_readonly("svg_text", &tessel::MemoryPlan::svg);

  py::class_<tessel::ProfileRow>(m, "ProfileRow")
      .def_readonly("op_type", &tessel::ProfileRow::op_type)
      .def_readonly("kernel", &tessel::ProfileRow::kernel)
      .def_readonly("nodes", &tessel::ProfileRow::nodes)
      .def_readonly("ms", &tessel::ProfileRow::ms)
      .def_readonly("slow", &tessel::ProfileRow::slow)
      .def("__repr__", [](const tessel::ProfileRow& r) {
        std::ostringstream s;
        s << "ProfileRow(op_type='" << r.op_type << "', kernel='" << r.kernel
          << "', nodes=" << r.nodes << ", ms=" << r.ms << (r.slow ? ", slow=True)" : ")");
        return s.str();
      });
  py::class_<tessel::SessionStats>(m, "SessionStats")
      .def_readonly("workspace_bytes", &tessel::SessionStats::workspace_bytes)
      .def_readonly("packed_weight_bytes", &tessel::SessionStats::packed_weight_bytes)
      .def_readonly("threads", &tessel::SessionStats::threads)
      .def("__repr__", [](const tessel::SessionStats& s) {
        return "SessionStats(workspace_bytes=" + std::to_string(s.workspace_bytes) +
               ", packed_weight_bytes=" + std::to_string(s.packed_weight_bytes) +
               ", threads=" + std::to_string(s.threads) + ")";
      });
  py::class_<tessel::BenchResult>(m, "BenchResult")
      .def_readonly("runs", &tessel::BenchResult::runs)
      .def_readonly("min_ms", &tessel::BenchResult::min_ms)
      .def_readonly("median_ms", &tessel::BenchResult::median_ms)
      .def_readonly("mean_ms", &tessel::BenchResult::mean_ms)
      .def("__repr__", [](const tessel::BenchResult& b) {
        std::ostringstream s;
        s << "BenchResult(runs=" << b.runs << ", min_ms=" << b.min_ms
          << ", median_ms=" << b.median_ms << ", mean_ms=" << b.mean_ms << ")";
        return s.str();
      });
  py::class_<tessel::TuneResult>(m, "TuneResult")
      .def_readonly("device", &tessel::TuneResult::device)
      .def_readonly("kernels", &tessel::TuneResult::kernels)
      .def_readonly("launches", &tessel::TuneResult::launches)
      .def_readonly("default_ms", &tessel::TuneResult::default_ms)
      .def_readonly("tuned_ms", &tessel::TuneResult::tuned_ms)
      .def_readonly("kept_tuned", &tessel::TuneResult::kept_tuned)
      .def_readonly("cache", &tessel::TuneResult::cache)
      .def_readonly("report", &tessel::TuneResult::report)
      .def("__repr__", [](const tessel::TuneResult& t) { return t.report; });
  py::class_<tessel::DeviceInfo>(m, "DeviceInfo")
      .def_readonly("id", &tessel::DeviceInfo::id)
      .def_readonly("name", &tessel::DeviceInfo::name)
      .def_readonly("platform", &tessel::DeviceInfo::platform)
      .def_readonly("vendor", &tessel::DeviceInfo::vendor)
      .def_readonly("driver", &tessel::DeviceInfo::driver)
      .def_readonly("version", &tessel::DeviceInfo::version)
      .def_readonly("gpu", &tessel::DeviceInfo::gpu)
      .def_readonly("compute_units", &tessel::DeviceInfo::compute_units)
      .def_readonly("global_memory_bytes", &tessel::DeviceInfo::global_memory_bytes)
      .def("__repr__", [](const tessel::DeviceInfo& d) {
        return "DeviceInfo(id='" + d.id + "', name='" + d.name +
               "', gpu=" + (d.gpu ? "True" : "False") + ")";
      });
  py::class_<tessel::InstancePlan>(m, "InstancePlan")
      .def_readonly("algorithm", &tessel::InstancePlan::algorithm)
      .def_readonly("pool_bytes", &tessel::InstancePlan::pool_bytes)
      .def_readonly("lower_bound_bytes", &tessel::InstancePlan::lower_bound_bytes)
      .def_readonly("buffers", &tessel::InstancePlan::buffers)
      .def_readonly("offsets", &tessel::InstancePlan::offsets)
      .def_readonly("svg_text", &tessel::InstancePlan::svg)
      .def("__repr__", [](const tessel::InstancePlan& p) {
        return "InstancePlan(algorithm='" + p.algorithm +
               "', pool_bytes=" + std::to_string(p.pool_bytes) +
               ", lower_bound_bytes=" + std::to_string(p.lower_bound_bytes) +
               ", buffers=" + std::to_string(p.buffers) + ")";
      });
  py::class_<tessel::CheckResult>(m, "CheckResult")
      .def_readonly("data_set", &tessel::CheckResult::data_set)
      .def_readonly("output", &tessel::CheckResult::output)
      .def_readonly("ok", &tessel::CheckResult::ok)
      .def_readonly("max_abs_error", &tessel::CheckResult::max_abs_error)
      .def_readonly("max_rel_error", &tessel::CheckResult::max_rel_error)
      .def_readonly("mismatches", &tessel::CheckResult::mismatches)
      .def_readonly("problem", &tessel::CheckResult::problem)
      .def("__repr__", [](const tessel::CheckResult& r) {
        std::ostringstream s;
        s << "CheckResult(data_set='" << r.data_set << "', output='" << r.output
          << "', ok=" << (r.ok ? "True" : "False") << ", max_abs_error=" << r.max_abs_error
          << ", max_rel_error=" << r.max_rel_error << ", mismatches=" << r.mismatches
          << (r.problem.empty() ? "" : ", problem='" + r.problem + "'") << ")";
        return s.str();
      });
  py::class_<tessel::CheckReport>(m, "CheckReport")
      .def_readonly("ok", &tessel::CheckReport::ok)
      .def_readonly("target", &tessel::CheckReport::target)
      .def_readonly("results", &tessel::CheckReport::results)
      .def("__bool__", [](const tessel::CheckReport& r) { return r.ok; })
      .def("__repr__", [](const tessel::CheckReport& r) {
        return "CheckReport(ok=" + std::string(r.ok ? "True" : "False") + ", target='" + r.target +
               "', results=" + std::to_string(r.results.size()) + ")";
      });

  // ------------------------------------------------------------ models
  py::class_<tessel::Session>(m, "Session")
      .def("run", &Run, py::arg("feeds"), py::arg("outputs") = py::none())
      .def_property_readonly("inputs", [](const tessel::Session& x) { return x.inputs(); })
      .def_property_readonly("outputs", [](const tessel::Session& x) { return x.outputs(); })
      .def("describe", &tessel::Session::Describe)
      .def_property_readonly("stats", &tessel::Session::stats)
      .def("profile", &tessel::Session::Profile)
      .def("profile_report", &tessel::Session::ProfileReport)
      .def("benchmark", &tessel::Session::Benchmark, py::arg("warmup") = 5, py::arg("repeat") = 50,
           py::call_guard<py::gil_scoped_release>())
      .def(
          "tune",
          [](tessel::Session& s, const tessel::TuneOptions& options) {
            tessel::TuneOptions copy = options;
            py::gil_scoped_release release;
            return s.Tune(copy);
          },
          py::arg("options"));

  py::class_<tessel::Model>(m, "Model")
      .def_property_readonly("inputs", [](const tessel::Model& x) { return x.inputs(); })
      .def_property_readonly("outputs", [](const tessel::Model& x) { return x.outputs(); })
      .def_property_readonly("target", [](const tessel::Model& x) { return x.target(); })
      .def_property_readonly("target_options",
                             [](const tessel::Model& x) { return x.target_options(); })
      .def_property_readonly("target_description", &tessel::Model::target_description)
      .def_property_readonly("source", [](const tessel::Model& x) { return x.source(); })
      .def("plan", &tessel::Model::plan, py::call_guard<py::gil_scoped_release>())
      .def("summary", &tessel::Model::Summary, py::call_guard<py::gil_scoped_release>())
      .def(
          "save",
          [](const tessel::Model& model, const std::string& path) {
            py::gil_scoped_release release;
            model.Save(path);
          },
          py::arg("path"))
      .def("serialize",
           [](const tessel::Model& model) {
             std::string bytes;
             {
               py::gil_scoped_release release;
               bytes = model.Serialize();
             }
             return py::bytes(bytes);
           })
      .def(
          "prepare",
          [](const tessel::Model& model, const tessel::SessionOptions& options) {
            tessel::SessionOptions copy = options;
            std::optional<tessel::Session> session;
            {
              py::gil_scoped_release release;
              session.emplace(model.Prepare(copy));
            }
            return std::move(*session);
          },
          py::arg("options"));

  m.def(
      "compile",
      [](const std::string& path, const tessel::TargetOptions& target,
         const tessel::CompileOptions& options) {
        tessel::CompileOptions copy = options;
        std::optional<tessel::Model> model;
        {
          py::gil_scoped_release release;
          WithPath(path, [&] { model.emplace(tessel::Compile(path, target, copy)); });
        }
        return std::move(*model);
      },
      py::arg("path"), py::arg("target"), py::arg("options"));
  m.def(
      "compile_bytes",
      [](const py::bytes& onnx, const tessel::TargetOptions& target,
         const tessel::CompileOptions& options) {
        std::string bytes = onnx;
        tessel::CompileOptions copy = options;
        std::optional<tessel::Model> model;
        {
          py::gil_scoped_release release;
          model.emplace(tessel::CompileBytes(bytes, target, copy));
        }
        return std::move(*model);
      },
      py::arg("onnx"), py::arg("target"), py::arg("options"));
  m.def(
      "load",
      [](const std::string& path) {
        std::optional<tessel::Model> model;
        {
          py::gil_scoped_release release;
          WithPath(path, [&] { model.emplace(tessel::Load(path)); });
        }
        return std::move(*model);
      },
      py::arg("path"));
  m.def(
      "deserialize",
      [](const py::bytes& data) {
        std::string bytes = data;
        std::optional<tessel::Model> model;
        {
          py::gil_scoped_release release;
          model.emplace(tessel::Deserialize(bytes));
        }
        return std::move(*model);
      },
      py::arg("data"));

  // ------------------------------------------------------------ tools
  m.def("targets", &tessel::Targets);
  m.def("devices", &tessel::Devices, py::call_guard<py::gil_scoped_release>());
  m.def("planner_algorithms", &tessel::PlannerAlgorithms);
  m.def(
      "plan_instance",
      [](const std::string& path, const std::string& algorithm, double time_limit) {
        py::gil_scoped_release release;
        return WithPath(path, [&] { return tessel::PlanInstance(path, algorithm, time_limit); });
      },
      py::arg("path"), py::arg("algorithm") = "auto", py::arg("time_limit_seconds") = 0.0);
  m.def(
      "check",
      [](const std::string& dir, const tessel::TargetOptions& target, double rtol, double atol) {
        py::gil_scoped_release release;
        return WithPath(dir, [&] { return tessel::Check(dir, target, rtol, atol); });
      },
      py::arg("dir"), py::arg("target"), py::arg("rtol") = 1e-3, py::arg("atol") = 1e-4);
  m.def(
      "read_tensor",
      [](const std::string& path) {
        std::optional<tessel::Array> array;
        {
          py::gil_scoped_release release;
          WithPath(path, [&] { array.emplace(tessel::ReadTensorFile(path)); });
        }
        return ToNumpy(*array);
      },
      py::arg("path"));
  m.def(
      "_input_copies", [] { return g_input_copies.load(); },
      "How many inputs the binding has copied (not lent) so far: for tests.");
}
