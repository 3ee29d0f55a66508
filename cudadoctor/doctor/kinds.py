"""The kinds of image family (doctor/family.py's ``Family.kind``), apart from the interface itself:
the families name their kind at run time, and the interface is read by type checkers and tests,
so a check imports no ``typing`` for it."""

WHEEL_IMAGE = "wheel-image"  # PyTorch's wheels and the images built from them (pytorch/pytorch, pytorch-cuda)
NGC = "ngc"  # NVIDIA's NGC PyTorch containers: one image per month
