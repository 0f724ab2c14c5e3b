"""Generated CUDA kernels for the direct and Winograd dataflows: build, emulate, measure.

Modules, in pipeline order:

* :mod:`kernels.config` -- ``DirectConfig`` / ``WinogradConfig``, on-chip sizes, ``check_config``;
* :mod:`kernels.limits` -- the hardware rules (grid, registers, occupancy) every check imports;
* :mod:`kernels.thread_block` -- the default thread block of a config given only tiles;
* :mod:`kernels.codegen_direct`, :mod:`kernels.codegen_winograd`, :mod:`kernels.generate`
  -- a config to CUDA C source (compile-time sizes, LDG/STG macros, :mod:`kernels.source`);
* :mod:`kernels.nvcc` (+ :mod:`kernels.nvrtc`) -- cubins, ptxas resource usage, a compile cache;
* :mod:`kernels.emulator` with ``cuda_emu.h`` -- the same source on the CPU, counting
  global loads and stores and floating-point operations;
* :mod:`kernels.reference` -- the float64 numpy convolution and fp32 error bounds;
* :mod:`kernels.verify` -- emulate and check numerics, exact traffic, flops and the lower bound;
* :mod:`kernels.analytic`, :mod:`kernels.perf_model` -- a config's analytic features and the
  performance model's time estimate (the ``model`` measurer's numbers);
* :mod:`kernels.gpu` -- pycuda timing on a real GPU (optional extra ``cuda``);
* :mod:`kernels.status` -- the one status vocabulary every compile and measurement record uses.

Nothing heavy is imported here; import the module you need.
"""
