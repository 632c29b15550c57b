/* Every backend kcs knows, whether this build compiled it in or not: the
 * one list of their names. X(name, kind, native_gpu):
 *   kind        BUILTIN (linked into the library) or MODULE (the loadable
 *               lib/kcs/libkcs_backend_<name>.so, dlopened on first use);
 *   native_gpu  1 for a vendor's own GPU runtime, which automatic placement
 *               prefers over the same GPU's OpenCL ICD and over the CPU.
 * The study language (study.c), placement (placement.c) and the registry
 * (backends/registry.c) read it; which of them a build has comes from
 * CMake (kcs_backend_register/_module/_skip in the backend's folder), which
 * generates KCS_BUILT_<name> for every name here. Adding a backend: one
 * line here, its folder, and its add_subdirectory() in backends/. */
#ifndef KCS_BACKEND_NAMES_H
#define KCS_BACKEND_NAMES_H

#define KCS_BACKEND_LIST(X)                                                                    \
    X(cpu, BUILTIN, 0)                                                                         \
    X(opencl, MODULE, 0)                                                                       \
    X(cuda, MODULE, 1)                                                                         \
    X(hip, MODULE, 1)                                                                          \
    X(level_zero, MODULE, 1)                                                                   \
    X(plugin, BUILTIN, 0)

#endif
