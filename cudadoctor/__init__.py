"""cudadoctor: will a CUDA PyTorch workload run on this host, and which image or wheel fits it?"""

__version__ = "0.1.0"
