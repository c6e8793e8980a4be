// fhdrecon._core: the compiled half of the Python package (docs/python.md).
// The Python half (python/fhdrecon/*.py) gives it FINUFFT's and SigPy's
// conventions; this file only gathers the parts and maps the errors.
#include "common.hpp"
#include "core/error.hpp"

NB_MODULE(_core, m) {
  m.doc() = "fhdrecon's compiled core; use the fhdrecon package, not this module";
  nanobind::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const fhd::InputError& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const fhd::DeviceError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });
  fhd::py::bind_nufft(m);
  fhd::py::bind_io(m);
  fhd::py::bind_coils(m);
  fhd::py::bind_recon(m);
}
