# Cross-compiling for 64-bit ARM Linux with Debian's g++-aarch64-linux-gnu:
#   cmake -S . -B build-arm -DCMAKE_TOOLCHAIN_FILE=cmake/aarch64-linux-gnu.cmake \
#         -DJAX_ASCEND_SILU_PYTHON=OFF -DJAX_ASCEND_SILU_TESTS=ON
# ctest then runs the test binaries under qemu-aarch64 (package qemu-user),
# with the target's libraries from /usr/aarch64-linux-gnu.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(JAS_AARCH64_TRIPLE aarch64-linux-gnu CACHE STRING "Prefix of the cross tools")
set(JAS_AARCH64_SYSROOT /usr/${JAS_AARCH64_TRIPLE} CACHE PATH "Target libraries (qemu-aarch64 -L)")
set(CMAKE_C_COMPILER ${JAS_AARCH64_TRIPLE}-gcc)
set(CMAKE_CXX_COMPILER ${JAS_AARCH64_TRIPLE}-g++)
set(CMAKE_FIND_ROOT_PATH ${JAS_AARCH64_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
find_program(JAS_QEMU_AARCH64 qemu-aarch64)
if(JAS_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${JAS_QEMU_AARCH64} -L ${JAS_AARCH64_SYSROOT})
endif()
