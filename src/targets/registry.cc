#include "targets/registry.h"

#include "targets/c/target.h"
#include "targets/cpu/target.h"
#include "targets/reference/target.h"
#ifdef TESSEL_WITH_OPENCL
#include "targets/opencl/target.h"
#endif

namespace tessel::targets {

std::vector<std::string> TargetNames() {
#ifdef TESSEL_WITH_OPENCL
  return {"reference", "cpu", "opencl", "c"};
#else
  return {"reference", "cpu", "c"};
#endif
}

StatusOr<std::unique_ptr<Target>> MakeTarget(const TargetSpec& spec, const HostOptions& host,
                                             const TargetHostOptions& per_target) {
  if (spec.name == "reference") {
    TESSEL_ASSIGN_OR_RETURN(auto target, ReferenceTarget::Create(spec));
    return std::unique_ptr<Target>(std::move(target));
  }
  if (spec.name == "cpu") {
    TESSEL_ASSIGN_OR_RETURN(auto target, cpu::CpuTarget::Create(spec, host));
    return std::unique_ptr<Target>(std::move(target));
  }
  if (spec.name == "c") {
    TESSEL_ASSIGN_OR_RETURN(auto target, ctarget::CTarget::Create(spec));
    return std::unique_ptr<Target>(std::move(target));
  }
  if (spec.name == "opencl") {
#ifdef TESSEL_WITH_OPENCL
    TESSEL_ASSIGN_OR_RETURN(auto target,
                            opencl::OpenClTarget::Create(spec, host, per_target.opencl));
    return std::unique_ptr<Target>(std::move(target));
#else
    return Unsupported(
        "target opencl: this tessel was built without OpenCL "
        "(TESSEL_WITH_OPENCL=OFF)");
#endif
  }
  std::string names;
  for (const std::string& n : TargetNames()) names += (names.empty() ? "" : ", ") + n;
  return InvalidArgument("unknown target '" + spec.name + "' (targets: " + names + ")");
}

}  // namespace tessel::targets
