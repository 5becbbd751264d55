// OpenCL error codes as readable messages naming the call:
//
//   TESSEL_CL_RETURN_IF_ERROR(clFinish(queue), "clFinish");
//   -> "OpenCL: clFinish failed: CL_OUT_OF_RESOURCES (-5)"
#pragma once

#include <string>

#include "core/status.h"
#include "targets/opencl/cl_include.h"

namespace tessel::opencl {

// "CL_OUT_OF_RESOURCES"; "unknown OpenCL error" for codes no header names.
const char* ClErrorName(cl_int code);

// Ok for CL_SUCCESS, else an error naming `call`, the code's name and value.
Status ClStatus(cl_int code, const std::string& call);

}  // namespace tessel::opencl

#define TESSEL_CL_RETURN_IF_ERROR(expr, call)                                                    \
  do {                                                                                           \
    const cl_int tessel_cl_code_ = (expr);                                                       \
    if (tessel_cl_code_ != CL_SUCCESS) return ::tessel::opencl::ClStatus(tessel_cl_code_, call); \
  } while (0)
